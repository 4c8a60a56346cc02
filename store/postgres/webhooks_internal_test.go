package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Issue 35 item 4: the messages of an outcome — its delivery.finished,
// the dead_letter.created of a delivery that died, the
// notification.status_changed of the notification it made final, the
// device.invalidated of the device whose token it found dead — are
// written by the outcome's own statements, so they commit with the
// outcome or not at all. The batch Complete sends is run with its COMMIT
// replaced by a ROLLBACK — a crash before the commit: neither the move,
// the device's invalidation nor a message is left. The same batch
// committed writes all of them.
func TestDeliveryFinishedCommitsWithTheOutcome(t *testing.T) {
	s, o := deadOutcomeWithEndpoint(t)
	ctx := t.Context()
	count := func() (messages, types int, state, device string) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.webhook_events),
	(SELECT count(DISTINCT type) FROM {s}.webhook_events), (SELECT state FROM {s}.deliveries),
	(SELECT status FROM {s}.devices WHERE id = 'd1')`)).Scan(&messages, &types, &state, &device); err != nil {
			t.Fatal(err)
		}
		return messages, types, state, device
	}

	// The crash: the batch up to its COMMIT, then a ROLLBACK.
	b, _, _ := s.completeBatch([]store.Outcome{o})
	crashed := &pgx.Batch{}
	for _, q := range b.QueuedQueries {
		if q.SQL == "COMMIT" {
			q = &pgx.QueuedQuery{SQL: "ROLLBACK"}
		}
		crashed.Queue(q.SQL, q.Arguments...)
	}
	if err := s.pool.SendBatch(ctx, crashed).Close(); err != nil {
		t.Fatal(err)
	}
	if n, _, state, device := count(); n != 0 || state != "leased" || device != string(heraldtype.DeviceActive) {
		t.Fatalf("after a rollback: %d messages, delivery %s, device %s; want none, leased, ACTIVE", n, state, device)
	}

	// Committed: the move, the invalidation and the messages together.
	if applied, err := s.Complete(ctx, []store.Outcome{o}); err != nil || applied != 1 {
		t.Fatalf("Complete = %d, %v", applied, err)
	}
	if n, types, state, device := count(); n != 4 || types != 4 || state != "dead" || device != string(heraldtype.DeviceInvalid) {
		t.Fatalf("after the commit: %d messages of %d types, delivery %s, device %s; want 4 of 4, dead, INVALID", n, types, state, device)
	}
}

// deadOutcomeWithEndpoint is a store with the webhook endpoint "wh"
// subscribed to every type and one leased push delivery to device d1, and
// the outcome that makes it dead with a dead token (checked, not
// applied): it writes a message of each of the outcome's four types.
func deadOutcomeWithEndpoint(t *testing.T) (*Store, store.Outcome) {
	t.Helper()
	s, now := storeWithEndpoint(t, 2)
	ctx := t.Context()
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u1", Timezone: "Asia/Seoul"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertDevice(ctx, heraldtype.Device{ID: "d1", UserID: "u1", Platform: heraldtype.PlatformAndroid, Token: "t", PushOptIn: true}, now, 0); err != nil {
		t.Fatal(err)
	}
	_, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: []heraldtype.Notification{{ID: "n1", UserID: "u1", Type: "t",
		Title: "x", Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
		PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}}, MaxAttempts: 3,
		PushProviders: map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("Claim = %v, %v", jobs, err)
	}
	o := store.Outcome{DeliveryID: jobs[0].Delivery.ID, Owner: "w", Attempt: jobs[0].Delivery.Attempt, At: now}.To(store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED", Error: "gone"}, InvalidReason: "UNREGISTERED"})
	if err := store.CheckOutcome(&o); err != nil {
		t.Fatal(err)
	}
	return s, o
}

// Issue 35 item 5: an endpoint deleted while an outcome statement that has
// already joined it runs. With the foreign key the statement's check
// waited for the delete's lock and then failed (23503), taking the batch
// of outcomes with it — deliveries sent but not recorded, sent again after
// their lease. Now the outcome commits, its message is an orphan the claim
// never takes, and the pruner deletes it.
func TestEndpointDeletedDuringAnOutcome(t *testing.T) {
	s, o := deadOutcomeWithEndpoint(t)
	ctx := t.Context()
	del, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer del.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := del.Exec(ctx, s.q(`DELETE FROM {s}.webhook_endpoints WHERE id = 'wh'`)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		applied, err := s.Complete(ctx, []store.Outcome{o})
		if err == nil && applied != 1 {
			err = fmt.Errorf("applied %d outcomes, want 1", applied)
		}
		done <- err
	}()
	select {
	case err := <-done: // no lock on the endpoint to wait for
		if err != nil {
			t.Fatalf("Complete during the delete: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Complete waited for the endpoint's delete")
	}
	if err := del.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var orphans int
	if err := s.pool.QueryRow(ctx, s.q(`SELECT count(*) FROM {s}.webhook_events`)).Scan(&orphans); err != nil || orphans != 4 {
		t.Fatalf("messages after the delete = %d, %v; want the outcome's 4 orphans", orphans, err)
	}
	now := o.At
	jobs, err := s.ClaimWebhookMessages(ctx, store.WebhookClaim{Owner: "d", Now: now.Add(time.Hour), LeaseUntil: now.Add(2 * time.Hour), Limit: 10})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("ClaimWebhookMessages = %v, %v; want no orphan", jobs, err)
	}
	if n, err := s.PruneWebhookMessages(ctx, now.Add(-time.Hour)); err != nil || n != 4 {
		t.Fatalf("PruneWebhookMessages = %d, %v; want the 4 orphans", n, err)
	}
}

// Issue 35 item 4: without an enabled endpoint the webhook part of an
// outcome batch costs one probe of webhook_endpoints per statement (the
// notification lock's and the outcome statement's) and reads nothing
// else — no notification, no sibling delivery, no status computed: the
// one-time filters hold the rest of the plans unexecuted.
func TestOutcomeEventsWithoutEndpointOnlyProbe(t *testing.T) {
	s := migratedStore(t)
	ctx := t.Context()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u1", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d1", "d2"} {
		if _, err := s.UpsertDevice(ctx, heraldtype.Device{ID: d, UserID: "u1", Platform: heraldtype.PlatformAndroid, Token: "t" + d,
			PushOptIn: true}, now, 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: []heraldtype.Notification{{ID: "n1", UserID: "u1", Type: "t",
		Title: "x", Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
		PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}}, MaxAttempts: 3,
		PushProviders: map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("Claim = %v, %v", jobs, err)
	}
	var os []store.Outcome
	for _, j := range jobs {
		o := store.Outcome{DeliveryID: j.Delivery.ID, Owner: "w", Attempt: j.Delivery.Attempt, At: now}.To(store.Sent{})
		if err := store.CheckOutcome(&o); err != nil {
			t.Fatal(err)
		}
		os = append(os, o)
	}
	b, apply, _ := s.completeBatch(os)
	explained := &pgx.Batch{}
	var lock, status int
	for i, q := range b.QueuedQueries {
		switch {
		case q.SQL == "COMMIT":
			q = &pgx.QueuedQuery{SQL: "ROLLBACK"}
		case i == apply || strings.Contains(q.SQL, "FOR NO KEY UPDATE") || strings.Contains(q.SQL, "pg_current_xact_id"):
			switch {
			case strings.Contains(q.SQL, "FOR NO KEY UPDATE"):
				lock = i
			case i != apply:
				status = i
			}
			q = &pgx.QueuedQuery{SQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + q.SQL, Arguments: q.Arguments}
		}
		explained.Queue(q.SQL, q.Arguments...)
	}
	if lock == 0 || status == 0 {
		t.Fatalf("the batch finishes deliveries but has no notification lock (%d) or status statement (%d)", lock, status)
	}
	br := s.pool.SendBatch(ctx, explained)
	plans := map[int]string{}
	for i := range explained.QueuedQueries {
		rows, err := br.Query()
		if err != nil {
			t.Fatal(err)
		}
		if i == apply || i == lock || i == status {
			plans[i] = planText(t)(rows, nil)
		}
		rows.Close()
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	for i, plan := range plans {
		probes := 0
		for line := range strings.Lines(plan) {
			if strings.Contains(line, "never executed") {
				continue
			}
			switch {
			case strings.Contains(line, "on webhook_endpoints"):
				probes++
			case strings.Contains(line, "on notifications"), strings.Contains(line, "on cur"),
				strings.Contains(line, "deliveries_notification_id"), i != apply && strings.Contains(line, "on deliveries"):
				t.Errorf("without an endpoint the statement reads %s\n%s", strings.TrimSpace(line), plan)
			}
		}
		if probes != 1 {
			t.Errorf("%d probes of webhook_endpoints, want 1:\n%s", probes, plan)
		}
	}
}
