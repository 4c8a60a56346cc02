package store

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Reminders is the part of the store the reminder scheduler and the
// reminder API need (issue 19; S2.1–S2.7). Store embeds it.
//
// A reminder row holds its own schedule state (next_at, sent_count, the
// lease of a scheduler that claimed it): time-driven work lives in the
// database, never only in memory, so a restart neither skips nor repeats
// an occurrence. Every write bumps the reminder's Version; the scheduler's
// fire is guarded by the version and the lease it claimed, so an update,
// a delete or a stop that committed after the claim makes the fire write
// nothing (cancellation is synchronous, issue 19 item 3).
type Reminders interface {
	// PutReminder creates the reminder under r.Key or updates the one that
	// exists, in one transaction (S2.3). On create: ID = r.ID (the caller
	// makes it), SentCount 0, CreatedAt = now. On update: ID, CreatedAt,
	// SentCount, LastNotificationID and LastSentAt are kept; the content,
	// Schedule, Stop, QuietHours and NextAt are replaced; the reminder is
	// active again (StopReason, StoppedAt cleared) and any lease is
	// dropped. UpdatedAt = now, Version bumped. The user must exist
	// (ENOTFOUND naming user_id otherwise). It returns the stored
	// reminder and whether it was created. r.NextAt must be set (an
	// active reminder without a next occurrence would never fire);
	// r.State, StopReason, StoppedAt, SentCount, the last send, the
	// times and Version are the store's and ignored (CheckReminder).
	PutReminder(ctx context.Context, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error)
	// PutReminderTx is PutReminder inside the caller's transaction (the
	// same kinds of tx as EnqueueTx).
	PutReminderTx(ctx context.Context, tx any, r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool, error)
	// GetReminder returns the reminder under key; ENOTFOUND if none.
	GetReminder(ctx context.Context, key string) (heraldtype.Reminder, error)
	// DeleteReminder deletes the reminder under key (S2.3: deleting the
	// item deletes its reminder); ENOTFOUND if none. Once it returns no
	// further occurrence of it is enqueued, even one already claimed.
	DeleteReminder(ctx context.Context, key string) error
	// DeleteReminderTx is DeleteReminder inside the caller's transaction.
	DeleteReminderTx(ctx context.Context, tx any, key string) error
	// ListReminders returns a page of reminders ordered by key, and the
	// cursor of the next page ("" at the end). A UserID filter of a user
	// that does not exist is ENOTFOUND.
	ListReminders(ctx context.Context, f heraldtype.ReminderFilter) ([]heraldtype.Reminder, string, error)
	// StopReminders stops every active reminder sel selects (reason must
	// not be empty), in one transaction: state stopped, StopReason = reason, StoppedAt = now,
	// NextAt cleared, lease dropped, Version bumped. It returns how many
	// it stopped. Like DeleteReminder it is synchronous.
	StopReminders(ctx context.Context, sel ReminderSelector, reason string, now time.Time) (int, error)

	// ClaimReminders leases up to p.Limit active reminders due at p.Now
	// (NextAt ≤ Now) that no live lease holds, oldest NextAt first
	// (FOR UPDATE SKIP LOCKED on PostgreSQL, S2.4): lease owner = p.Owner,
	// until p.LeaseUntil. A reminder whose lease expired (its scheduler
	// died) is claimed again and marked Rescued. Claiming changes neither
	// Version nor anything a reader sees but the lease.
	ClaimReminders(ctx context.Context, p ReminderClaimParams) ([]ReminderClaim, error)
	// FireReminders applies the scheduler's decisions for claimed
	// reminders in ONE transaction (S2.4, S2.6): for each fire whose
	// reminder still has the claimed Version and is leased by owner, it
	// enqueues fire.Enqueue (when set; its IdempotencyKey is the
	// occurrence's, reminder:{id}:{occurrence}) and advances the reminder:
	// when Sent, SentCount+1, LastNotificationID = the enqueued
	// notification, LastSentAt = now; NextAt = fire.NextAt, or stopped with
	// fire.StopReason; lease dropped; Version bumped. A fire whose reminder
	// moved on (updated, deleted, stopped, claimed by another owner)
	// writes nothing and reports Applied false. Any error rolls the whole
	// batch back: nothing is enqueued and nothing advances.
	//
	// LastNotificationID is the first notification of fire.Enqueue (or,
	// when the occurrence's idempotency key replayed an earlier enqueue,
	// the notification that one made). A fire with Sent but no Enqueue,
	// or with neither NextAt nor StopReason, is refused before anything
	// is written (CheckReminderFires). The fires are applied in reminder
	// id order (FireOrder), the order every write of several reminders
	// locks them in, as one set (FireBatch: of several fires of one
	// reminder with the same Version only the first can apply); the
	// results keep the order of fires.
	FireReminders(ctx context.Context, owner string, fires []ReminderFire, now time.Time) ([]FireResult, error)
	// ReleaseReminders drops owner's lease on the reminders (a scheduler
	// stopping, or one that could not build an occurrence); they are due
	// again at once. Unknown ids and other owners' leases are ignored.
	ReleaseReminders(ctx context.Context, owner string, ids []string) error
	// NextReminderAt returns the earliest time an active reminder becomes
	// claimable, ok false if none: its NextAt when no lease holds it, and
	// the lease's end when one does (a claim's lease always ends after
	// NextAt; a reminder still leased at its lease's end is one a
	// successor rescues). Stopped reminders never count. It takes no
	// "now", so a lease that has already expired counts with its end, a
	// time in the past: due at once.
	NextReminderAt(ctx context.Context) (time.Time, bool, error)
	// PruneReminders deletes up to limit reminders stopped before cutoff
	// and returns how many.
	PruneReminders(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// ReminderSelector selects the active reminders StopReminders stops. At
// least one of UserID, Type and Event is set; all set fields must match.
type ReminderSelector struct {
	UserID string
	Type   string
	// Event selects reminders whose Stop.OnEvent is Event and whose
	// Stop.Match fields all equal the event's Data (rules.EventStops).
	Event string
	Data  map[string]string
}

// ReminderClaimParams parameterises ClaimReminders.
type ReminderClaimParams struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
}

// ReminderClaim is a claimed reminder and what the scheduler needs to
// decide its occurrence without another read.
type ReminderClaim struct {
	heraldtype.Reminder
	// UserTimeZone is the user's IANA zone ("" for the default).
	UserTimeZone string
	// UserLastSentAt is the latest LastSentAt of the user's other
	// reminders (zero if none): the collision gap is kept from it (S2.5).
	UserLastSentAt time.Time
	// Rescued: the reminder was leased by a scheduler whose lease expired.
	Rescued bool
}

// ReminderFire is the scheduler's decision for one claimed reminder.
type ReminderFire struct {
	ID      string
	Version int64
	// Enqueue, when not nil, is the occurrence's trigger, enqueued in the
	// fire's transaction.
	Enqueue *EnqueueParams
	// Sends counts the occurrences sent (SentCount+Sends): one, or
	// several when a catch-up fires missed ones together (one trigger
	// under the first one's key). Set with Enqueue; 0 for an occurrence
	// skipped (quiet hours, catch-up) or moved (collision gap).
	Sends int
	// NextOccurrence is the nominal time of the next occurrence; NextAt is
	// when it is due (later by spreading or a collision move).
	NextOccurrence time.Time
	// NextAt is when the reminder is due next; ignored with StopReason.
	NextAt time.Time
	// StopReason, when set, stops the reminder (after enqueueing).
	StopReason string
}

// FireResult is what FireReminders did for one fire, in the order of the
// fires.
type FireResult struct {
	ID      string
	Applied bool
	// Result of the enqueue, when Applied and the fire had one.
	Result EnqueueResult
}
