package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// Issue 35 item 4: device.invalidated is written by the statement that
// invalidates the device, in Complete's one transaction. The batch of a
// dead-token outcome run with its COMMIT replaced by a ROLLBACK — a crash
// before the commit — leaves the device active and no message (neither
// device.invalidated nor delivery.finished); committed, both messages are
// written with the changes.
func TestDeviceInvalidatedCommitsWithTheOutcome(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	s, err := Open(ctx, dsn, Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	if err := s.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh",
		URL: "https://example.com/hook", Enabled: true, CreatedAt: now, UpdatedAt: now}, Secret: "whsec_x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u1", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertDevice(ctx, heraldtype.Device{ID: "d1", UserID: "u1", Platform: heraldtype.PlatformAndroid, Token: "t", PushOptIn: true}, now, 0); err != nil {
		t.Fatal(err)
	}
	_, err = s.Enqueue(ctx, store.EnqueueParams{Notifications: []heraldtype.Notification{{ID: "n1", UserID: "u1", Type: "t",
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
	o := store.Outcome{DeliveryID: jobs[0].Delivery.ID, Owner: "w", Attempt: jobs[0].Delivery.Attempt, At: now.Add(time.Second)}.
		To(store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"})
	if err := store.CheckOutcome(&o); err != nil {
		t.Fatal(err)
	}
	count := func() (invalidated, finished int, device string) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, s.q(`SELECT
	(SELECT count(*) FROM {s}.webhook_messages WHERE type = $1), (SELECT count(*) FROM {s}.webhook_messages WHERE type = $2),
	(SELECT status FROM {s}.devices WHERE id = 'd1')`), heraldtype.WebhookDeviceInvalidated, heraldtype.WebhookDeliveryFinished).
			Scan(&invalidated, &finished, &device); err != nil {
			t.Fatal(err)
		}
		return invalidated, finished, device
	}

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
	if inv, fin, dev := count(); inv != 0 || fin != 0 || dev != string(heraldtype.DeviceActive) {
		t.Fatalf("after a rollback: %d device.invalidated, %d delivery.finished, device %s; want none, none, ACTIVE", inv, fin, dev)
	}

	if applied, err := s.Complete(ctx, []store.Outcome{o}); err != nil || applied != 1 {
		t.Fatalf("Complete = %d, %v", applied, err)
	}
	if inv, fin, dev := count(); inv != 1 || fin != 1 || dev != string(heraldtype.DeviceInvalid) {
		t.Fatalf("after the commit: %d device.invalidated, %d delivery.finished, device %s; want 1, 1, INVALID", inv, fin, dev)
	}
}
