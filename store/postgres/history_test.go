package postgres_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/rules"
	"github.com/jackc/pgx/v5"
)

// The history's reason is the greatest error code in byte order, as the
// detail's (rules.Tally), whatever the database's collation: under a
// linguistic one "UNREGISTERED" sorts after "no_address" (issue 22 item 1).
func TestHistoryReasonInByteOrder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, schema := pgtest.NewSchema(t)
	s := openStore(t, dsn, schema)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const collation = "en-US-x-icu"
	var found bool
	if err := s.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_collation WHERE collname = $1)`, collation).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Skipf("this PostgreSQL has no %s collation (built without ICU)", collation)
	}
	if _, err := s.Pool().Exec(ctx, `ALTER TABLE `+pgx.Identifier{schema, "deliveries"}.Sanitize()+
		` ALTER COLUMN last_error_code TYPE text COLLATE "`+collation+`"`); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u1", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertDevice(ctx, heraldtype.Device{ID: "d1", UserID: "u1", Platform: heraldtype.PlatformAndroid,
		Token: "tok-d1", PushOptIn: true}, now, 0); err != nil {
		t.Fatal(err)
	}
	n := heraldtype.Notification{ID: "n1", UserID: "u1", Type: "t", Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelEmail},
		Priority: heraldtype.PriorityNormal, PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now}
	if _, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: []heraldtype.Notification{n}, MaxAttempts: 3, Now: now,
		PushProviders:    map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm"},
		ChannelProviders: map[heraldtype.Channel]string{heraldtype.ChannelEmail: "smtp"}}); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Claim(ctx, store.ClaimParams{Owner: "w", Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("Claim = %d jobs, %v", len(jobs), err)
	}
	dead := store.Outcome{DeliveryID: jobs[0].Delivery.ID, Owner: "w", Attempt: jobs[0].Delivery.Attempt, At: now}.
		To(store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED", Error: "UNREGISTERED"}})
	if _, err := s.Complete(ctx, []store.Outcome{dead}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.ListNotificationDeliveries(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus, wantReason, _ := rules.DeliveriesStatus(n.Channels, ds)
	es, _, err := s.ListHistory(ctx, heraldtype.HistoryFilter{}, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("ListHistory = %+v, %v", es, err)
	}
	if es[0].Status != wantStatus || es[0].Reason != wantReason || wantReason != store.CodeNoAddress {
		t.Fatalf("history says %s %q, the rule over the deliveries %s %q (want no_address)", es[0].Status, es[0].Reason, wantStatus, wantReason)
	}
}
