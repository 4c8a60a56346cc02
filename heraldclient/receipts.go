package heraldclient

import (
	"context"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// RecordReceipts reports what happened to messages on the device (POST
// /v1/receipts): each receipt names a push by its data's messageId and
// says it was delivered, opened, dismissed or clicked. With a user token
// only that user's messages are recorded (another user's, like one Herald
// does not have, is answered not_found); a key needs receipts:write. A
// receipt already recorded is answered duplicate, so the call is safe to
// retry.
func (c *Client) RecordReceipts(ctx context.Context, receipts ...heraldtype.Receipt) (heraldtype.ReceiptsResult, error) {
	if receipts == nil {
		receipts = []heraldtype.Receipt{}
	}
	body := struct {
		Receipts []heraldtype.Receipt `json:"receipts"`
	}{receipts}
	var out heraldtype.ReceiptsResult
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/receipts", body: body, out: &out, safe: true})
	return out, err
}
