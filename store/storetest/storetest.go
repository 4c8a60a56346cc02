// Package storetest is the conformance suite of store.Store. Every
// implementation runs it unchanged (as River's riverdrivertest does for its
// drivers), so the dispatcher, the API and the maintenance services can
// rely on one behaviour whatever the database.
//
// The suite never sleeps: every time is supplied by the test, from a fixed
// base time, as the store contract requires.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// NewStore returns a fresh, migrated, empty store; it registers its own
// cleanup with t.Cleanup.
type NewStore func(t *testing.T) store.Store

// BeginTx begins a transaction of the driver's own kind on s's database,
// as an embedder would for EnqueueTx, and returns it with functions that
// commit and roll it back.
type BeginTx func(t *testing.T, s store.Store) (tx any, commit, rollback func() error)

// Harness is what the suite needs from an implementation.
type Harness struct {
	New     NewStore
	BeginTx BeginTx
}

// Run runs the whole suite against the stores h.New returns.
func Run(t *testing.T, h Harness) {
	if h.New == nil || h.BeginTx == nil {
		t.Fatal("storetest: Harness.New and Harness.BeginTx are required")
	}
	newStore := h.New
	t.Run("Users", func(t *testing.T) { testUsers(t, newStore) })
	t.Run("Devices", func(t *testing.T) { testDevices(t, newStore) })
	t.Run("DeviceCap", func(t *testing.T) { testDeviceCap(t, newStore) })
	t.Run("Enqueue", func(t *testing.T) { testEnqueue(t, newStore) })
	t.Run("EnqueueTx", func(t *testing.T) { testEnqueueTx(t, h) })
	t.Run("Claim", func(t *testing.T) { testClaim(t, newStore) })
	t.Run("ClaimNext", func(t *testing.T) { testClaimNext(t, newStore) })
	t.Run("Complete", func(t *testing.T) { testComplete(t, newStore) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, newStore) })
	t.Run("Moves", func(t *testing.T) { testMoves(t, newStore) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newStore) })
	t.Run("LateReports", func(t *testing.T) { testLateReports(t, newStore) })
	t.Run("ProviderReports", func(t *testing.T) { testProviderReports(t, newStore) })
	t.Run("Receipts", func(t *testing.T) { testReceipts(t, newStore) })
	t.Run("Engagement", func(t *testing.T) { testEngagement(t, newStore) })
	t.Run("InboxReceipts", func(t *testing.T) { testInboxReceipts(t, newStore) })
	t.Run("InboxSeenClicked", func(t *testing.T) { testInboxSeenClicked(t, newStore) })
	t.Run("InboxState", func(t *testing.T) { testInboxState(t, newStore) })
	t.Run("ListDeliveries", func(t *testing.T) { testListDeliveries(t, newStore) })
	t.Run("Overview", func(t *testing.T) { testOverview(t, newStore) })
	t.Run("CountReplayable", func(t *testing.T) { testCountReplayable(t, newStore) })
	t.Run("GetDelivery", func(t *testing.T) { testGetDelivery(t, newStore) })
	t.Run("Replay", func(t *testing.T) { testReplay(t, newStore) })
	t.Run("Maintenance", func(t *testing.T) { testMaintenance(t, newStore) })
	t.Run("ClusterLocks", func(t *testing.T) { testClusterLocks(t, newStore) })
	t.Run("PruneFinished", func(t *testing.T) { testPruneFinished(t, newStore) })
	t.Run("Channels", func(t *testing.T) { testChannels(t, newStore) })
	t.Run("InboxPreferences", func(t *testing.T) { testInboxPreferences(t, newStore) })
	t.Run("InboxScheduled", func(t *testing.T) { testInboxScheduled(t, newStore) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, newStore) })
	t.Run("ConsoleSessions", func(t *testing.T) { testConsoleSessions(t, newStore) })
	t.Run("Policy", func(t *testing.T) { testPolicy(t, newStore) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore) })
	t.Run("HistoryRules", func(t *testing.T) { testHistoryRules(t, newStore) })
	t.Run("HistoryScan", func(t *testing.T) { testHistoryScan(t, newStore) })
	t.Run("StatusAgreement", func(t *testing.T) { testStatusAgreement(t, newStore) })
	t.Run("BadArguments", func(t *testing.T) { testBadArguments(t, newStore) })
	t.Run("Reminders", func(t *testing.T) { testReminders(t, h) })
	t.Run("Interests", func(t *testing.T) { testInterests(t, newStore) })
	t.Run("Rules", func(t *testing.T) { testRules(t, newStore) })
	t.Run("DeadEvents", func(t *testing.T) { testDeadEvents(t, newStore) })
	t.Run("Campaigns", func(t *testing.T) { testCampaigns(t, newStore) })
	t.Run("Events", func(t *testing.T) { testEvents(t, newStore) })
	t.Run("Webhooks", func(t *testing.T) { testWebhooks(t, newStore) })
	t.Run("WebhookEvents", func(t *testing.T) { testWebhookDeliveryFinished(t, newStore) })
	t.Run("WebhookOutcomeEvents", func(t *testing.T) { testWebhookOutcomeEvents(t, newStore) })
	t.Run("WebhookReports", func(t *testing.T) { testWebhookReports(t, newStore) })
	t.Run("Digests", func(t *testing.T) { testDigests(t, h) })
	t.Run("Escalations", func(t *testing.T) { testEscalations(t, h) })
	t.Run("DigestSchedules", func(t *testing.T) { testDigestSchedules(t, h) })
	t.Run("DigestScheduleTypes", func(t *testing.T) { testDigestScheduleTypes(t, h) })
	t.Run("DigestCancel", func(t *testing.T) { testDigestCancel(t, h) })
	t.Run("DigestList", func(t *testing.T) { testDigestList(t, h) })
	t.Run("Templates", func(t *testing.T) { testTemplates(t, newStore) })
}

// base is the suite's "now": a fixed instant with microseconds, so a store
// that truncates to seconds fails.
func base() time.Time { return time.Date(2026, 3, 14, 15, 9, 26, 535_897_000, time.UTC) }

// Providers is the routing table the suite enqueues with: web has no
// provider, so web devices get no push delivery.
func Providers() map[heraldtype.Platform]string {
	return map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm", heraldtype.PlatformIOS: "apns"}
}

// fixture is one test's store and helpers.
type fixture struct {
	t   *testing.T
	s   store.Store
	ctx context.Context
	seq int
}

func newFixture(t *testing.T, newStore NewStore) *fixture {
	t.Helper()
	return &fixture{t: t, s: newStore(t), ctx: t.Context()}
}

// at returns base + d.
func at(d time.Duration) time.Time { return base().Add(d) }

func (f *fixture) user(id string) heraldtype.User {
	f.t.Helper()
	u, err := f.s.UpsertUser(f.ctx, heraldtype.User{ID: id, Timezone: "Asia/Seoul"}, base())
	if err != nil {
		f.t.Fatalf("UpsertUser(%s): %v", id, err)
	}
	return u
}

// device registers an opted-in device whose token is "tok-<id>".
func (f *fixture) device(userID, id string, platform heraldtype.Platform) heraldtype.Device {
	f.t.Helper()
	return f.upsertDevice(heraldtype.Device{ID: id, UserID: userID, Platform: platform, Token: "tok-" + id, PushOptIn: true}, base())
}

func (f *fixture) upsertDevice(d heraldtype.Device, now time.Time) heraldtype.Device {
	f.t.Helper()
	out, err := f.s.UpsertDevice(f.ctx, d, now, 0)
	if err != nil {
		f.t.Fatalf("UpsertDevice(%s): %v", d.ID, err)
	}
	return out
}

// notification returns a push notification for userID with a fresh id.
func (f *fixture) notification(userID string) heraldtype.Notification {
	f.seq++
	return heraldtype.Notification{
		ID:          fmt.Sprintf("n%04d", f.seq),
		UserID:      userID,
		Type:        "reminder",
		Title:       "Hello",
		Body:        "World",
		Channels:    []heraldtype.Channel{heraldtype.ChannelPush},
		Priority:    heraldtype.PriorityNormal,
		PayloadMode: heraldtype.PayloadAlert,
		Guarantee:   heraldtype.AtLeastOnce,
		CreatedAt:   base(),
	}
}

func params(ns ...heraldtype.Notification) store.EnqueueParams {
	return store.EnqueueParams{Notifications: ns, MaxAttempts: 3, PushProviders: Providers(), Now: base()}
}

func (f *fixture) enqueue(p store.EnqueueParams) store.EnqueueResult {
	f.t.Helper()
	res, err := f.s.Enqueue(f.ctx, p)
	if err != nil {
		f.t.Fatalf("Enqueue: %v", err)
	}
	return res
}

// push enqueues one push notification per user given and returns them.
func (f *fixture) push(userIDs ...string) []heraldtype.Notification {
	f.t.Helper()
	var ns []heraldtype.Notification
	for _, u := range userIDs {
		ns = append(ns, f.notification(u))
	}
	f.enqueue(params(ns...))
	return ns
}

func (f *fixture) claim(owner string, now time.Time, limit int, exclude ...string) []heraldtype.Job {
	f.t.Helper()
	jobs, err := f.s.Claim(f.ctx, store.ClaimParams{
		Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, ExcludeProviders: exclude,
	})
	if err != nil {
		f.t.Fatalf("Claim: %v", err)
	}
	return jobs
}

func (f *fixture) complete(want int, os ...store.Outcome) {
	f.t.Helper()
	n, err := f.s.Complete(f.ctx, os)
	if err != nil {
		f.t.Fatalf("Complete: %v", err)
	}
	if n != want {
		f.t.Fatalf("Complete applied %d outcomes, want %d", n, want)
	}
}

// deliveries returns the notification's deliveries with their attempts.
func (f *fixture) deliveries(notificationID string) []heraldtype.Delivery {
	f.t.Helper()
	ds, err := f.s.ListNotificationDeliveries(f.ctx, notificationID)
	if err != nil {
		f.t.Fatalf("ListNotificationDeliveries(%s): %v", notificationID, err)
	}
	return ds
}

// delivery returns the one delivery of the notification.
func (f *fixture) delivery(notificationID string) heraldtype.Delivery {
	f.t.Helper()
	ds := f.deliveries(notificationID)
	if len(ds) != 1 {
		f.t.Fatalf("notification %s has %d deliveries, want 1", notificationID, len(ds))
	}
	return ds[0]
}

func (f *fixture) getDevice(id string) heraldtype.Device {
	f.t.Helper()
	d, err := f.s.GetDevice(f.ctx, id)
	if err != nil {
		f.t.Fatalf("GetDevice(%s): %v", id, err)
	}
	return d
}

// stats counts every delivery by state (CountDeliveries).
func (f *fixture) stats() map[heraldtype.DeliveryState]int {
	f.t.Helper()
	st, err := f.s.CountDeliveries(f.ctx)
	if err != nil {
		f.t.Fatalf("CountDeliveries: %v", err)
	}
	return st
}

// queueStats is QueueStats: the queue depth states only.
func (f *fixture) queueStats() map[heraldtype.DeliveryState]int {
	f.t.Helper()
	st, err := f.s.QueueStats(f.ctx)
	if err != nil {
		f.t.Fatalf("QueueStats: %v", err)
	}
	return st
}

// outcome is the outcome of job's lease at time now, moving it to.
func outcome(j heraldtype.Job, to store.Transition, now time.Time) store.Outcome {
	return store.Outcome{DeliveryID: j.Delivery.ID, Owner: j.Delivery.LeaseOwner, Attempt: j.Delivery.Attempt, At: now}.To(to)
}

// wantCode fails unless err carries the Herald error code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := heraldtype.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
	var he *heraldtype.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v is not a *heraldtype.Error", err)
	}
}

// wantMessage fails unless err is a *heraldtype.Error with the code and
// message (which the HTTP API shows).
func wantMessage(t *testing.T, err error, code, message string) {
	t.Helper()
	wantCode(t, err, code)
	if got := err.Error(); got != code+": "+message {
		t.Fatalf("error = %q, want %q", got, code+": "+message)
	}
}

func wantTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("%s = %v, want %v (UTC)", what, got, want)
	}
}

func wantTimePtr(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s = nil, want %v", what, want)
	}
	wantTime(t, what, *got, want)
}

func ids(jobs []heraldtype.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.Delivery.ID
	}
	return out
}

func outcomes(as []heraldtype.Attempt) []heraldtype.AttemptOutcome {
	out := make([]heraldtype.AttemptOutcome, len(as))
	for i, a := range as {
		out[i] = a.Outcome
	}
	return out
}

func wantOutcomes(t *testing.T, d heraldtype.Delivery, want ...heraldtype.AttemptOutcome) {
	t.Helper()
	if got := outcomes(d.Attempts); !slices.Equal(got, want) {
		t.Fatalf("delivery %d attempts = %v, want %v", d.ID, got, want)
	}
}
