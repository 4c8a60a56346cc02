package herald

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
)

// GetDelivery returns one delivery with its attempts, oldest first: its
// timeline (GET /v1/deliveries/{id}; the dead-letter list hands out these
// ids, S0.4). ENOTFOUND if there is none; EINVALID on id if it is not
// positive.
func (c *Client) GetDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	if id <= 0 {
		return heraldtype.Delivery{}, heraldtype.FieldErrorf("id", "must be a positive delivery id")
	}
	return c.store.GetDelivery(ctx, id)
}
