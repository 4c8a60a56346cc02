package store

import (
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The engagement counters (issue 35 item 3): both stores keep, in the
// transaction of every statement that writes a sent or receipt attempt
// row, a count per hour (UTC), type, channel, source and event (their
// migrations' trigger: PostgreSQL 0033, SQLite 0026). Engagement sums them.

// EngagementFilter selects and groups the counters Engagement sums.
type EngagementFilter struct {
	// From and To bound the hours counted: a counter's hour is in when it
	// starts at or after From and before To.
	From, To time.Time
	// Interval is "", "hour" or "day": a row per group and hour or day
	// (UTC), or per group over the whole range.
	Interval string
	// The dimensions grouped by; the others are summed over.
	ByType, ByChannel, ByRule, ByCampaign bool
	// Filters: only the counters of this type, channel, rule or campaign
	// ("" for any).
	Type, Channel, Rule, Campaign string
	// Limit bounds the groups (rows without their event) read: Engagement
	// reads up to Limit+1, so a caller can tell the answer was cut.
	Limit int
}

// EngagementCount is one sum of Engagement: a group, one event, its count.
// The dimensions not grouped by are "", Start is zero without an Interval.
type EngagementCount struct {
	Start                         time.Time
	Type, Channel, Rule, Campaign string
	Event                         string
	N                             int64
}

// EngagementEvents are the events the counters hold: sent, and every
// receipt event.
var EngagementEvents = []string{"sent",
	string(heraldtype.ReceiptDelivered), string(heraldtype.ReceiptOpened), string(heraldtype.ReceiptDismissed),
	string(heraldtype.ReceiptClicked), string(heraldtype.ReceiptSeen), string(heraldtype.ReceiptRead),
	string(heraldtype.ReceiptArchived)}

// CheckEngagementFilter is the argument check of Engagement.
func CheckEngagementFilter(f EngagementFilter) error {
	if f.From.IsZero() || f.To.IsZero() {
		return heraldtype.FieldErrorf("from", "and to are required")
	}
	if !f.To.After(f.From) {
		return heraldtype.FieldErrorf("to", "must be after from")
	}
	switch f.Interval {
	case "", "hour", "day":
	default:
		return heraldtype.FieldErrorf("interval", "must be hour or day, not %q", f.Interval)
	}
	return atLeastOne("limit", f.Limit)
}
