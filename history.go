package herald

import (
	"context"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// HistoryFilter selects notifications of the history (S3.9):
// GET /v1/notifications?type=&status=&from=&to= and
// GET /v1/users/{id}/notifications.
type HistoryFilter = heraldtype.HistoryFilter

// HistoryEntry is one notification with its status — PENDING, DEFERRED,
// SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT or FAILED — its
// reason (an error code such as quiet_hours, duplicate, daily_cap,
// type_disabled), the status of each channel, and its deliveries counted
// per state. The status is the one of GET /v1/notifications/{id}: one
// rule, store/rules.StatusRules (issue 22).
type HistoryEntry = heraldtype.HistoryEntry

// HistoryPage is one page of the history.
type HistoryPage struct {
	Notifications []HistoryEntry `json:"notifications"`
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ListHistory lists notifications newest first with their outcome. With
// a status filter a page examines at most Config.Limits.HistoryScan
// notifications: it may hold fewer than the limit, even none, and still
// carry a NextCursor, which goes on just past the last one examined.
func (c *Client) ListHistory(ctx context.Context, f HistoryFilter) (HistoryPage, error) {
	if f.UserID != "" {
		if err := validID("user_id", f.UserID); err != nil {
			return HistoryPage{}, err
		}
	}
	if f.Type != "" {
		if err := validTypeName(f.Type); err != nil {
			return HistoryPage{}, err
		}
	}
	f.Status = heraldtype.HistoryStatus(strings.ToUpper(string(f.Status)))
	if f.Status != "" && !f.Status.Valid() {
		return HistoryPage{}, heraldtype.FieldErrorf("status",
			"%q is not PENDING, DEFERRED, SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT or FAILED", f.Status)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return HistoryPage{}, heraldtype.FieldErrorf("from", "must be before to")
	}
	if f.Limit < 0 || f.Limit > 200 {
		return HistoryPage{}, heraldtype.FieldErrorf("limit", "must be between 1 and 200")
	}
	es, next, err := c.store.ListHistory(ctx, f, c.cfg.Limits.HistoryScan)
	if err != nil {
		return HistoryPage{}, err
	}
	if es == nil {
		es = []HistoryEntry{}
	}
	return HistoryPage{Notifications: es, NextCursor: next}, nil
}

// HistoryScan is how many notifications one page of ListHistory with a
// status filter examines at most (Config.Limits.HistoryScan): a page that
// holds fewer entries than its limit but has a next cursor stopped there.
func (c *Client) HistoryScan() int { return c.cfg.Limits.HistoryScan }
