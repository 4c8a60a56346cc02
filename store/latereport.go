package store

import "github.com/heraldhq/herald/heraldtype"

// A late report is a worker's outcome for a lease that had already
// expired when it arrived: the leader's reaper had moved the delivery
// (unknown for at_most_once, back to pending for at_least_once) and the
// lease guard of Complete ignored the outcome. Store.ReportLate records it
// on the delivery's timeline as an OutcomeLateReport attempt row saying
// what the worker did — never started the send, sent it, the send failed,
// or its answer never came — and changes nothing else: the delivery's
// state stays what the reaper made it (never resent automatically, S1.3),
// but an operator sees "the worker says it never sent this" and can replay
// with confidence (issue 24 item 3). It is an append-only timeline write,
// not a move of Moves.

// LateReportError is the error text of the late report o writes: who
// reported, and what it says it did.
func LateReportError(o *Outcome) string {
	r := &o.row
	detail := ""
	if r.ErrorCode != "" || r.Error != "" {
		detail = " (" + r.ErrorCode
		if r.Error != "" {
			if r.ErrorCode != "" {
				detail += ": "
			}
			detail += r.Error
		}
		detail += ")"
	}
	var says string
	switch r.Report {
	case heraldtype.ReportSent:
		says = "the provider accepted the message"
		if r.ProviderMessageID != "" {
			says += " (provider message id " + r.ProviderMessageID + ")"
		}
	case heraldtype.ReportSendFailed:
		says = "the provider refused the message" + detail
	case heraldtype.ReportSendUnknown:
		says = "it sent the message and got no answer" + detail + "; the provider may have it"
	default:
		says = "it never handed the message to a provider" + detail
	}
	return "worker " + o.Owner + " reported after its lease had expired: " + says
}

// LateReport returns the delivery's late report
// (heraldtype.Delivery.LateReport): the error code of its newest attempt
// row when that row is a late report, else "". Both stores set it from
// the attempts they read with every delivery.
func LateReport(attempts []heraldtype.Attempt) string {
	if n := len(attempts); n > 0 && attempts[n-1].Outcome == heraldtype.OutcomeLateReport {
		return attempts[n-1].ErrorCode
	}
	return ""
}

// CheckReportLate is the argument check of Store.ReportLate, which every
// store calls first: each outcome must be one Complete would accept
// (CheckOutcome), and one lease is reported once, so the outcomes it
// returns name each (delivery, attempt) at most once, first one kept.
func CheckReportLate(outcomes []Outcome) ([]Outcome, error) {
	type lease struct {
		id      int64
		attempt int
	}
	seen := make(map[lease]bool, len(outcomes))
	out := make([]Outcome, 0, len(outcomes))
	for i := range outcomes {
		o := outcomes[i]
		if err := CheckOutcome(&o); err != nil {
			return nil, err
		}
		l := lease{o.DeliveryID, o.Attempt}
		if seen[l] {
			continue
		}
		seen[l] = true
		out = append(out, o)
	}
	return out, nil
}
