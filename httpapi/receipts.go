package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// receiptsBody is the body of POST /v1/receipts. A receipt's time is
// read here rather than by encoding/json, so that a malformed one is
// reported against its own field (receipts[3].at).
type receiptsBody struct {
	Receipts []receiptBody `json:"receipts"`
}

type receiptBody struct {
	MessageID string  `json:"message_id"`
	Event     string  `json:"event"`
	At        *string `json:"at"`
	Action    string  `json:"action"`
}

// recordReceipts: POST /v1/receipts {"receipts":[{"message_id","event",
// "at","action"}]} records what happened to messages on the user's side
// (issue 35 item 1). A user token reports its own user's messages; a key
// with receipts:write any user's. 200 with each receipt's result, in
// order, and the counts: a message Herald does not have — or another
// user's — is not_found, never an error.
func (s *Server) recordReceipts(w http.ResponseWriter, r *http.Request) error {
	var in receiptsBody
	if err := s.decodeJSON(w, r, &in, bodySpec{}); err != nil {
		return err
	}
	rs := make([]heraldtype.Receipt, len(in.Receipts))
	for i, b := range in.Receipts {
		rs[i] = heraldtype.Receipt{MessageID: b.MessageID, Event: heraldtype.ReceiptEvent(b.Event), Action: b.Action}
		if b.At != nil {
			at, err := time.Parse(time.RFC3339Nano, *b.At)
			if err != nil {
				return heraldtype.FieldErrorf(fmt.Sprintf("receipts[%d].at", i), "must be an RFC 3339 time such as 2026-03-14T15:09:26Z")
			}
			rs[i].At = at
		}
	}
	var res heraldtype.ReceiptsResult
	var err error
	if user := principalFrom(r.Context()).userID; user != "" {
		res, err = s.client.RecordOwnReceipts(r.Context(), user, rs)
	} else {
		res, err = s.client.RecordReceipts(r.Context(), rs)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
