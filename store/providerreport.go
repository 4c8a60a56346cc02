package store

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// ProviderReport is what a provider said about a delivery after accepting
// it: a Twilio status callback reporting the SMS delivered, undelivered or
// failed (issue 21 item 4). Store.RecordProviderReport appends it to the
// delivery's timeline as an OutcomeProviderReport attempt row and moves
// nothing: a delivery that is sent stays sent (the provider took the
// message, S1.3), like a late report is a timeline write and not a move
// of Moves.
type ProviderReport struct {
	// DeliveryID and ProviderMessageID name the delivery: the report is
	// recorded when the delivery's provider message id is this one, or
	// not recorded yet (the callback overtook the worker's outcome);
	// never on a delivery whose send has another id (an earlier send of a
	// replayed delivery).
	DeliveryID        int64
	ProviderMessageID string
	// At is when the report arrived.
	At time.Time
	// Status is the provider's status ("delivered", "undelivered",
	// "failed"): the attempt row's error code. One status is recorded
	// once per delivery, so a provider's retried callback adds nothing.
	Status string
	// Error is the provider's detail ("twilio_30003: Unreachable
	// destination handset"), "" when there is none.
	Error string
	// SuppressReason, when set, also suppresses the delivery's address on
	// its channel with that reason (a recipient who replied STOP reported
	// after the send, Twilio 21610), in the same transaction.
	SuppressReason string
}

// CheckProviderReport is the argument check of Store.RecordProviderReport,
// which every store calls first.
func CheckProviderReport(r *ProviderReport) error {
	switch {
	case r.DeliveryID <= 0:
		return heraldtype.FieldErrorf("delivery_id", "must be positive")
	case r.ProviderMessageID == "":
		return heraldtype.FieldErrorf("provider_message_id", "is required")
	case r.Status == "":
		return heraldtype.FieldErrorf("status", "is required")
	case len(r.Status) > 64:
		return heraldtype.FieldErrorf("status", "is over 64 bytes")
	case len(r.Error) > 1024:
		return heraldtype.FieldErrorf("error", "is over 1024 bytes")
	case r.At.IsZero():
		return heraldtype.FieldErrorf("at", "is required")
	}
	return nil
}
