// Package store defines the seam between Herald and its databases. The
// interface is wide on purpose: it has one consumer (the root package and
// the dispatcher) and several implementations (store/sqlite now,
// store/postgres next), and every implementation must pass the shared
// conformance suite in store/storetest unchanged.
//
// Rules every implementation follows:
//   - Every state change that matters is one database transaction.
//   - Times are supplied by the caller (an injected clock), never read from
//     the database clock, so tests control them. Times are stored with at
//     least millisecond precision and returned in UTC.
//   - Driver errors are translated in one place per implementation: a
//     missing row is a *heraldtype.Error with code ENOTFOUND, a uniqueness
//     violation ECONFLICT.
//   - Outcome writes are guarded by the state they leave and the lease
//     owner, so a late or duplicate writer changes nothing (S4.4).
package store

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// QueueDepthStates are the states QueueStats counts: deliveries waiting to
// be sent, being sent, and waiting for an operator (dead letters and
// at_most_once deliveries of unknown fate). The final states that only
// grow (sent, skipped, opted_out, rate_limited) are left out: counting
// them reads the whole retained history — a full scan every few seconds
// on every instance, which cost PostgreSQL a fifth of its throughput with
// 1,000,000 rows (docs/PERFORMANCE.md) — and their totals are the
// herald_deliveries_*_total counters.
var QueueDepthStates = []heraldtype.DeliveryState{
	heraldtype.StatePending, heraldtype.StateLeased, heraldtype.StateDead, heraldtype.StateUnknown,
}

// DeliveryStates are all the states of a delivery, in lifecycle order.
var DeliveryStates = []heraldtype.DeliveryState{
	heraldtype.StatePending, heraldtype.StateLeased, heraldtype.StateSent, heraldtype.StateDead,
	heraldtype.StateUnknown, heraldtype.StateSkipped, heraldtype.StateOptedOut, heraldtype.StateRateLimited,
	heraldtype.StateCancelled,
}

// Store is what Herald needs from a database.
type Store interface {
	Channels
	APIKeys
	ConsoleSessions
	Reminders
	Interests
	Rules
	DeadEvents
	Campaigns
	Events
	Policies
	WebhookEndpoints
	Digests
	Escalations
	Templates

	// Migrate applies the embedded migrations that have not run yet.
	Migrate(ctx context.Context) error
	// Ping reports whether the database answers (readiness).
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error

	// UpsertUser creates the user or replaces its mutable fields, keeping
	// CreatedAt. u.UpdatedAt (and CreatedAt on insert) is taken from now.
	UpsertUser(ctx context.Context, u heraldtype.User, now time.Time) (heraldtype.User, error)
	// GetUser returns ENOTFOUND if the user does not exist.
	GetUser(ctx context.Context, id string) (heraldtype.User, error)
	// GetUsers reads many users in one round trip, by id; a user that does
	// not exist is absent (what a templated trigger renders each
	// recipient's locale and zone from).
	GetUsers(ctx context.Context, ids []string) (map[string]heraldtype.User, error)

	// UpsertDevice registers or refreshes a device by its id (S0.1, S0.2) in
	// one transaction. The user must exist (ENOTFOUND otherwise). The device
	// becomes ACTIVE with fail count 0, invalidation cleared and last seen =
	// now. A token refreshed on the same device replaces the old one. If the
	// token is held by another device (of this or another user), that
	// device is detached from it first: its token is cleared and it becomes
	// INVALID with reason "token_moved", so a token is never held by two
	// devices. A device id that belongs to another user moves to this user
	// (a server key's re-assignment, issue 18) and the move is recorded:
	// PreviousUserID = the user it was taken from, ReassignedAt = now. The
	// record stays through later refreshes until the next move. When
	// maxPerUser > 0 the user keeps at most that many devices: the same
	// transaction deletes those seen longest ago (never d itself), so
	// concurrent registrations cannot leave more (issue 18).
	UpsertDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int) (heraldtype.Device, error)
	// UpsertOwnDevice is UpsertDevice for a user acting for itself (a user
	// token, issue 18): a device id that belongs to another user is never
	// moved. The call then fails with ErrDeviceTaken and writes nothing
	// (not even the detach of the token). The ownership check and the
	// write are one statement in one transaction, so of two users racing
	// to register one new id exactly one gets it and the other gets
	// ErrDeviceTaken (issue 23). A push token held by another user's ACTIVE
	// device last seen at or after takeoverBefore is not moved either: the
	// call fails with ErrTokenHeld and writes nothing (issue 23: a token
	// someone learned is not a key to another user's phone). An older,
	// idle holder is detached as UpsertDevice does (the phone changed
	// hands, S0.1).
	UpsertOwnDevice(ctx context.Context, d heraldtype.Device, now time.Time, maxPerUser int, takeoverBefore time.Time) (heraldtype.Device, error)
	// GetDevice returns ENOTFOUND if the device does not exist.
	GetDevice(ctx context.Context, id string) (heraldtype.Device, error)
	// ListDevices returns the user's devices ordered by id; ENOTFOUND if the
	// user does not exist.
	ListDevices(ctx context.Context, userID string) ([]heraldtype.Device, error)
	// DeleteDevice removes a device of the user; ENOTFOUND if there is no
	// such device for that user. Pending deliveries to it are skipped when
	// claimed.
	DeleteDevice(ctx context.Context, userID, deviceID string) error
	// TouchDevice records a heartbeat: last seen = now. ENOTFOUND if absent.
	TouchDevice(ctx context.Context, deviceID string, now time.Time) error
	// PruneDevices deletes devices last seen before cutoff and returns how
	// many it deleted.
	PruneDevices(ctx context.Context, cutoff time.Time) (int, error)

	// Enqueue records a trigger: its idempotency record, its notifications
	// and all their deliveries, in one transaction (S4.1, S0.5). See
	// EnqueueParams and EnqueueResult.
	Enqueue(ctx context.Context, p EnqueueParams) (EnqueueResult, error)
	// GetNotification returns the notification; ENOTFOUND if absent.
	GetNotification(ctx context.Context, id string) (heraldtype.Notification, error)
	// ListNotificationDeliveries returns the notification's deliveries
	// ordered by id, each with its attempts ordered oldest first; ENOTFOUND
	// if the notification does not exist.
	ListNotificationDeliveries(ctx context.Context, notificationID string) ([]heraldtype.Delivery, error)
	// PruneTriggers deletes idempotency records created before cutoff.
	PruneTriggers(ctx context.Context, cutoff time.Time) (int, error)

	// Claim leases up to p.Limit due deliveries (state pending, run_at <=
	// p.Now) oldest run_at first, in one transaction: state leased,
	// lease_owner, lease_until = p.LeaseUntil, attempt+1 (S4.2). Two
	// concurrent claims never return the same delivery. A job's Device is
	// nil when the device was deleted or now belongs to another user (the
	// old user's notification must not reach the new owner's phone).
	Claim(ctx context.Context, p ClaimParams) ([]heraldtype.Job, error)
	// ExtendLeases moves lease_until of the owner's leased deliveries among
	// ids to until, and returns the ids it extended (a delivery no longer
	// leased by owner is not extended).
	ExtendLeases(ctx context.Context, owner string, ids []int64, until time.Time) ([]int64, error)
	// Complete records a batch of outcomes in one transaction: the delivery
	// update, its attempt row and any device change (S4.4). An outcome is
	// applied only if the delivery is still leased by o.Owner with attempt
	// o.Attempt; otherwise it is ignored. It returns how many were applied.
	// Each outcome's Transition is a move of Moves; CheckOutcome refuses
	// the batch otherwise.
	Complete(ctx context.Context, outcomes []Outcome) (int, error)
	// ReportLate records the outcomes of leases the reaper already ended
	// as late reports (store/latereport.go): for each outcome whose lease
	// (delivery, attempt) the reaper expired, and that no replay or
	// earlier report of that lease followed, one OutcomeLateReport attempt
	// row saying what the worker did (OutcomeRow.Report, LateReportError).
	// It changes no delivery (an append-only timeline write, not a move)
	// and ignores every other outcome, so the worker may pass a whole batch
	// Complete did not entirely apply. It returns how many it recorded.
	ReportLate(ctx context.Context, outcomes []Outcome) (int, error)
	// RecordProviderReport appends a provider's report about a delivery it
	// accepted (store/providerreport.go) as one OutcomeProviderReport
	// attempt row — its attempt the delivery's current one, its error code
	// r.Status — when a delivery has r.DeliveryID and r.ProviderMessageID
	// (or no provider message id yet),
	// and suppresses the delivery's address when r.SuppressReason is set,
	// in one transaction. It changes no delivery's state or last error
	// (an append-only timeline write, not a move). It reports whether such
	// a delivery exists; a status already recorded for it writes nothing.
	RecordProviderReport(ctx context.Context, r ProviderReport) (bool, error)
	// RecordReceipts records a batch of receipts (store/receipt.go) in one
	// transaction and answers each one's result, in the batch's order: an
	// OutcomeReceipt attempt row when the delivery exists (for r.UserID,
	// when set) and its timeline has no receipt of r.Event yet
	// (ReceiptRecorded), nothing when it has (ReceiptDuplicate: a unique
	// index decides, so the same receipt racing itself lands once) or
	// when there is no such delivery (ReceiptNotFound). It moves nothing.
	RecordReceipts(ctx context.Context, rs []Receipt) ([]heraldtype.ReceiptResult, error)
	// Engagement sums the engagement counters f selects (store/engagement.go,
	// issue 35 item 3) by f's groups and event, in group order.
	Engagement(ctx context.Context, f EngagementFilter) ([]EngagementCount, error)
	// PruneEngagement deletes the engagement counters of hours before
	// cutoff.
	PruneEngagement(ctx context.Context, cutoff time.Time) (int, error)
	// ReapExpiredLeases handles deliveries whose lease ended before now: an
	// at_least_once delivery goes back to pending (run_at = now, attempt
	// kept), an at_most_once one becomes unknown (S1.3). Each gets an
	// attempt row (lease_expired or unknown).
	ReapExpiredLeases(ctx context.Context, now time.Time) (ReapResult, error)
	// NextRunAt returns the earliest run_at of a pending delivery, and false
	// if there is none, so an idle worker knows when to wake.
	NextRunAt(ctx context.Context) (time.Time, bool, error)
	// QueueStats counts the deliveries of each of QueueDepthStates (for
	// the queue depth gauge); every one is present, zero counts included,
	// and no other state is. It reads only the queue's own indexes, so its
	// cost follows the queue, not the history.
	QueueStats(ctx context.Context) (map[heraldtype.DeliveryState]int, error)
	// Overview reads the pipeline at a glance (the console's overview):
	// pending and leased deliveries by channel, the dead letters, dead
	// events not replayed and rule runs running — each counted through its
	// partial index and stopped at p.Cap (a capped count says so) — the
	// oldest due pending delivery and the oldest due active reminder (their
	// indexes' first row), and from the delivery rollup since p.Since the
	// minutes that have rows, oldest first, and the failures by error code.
	// At and the minutes without rows are left to the caller.
	Overview(ctx context.Context, p OverviewParams) (heraldtype.Overview, error)
	// AddDeliveryMinutes adds an instance's counts to the delivery rollup
	// (one flush of the dispatcher): a row of the same minute, instance,
	// channel, outcome and code is added to, not replaced.
	AddDeliveryMinutes(ctx context.Context, instance string, rows []DeliveryMinute) error
	// CountReplayable counts the deliveries ReplayDeliveries(f, …, max)
	// would replay, stopping at max+1 (a bulk replay's dry run).
	CountReplayable(ctx context.Context, f heraldtype.DeliveryFilter, max int) (int, error)
	// PruneDeliveryMinutes deletes the rollup's minutes before cutoff.
	PruneDeliveryMinutes(ctx context.Context, cutoff time.Time) (int, error)
	// CountDeliveries counts every delivery by state, every state present.
	// It reads the whole table: it is for tools and tests (herald
	// faultrun's final tally), never for anything periodic.
	CountDeliveries(ctx context.Context) (map[heraldtype.DeliveryState]int, error)

	// ListDeliveries lists deliveries matching f, newest first, with each
	// delivery's attempts, and the cursor of the next page ("" at the end).
	ListDeliveries(ctx context.Context, f heraldtype.DeliveryFilter) ([]heraldtype.Delivery, string, error)
	// GetDelivery returns one delivery with its attempts, oldest first
	// (GET /v1/deliveries/{id}); ENOTFOUND if absent, EINVALID on id if
	// it is not positive (CheckGetDelivery).
	GetDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error)
	// ReplayDelivery sends a dead or unknown delivery again (S0.4, S4.6):
	// state pending, run_at = now, attempt 0, replay_count+1, last_replay_at
	// = now, last error kept until the next outcome replaces it (a
	// failure) or clears it (sent; OutcomeRow.SetError), a "replayed"
	// attempt row. ENOTFOUND if absent; ECONFLICT if its state cannot be replayed.
	ReplayDelivery(ctx context.Context, id int64, now time.Time) (heraldtype.Delivery, error)
	// EnqueueTx is Enqueue inside the caller's open transaction (S4.1):
	// the trigger exists if and only if the caller commits. tx is the
	// driver's transaction type — *sql.Tx for SQLite; pgx.Tx or *sql.Tx
	// (pgx stdlib) for PostgreSQL — anything else is EINVALID. The store
	// never commits or rolls back tx. The enqueue runs in a savepoint: on
	// error none of its rows remain and tx stays usable.
	EnqueueTx(ctx context.Context, tx any, p EnqueueParams) (EnqueueResult, error)

	// TryLock takes the named cluster lock for owner until `until`, if it
	// is free (its locked_until <= now) or already held by owner (a
	// renewal, which moves locked_until). It reports whether owner holds
	// the lock. Leader election is a lock renewed before it runs out;
	// scheduled jobs use it ShedLock-style (S3.7): lock-at-most = until.
	TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	// Unlock releases owner's lock by setting locked_until = until (pass
	// max(now, locked_at + lock-at-least) for ShedLock's lock-at-least, or
	// now to free it at once). It does nothing if owner does not hold it.
	Unlock(ctx context.Context, name, owner string, until time.Time) error

	// PruneFinished deletes, oldest first and at most limit, notifications
	// created before cutoff whose deliveries are all final (sent, dead,
	// unknown, skipped), with their deliveries and attempts: the retention
	// clean-up. It returns how many notifications it deleted.
	PruneFinished(ctx context.Context, cutoff time.Time, limit int) (int, error)

	// ReplayDeliveries replays every dead or unknown delivery matching f
	// (f.State must be dead, unknown or empty for both; f.Cursor and
	// f.Limit are ignored, at most max are replayed) and returns how many.
	ReplayDeliveries(ctx context.Context, f heraldtype.DeliveryFilter, now time.Time, max int) (int, error)

	// CancelNotifications cancels the notifications p selects (issue 36
	// item 4), in one transaction: every pending delivery of them moves to
	// cancelled (last error code cancelled, error p.Reason) with a
	// cancelled attempt row, and the webhook messages a final state emits
	// (delivery.finished, and notification.status_changed for one it made
	// final) are written in that transaction. A leased delivery is in
	// flight and is left to its worker's outcome; the result lists every
	// delivery of the selection as the transaction left it, read after
	// the move, so a delivery a concurrent claim took is seen leased.
	CancelNotifications(ctx context.Context, p CancelParams) (CancelResult, error)
}

// EnqueueParams is one trigger. The caller validates it and generates the
// notification ids; the store writes it.
type EnqueueParams struct {
	// IdempotencyKey, when not empty, makes the trigger idempotent: if a
	// trigger with this key exists and RequestHash matches, Enqueue writes
	// nothing and returns the original notifications with Replayed set; if
	// the hash differs it returns ECONFLICT.
	IdempotencyKey string
	RequestHash    string
	// IdempotencyNamespace scopes IdempotencyKey (issue 23): a key is
	// looked up, replayed and taken only among triggers of the same
	// namespace. The HTTP API sets it to the calling API key's id; the
	// default, '', is the namespace of records written before namespaces
	// existed.
	IdempotencyNamespace string
	// Notifications have their ID, UserID, CreatedAt and all content set.
	// Every user must exist, or Enqueue returns ENOTFOUND naming the first
	// unknown user and writes nothing.
	Notifications []heraldtype.Notification
	// MaxAttempts is copied onto every delivery.
	MaxAttempts int
	// PushProviders routes a push delivery to a provider by the device's
	// platform. A platform missing from the map gets no push delivery.
	PushProviders map[heraldtype.Platform]string
	// ChannelProviders routes the sms and email channels to their
	// provider (see channels.go for the rules).
	ChannelProviders map[heraldtype.Channel]string
	Now              time.Time
	// Digest, when set, makes every notification an item of its user's
	// digest instead (store/digests.go).
	Digest *DigestParams
	// Escalate, when set, gives every notification written (not those
	// joining a digest) these escalation steps (store/escalations.go).
	Escalate []heraldtype.EscalationStep
}

// EnqueueResult says what a trigger produced.
type EnqueueResult struct {
	// Notifications in the order of EnqueueParams.Notifications (or, when
	// Replayed, of the original trigger).
	Notifications []EnqueuedNotification
	// Replayed is true when the idempotency key matched an earlier trigger
	// and nothing was written.
	Replayed bool
	// Inbox holds the in-app items this call wrote (none when Replayed),
	// for the real-time stream.
	Inbox []heraldtype.InboxItem
}

// EnqueuedNotification is one notification a trigger produced.
type EnqueuedNotification struct {
	ID         string
	UserID     string
	Deliveries int
	// Digest is the id of the digest the notification joined as an item
	// (it was not written as a notification), "" otherwise.
	Digest string
}

// Delivery rules for Enqueue: for each notification and each of its push
// channels, one pending delivery per device of the user that is ACTIVE and
// push opted-in and whose platform has a provider, with run_at =
// notification SendAt (or Now if zero or earlier), attempt 0, the
// notification's guarantee, and channel "push".

// ClaimParams parameterises Claim.
type ClaimParams struct {
	Owner      string
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// ExcludeProviders are not claimed (a provider that is throttled).
	ExcludeProviders []string
}

// ReapResult counts what ReapExpiredLeases did.
type ReapResult struct {
	Requeued int
	Unknown  int
}

// NextClaimer is an optional Store capability: a claim that also reports
// the earliest run_at of the deliveries still pending after it (what
// NextRunAt would say), in the claim's own round trip. A worker's claim
// cycle is claim, then, when the batch was not full, NextRunAt before it
// sleeps: on PostgreSQL that second round trip was a fifth of the cycle
// at 1,000 triggers/s (docs/PERFORMANCE.md), and every round trip wakes a
// backend on a machine whose CPU is the bottleneck.
type NextClaimer interface {
	ClaimNext(ctx context.Context, p ClaimParams) (jobs []heraldtype.Job, next time.Time, ok bool, err error)
}

// QueueVacuumer is an optional Store capability: a store whose queue keeps
// the dead row versions of claimed and finished deliveries until they are
// vacuumed (PostgreSQL) removes them. Every claim walks the head of the
// pending index; dead entries there are stepped over and their heap rows
// fetched, so a queue drained faster than it is vacuumed slows down as it
// drains (docs/PERFORMANCE.md: 8,300 → under 5,000 deliveries/s over a
// 1,000,000-delivery backlog with autovacuum off). The reminder claim
// walks the head of the due reminders the same way. The elected leader
// calls VacuumQueue on a timer, so both stay fast whether or not
// autovacuum is on or keeping up.
type QueueVacuumer interface {
	// VacuumQueue vacuums and analyzes the tables that claims walk (the
	// queue, the reminders) whose dead or new rows are enough to be worth
	// it, and reports whether it vacuumed any.
	VacuumQueue(ctx context.Context) (bool, error)
}

// Notifier is an optional Store capability: a store shared by several
// Herald instances (PostgreSQL) signals on the returned channel, coalesced,
// whenever another instance enqueued or replayed deliveries, so idle
// workers wake at once instead of at the next poll (S4.2). The channel is
// closed when ctx ends. A store on which only one process can run
// (SQLite) does not implement it; polling remains the fallback either way.
type Notifier interface {
	Notifications(ctx context.Context) <-chan struct{}
}
