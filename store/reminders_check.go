package store

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The argument checks of the Reminders methods (issue 19), written once:
// every store calls the check of a method first, so all of them refuse
// the same calls with the same codes, fields and messages. They guard
// what a store must never write — a reminder without a key, user or
// type, an active reminder with no next occurrence (one that would
// silently never fire, issue 19 item 9) — not the product limits of the
// API (title and body length, S2.1), which the caller checks.

// Page sizes of ListReminders (ReminderFilter.Limit: 0 is the default,
// larger is capped).
const (
	DefaultReminderPage = 50
	MaxReminderPage     = 200
)

// ReminderStates are the states of a reminder.
var ReminderStates = []heraldtype.ReminderState{heraldtype.ReminderActive, heraldtype.ReminderStopped}

// QuietHoursModes are the values of Reminder.QuietHours ("" is "defer").
var QuietHoursModes = []string{"", "defer", "skip"}

// CheckReminder validates the reminder PutReminder writes. Its state,
// counters and times other than NextAt are the store's, not the
// caller's, and are ignored.
func CheckReminder(r heraldtype.Reminder, now time.Time) error {
	switch {
	case r.Key == "":
		return heraldtype.FieldErrorf("key", "must not be empty")
	case r.ID == "":
		return heraldtype.FieldErrorf("id", "must not be empty")
	case r.UserID == "":
		return heraldtype.FieldErrorf("user_id", "must not be empty")
	case r.Type == "":
		return heraldtype.FieldErrorf("type", "must not be empty")
	case r.NextAt.IsZero():
		// An active reminder without a next occurrence would never fire.
		return heraldtype.FieldErrorf("next_at", "must be set")
	case now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	}
	if !slices.Contains(QuietHoursModes, r.QuietHours) {
		return heraldtype.FieldErrorf("quiet_hours", `must be "defer" or "skip", not %q`, r.QuietHours)
	}
	if r.Stop.MaxSends < 0 {
		return heraldtype.FieldErrorf("stop.max_sends", "must not be negative")
	}
	if len(r.Stop.Match) > 0 && r.Stop.OnEvent == "" {
		return heraldtype.FieldErrorf("stop.match", "needs stop.on_event")
	}
	return nil
}

// ReminderUserNotFound is PutReminder's answer for a user that does not
// exist: ENOTFOUND naming the field user_id.
func ReminderUserNotFound(userID string) error {
	return &heraldtype.Error{Code: heraldtype.ENOTFOUND, Field: "user_id",
		Message: fmt.Sprintf("user %q not found", userID)}
}

// ReminderNotFound is the answer of GetReminder and DeleteReminder for a
// key without a reminder.
func ReminderNotFound(key string) error {
	return heraldtype.Errorf(heraldtype.ENOTFOUND, "reminder %q not found", key)
}

// CheckReminderFilter validates the filter of ListReminders and returns
// its page size and the key the page starts after ("" for the first
// page). The state is checked before the cursor, the cursor before the
// limit, as CheckDeliveryFilter does.
func CheckReminderFilter(f heraldtype.ReminderFilter) (limit int, after string, err error) {
	if f.State != "" && !slices.Contains(ReminderStates, f.State) {
		return 0, "", heraldtype.FieldErrorf("state", "unknown state %q", f.State)
	}
	if after, err = decodeKeyCursor(f.Cursor); err != nil {
		return 0, "", err
	}
	if limit, err = pageSize(f.Limit, DefaultReminderPage, MaxReminderPage); err != nil {
		return 0, "", err
	}
	return limit, after, nil
}

// ReminderPage trims reminders, read in key order with a LIMIT of
// limit+1, to the page and returns the cursor of the next page ("" when
// this is the last).
func ReminderPage(rs []heraldtype.Reminder, limit int) ([]heraldtype.Reminder, string) {
	return page(rs, limit, func(r heraldtype.Reminder) string {
		return base64.RawURLEncoding.EncodeToString([]byte(r.Key))
	})
}

// decodeKeyCursor reverses the cursor of ReminderPage: the last key of
// the previous page. "" (the first page) is ""; a cursor it did not make
// is EINVALID.
func decodeKeyCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", badCursor()
	}
	return string(b), nil
}

// CheckReminderSelector validates the arguments of StopReminders: a
// selector that selects nothing in particular would stop every reminder.
func CheckReminderSelector(sel ReminderSelector, reason string, now time.Time) error {
	if sel.UserID == "" && sel.Type == "" && sel.Event == "" {
		return heraldtype.FieldErrorf("selector", "one of user_id, type and event is required")
	}
	if len(sel.Data) > 0 && sel.Event == "" {
		return heraldtype.FieldErrorf("data", "is only matched with an event")
	}
	if reason == "" {
		return heraldtype.FieldErrorf("reason", "must not be empty")
	}
	if now.IsZero() {
		return heraldtype.FieldErrorf("now", "must be set")
	}
	return nil
}

// CheckReminderClaim validates the arguments of ClaimReminders.
func CheckReminderClaim(p ReminderClaimParams) error {
	if p.Owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	if !p.LeaseUntil.After(p.Now) {
		return heraldtype.FieldErrorf("lease_until", "must be after now")
	}
	return atLeastOne("limit", p.Limit)
}

// CheckReminderFires validates the arguments of FireReminders, every
// fire before anything is written: an enqueue CheckEnqueue refuses, an
// occurrence counted as sent with nothing enqueued, or an active
// reminder left without a next occurrence.
func CheckReminderFires(owner string, fires []ReminderFire, now time.Time) error {
	if owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	if now.IsZero() {
		return heraldtype.FieldErrorf("now", "must be set")
	}
	for i, f := range fires {
		switch {
		case f.ID == "":
			return heraldtype.FieldErrorf(fmt.Sprintf("fires[%d].id", i), "must not be empty")
		case f.Sends < 0:
			return heraldtype.FieldErrorf(fmt.Sprintf("fires[%d].sends", i), "must not be negative")
		case f.Sends > 0 && f.Enqueue == nil:
			return heraldtype.FieldErrorf(fmt.Sprintf("fires[%d].sends", i), "needs an enqueue")
		case f.StopReason == "" && f.NextAt.IsZero():
			return heraldtype.FieldErrorf(fmt.Sprintf("fires[%d].next_at", i), "must be set unless the fire stops the reminder")
		}
		if f.Enqueue != nil {
			if err := CheckEnqueue(*f.Enqueue); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckReleaseReminders validates the owner of ReleaseReminders.
func CheckReleaseReminders(owner string) error {
	if owner == "" {
		return heraldtype.FieldErrorf("owner", "must not be empty")
	}
	return nil
}

// CheckPruneReminders validates the limit of PruneReminders.
func CheckPruneReminders(limit int) error { return atLeastOne("limit", limit) }

// FireOrder is the order in which a store applies fires: by reminder
// id, the order in which every write of several reminders locks them,
// so that a fire batch and a bulk stop never wait for each other in a
// cycle (PostgreSQL). It returns indexes into fires.
func FireOrder(fires []ReminderFire) []int {
	order := make([]int, len(fires))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(fires[a].ID, fires[b].ID) })
	return order
}

// FireBatch is FireOrder without repeats: of several fires of one
// reminder with the same Version only the first (in the order of fires)
// can apply — a fire moves the version on — so a store leaves the others
// out of its one guarded statement and reports them not applied. Fires of
// one reminder with different versions all stay; at most one of them
// has the reminder's version.
func FireBatch(fires []ReminderFire) []int {
	order := FireOrder(fires)
	type key struct {
		id      string
		version int64
	}
	seen := make(map[key]bool, len(order))
	return slices.DeleteFunc(order, func(i int) bool {
		k := key{fires[i].ID, fires[i].Version}
		if seen[k] {
			return true
		}
		seen[k] = true
		return false
	})
}

// FireIndex finds the fire of a batch (FireBatch) that a store's guarded
// UPDATE applied from what the statement returns for each reminder it
// changed: its id and new version, the fire's Version + 1.
type FireIndex map[string][]int

// NewFireIndex indexes the fires of batch by reminder id.
func NewFireIndex(fires []ReminderFire, batch []int) FireIndex {
	x := make(FireIndex, len(batch))
	for _, i := range batch {
		x[fires[i].ID] = append(x[fires[i].ID], i)
	}
	return x
}

// Applied returns the index of the fire that left reminder id at
// version; ok false if none of the batch did.
func (x FireIndex) Applied(fires []ReminderFire, id string, version int64) (int, bool) {
	for _, i := range x[id] {
		if fires[i].Version+1 == version {
			return i, true
		}
	}
	return 0, false
}
