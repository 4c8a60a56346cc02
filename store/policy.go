package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// EncodeType is PutType's half that is not SQL: it refuses a type
// without a name, sets UpdatedAt to now (UTC, to the microsecond every
// store keeps) and returns the JSON document both stores keep.
func EncodeType(t heraldtype.NotificationType, now time.Time) (heraldtype.NotificationType, []byte, error) {
	if t.Name == "" {
		return t, nil, heraldtype.FieldErrorf("name", "is required")
	}
	t.UpdatedAt = now.UTC().Truncate(time.Microsecond)
	b, err := json.Marshal(t)
	if err != nil {
		return t, nil, fmt.Errorf("store: type %q: %w", t.Name, err)
	}
	return t, b, nil
}

// DecodeType reverses EncodeType.
func DecodeType(stored []byte) (heraldtype.NotificationType, error) {
	var t heraldtype.NotificationType
	if err := json.Unmarshal(stored, &t); err != nil {
		return t, fmt.Errorf("store: stored type: %w", err)
	}
	t.UpdatedAt = t.UpdatedAt.UTC()
	return t, nil
}

// EncodePreferences is PutPreferences' half that is not SQL: UpdatedAt
// = now (UTC, to the microsecond) and the JSON both stores keep, without
// the time zone, which is the user's.
func EncodePreferences(p heraldtype.Preferences, now time.Time) (heraldtype.Preferences, []byte, error) {
	p.UpdatedAt = now.UTC().Truncate(time.Microsecond)
	p.Timezone = ""
	b, err := json.Marshal(p)
	if err != nil {
		return p, nil, fmt.Errorf("store: preferences of %q: %w", p.UserID, err)
	}
	return p, b, nil
}

// ScheduledDigestTypes lists, sorted, the types p chooses a digest
// schedule for: what a preference write adds to the store's
// DigestScheduleTypes.
func ScheduledDigestTypes(p heraldtype.Preferences) []string {
	var out []string
	for name, tp := range p.Types {
		if tp.Digest != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// DecodePreferences builds a user's preferences from their stored JSON
// (nil when the user set none) and the user's time zone; both stores keep
// them so.
func DecodePreferences(userID, timezone string, stored []byte) (heraldtype.Preferences, error) {
	p := heraldtype.Preferences{UserID: userID}
	if stored != nil {
		if err := json.Unmarshal(stored, &p); err != nil {
			return p, fmt.Errorf("store: preferences of %q: %w", userID, err)
		}
		p.UpdatedAt = p.UpdatedAt.UTC()
	}
	p.Timezone = timezone
	return p, nil
}

// Policies is the part of the store the delivery policy needs. Store
// embeds it. AcquireDedupe, CountDaily and CountDailyBatch make the store
// a policy.BatchLimiter (the SQL backend; internal/policy documents their
// contract).
type Policies interface {
	// PutType creates or replaces a declared type; UpdatedAt = now.
	PutType(ctx context.Context, t heraldtype.NotificationType, now time.Time) (heraldtype.NotificationType, error)
	// GetType returns a type stored by PutType; ENOTFOUND otherwise.
	GetType(ctx context.Context, name string) (heraldtype.NotificationType, error)
	// ListTypes returns every stored type ordered by name.
	ListTypes(ctx context.Context) ([]heraldtype.NotificationType, error)

	// PutPreferences replaces the user's preferences; ENOTFOUND if the
	// user does not exist. The result carries the user's time zone.
	PutPreferences(ctx context.Context, p heraldtype.Preferences, now time.Time) (heraldtype.Preferences, error)
	// SwapPreferences is PutPreferences guarded by the preferences read:
	// it writes p only while the stored preferences are still those written
	// at was (zero: none were ever written), and reports whether it did. A
	// read-modify-write (one-click unsubscribe) that loses to a concurrent
	// write reads again instead of overwriting it.
	SwapPreferences(ctx context.Context, p heraldtype.Preferences, was, now time.Time) (heraldtype.Preferences, bool, error)
	// GetPreferences returns the user's preferences (empty ones if none
	// were stored) with the user's time zone; ENOTFOUND if the user does
	// not exist.
	GetPreferences(ctx context.Context, userID string) (heraldtype.Preferences, error)
	// GetPreferencesMany is GetPreferences for many users in one read, so
	// the dispatcher pays one round trip per claimed batch rather than one
	// per delivery. A user that does not exist is absent from the map.
	GetPreferencesMany(ctx context.Context, userIDs []string) (map[string]heraldtype.Preferences, error)
	// DigestScheduleTypes lists the types some user chose a digest
	// schedule for (TypePreference.Digest): PutPreferences and
	// SwapPreferences add a written document's ScheduledDigestTypes in
	// their write. A type stays listed after its last user drops the
	// schedule (a stale entry costs its triggers a read of their
	// recipients' preferences; removing it could race a write adding it
	// back). A trigger of a type not listed has no recipient with a
	// schedule, so it reads no preferences (issue 36 item 2).
	DigestScheduleTypes(ctx context.Context) ([]string, error)

	// AcquireDedupe takes the de-duplication lock key for owner until
	// now+window if it is free or expired; ok is true when owner holds
	// it (also when it already did).
	AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, now time.Time) (bool, error)
	// CountDaily counts owner once toward userID's day if fewer than limit
	// owners are counted for it; ok is true when owner is counted (also
	// when it already was). The count is kept until expireAt.
	CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error)
	// CountDailyBatch is CountDaily for each item in order, atomically
	// and in one round trip: a later item sees what an earlier one
	// counted, so the second of two new owners of a user's day may be
	// refused where the first was counted. ok[i] answers items[i]. The
	// items of one user and day carry one limit (CheckCountDailyBatch).
	// The dispatcher counts a claimed batch with it (issue 39 item 3).
	CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) (ok []bool, err error)
	// PrunePolicy deletes dedupe locks and daily counts expired at now
	// and returns how many rows it deleted.
	PrunePolicy(ctx context.Context, now time.Time) (int, error)

	// ListHistory lists notifications with their outcome, newest first,
	// and the cursor of the next page ("" at the end) (S3.9). With a
	// status filter a page examines at most scan notifications (0:
	// DefaultHistoryScan) and may hold fewer than the limit, even none,
	// with a cursor to go on from (ScanHistory).
	ListHistory(ctx context.Context, f heraldtype.HistoryFilter, scan int) ([]heraldtype.HistoryEntry, string, error)
}
