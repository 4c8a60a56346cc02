package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

// TestEscalationRacingReceiptsPostgres races a receipt with a due
// escalation step 500 times (issue 36 item 3) on two store instances
// sharing one schema: instance A's worker claims the step and fires it
// while instance B records the receipt that answers it — an app's opened
// receipt, or every other time the inbox item marked read. Each case
// ends exactly one way: the step fired (its notification and delivery
// written) or stopped by the receipt (nothing written), never both,
// never neither; and the fire's answer says which.
func TestEscalationRacingReceiptsPostgres(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStoreConns(t, dsn, schema, 4), openStoreConns(t, dsn, schema, 4)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, a)
	ctx := t.Context()
	const cases = 500
	var fired, stopped int
	for i := range cases {
		unless := heraldtype.ReceiptOpened
		if i%2 == 1 {
			unless = heraldtype.ReceiptRead
		}
		id := fmt.Sprintf("n%04d", i)
		p := trigger(id)
		p.Notifications[0].Channels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp}
		p.Escalate = []heraldtype.EscalationStep{{After: time.Minute, Unless: unless,
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
		res, err := a.Enqueue(ctx, p)
		if err != nil || len(res.Inbox) != 1 {
			t.Fatalf("case %d: Enqueue = %+v, %v", i, res, err)
		}
		ds, err := a.ListNotificationDeliveries(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var push int64
		for _, d := range ds {
			if d.Channel == heraldtype.ChannelPush {
				push = d.ID
			}
		}
		due := now.Add(time.Minute)
		escID := "e" + id
		var outcome string
		var fireErr, receiptErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			claimed, err := a.ClaimEscalations(ctx, store.EscalationClaimParams{Owner: "a", Now: due, LeaseUntil: due.Add(time.Minute),
				Limit: 10})
			if err != nil || len(claimed) == 0 {
				fireErr = err // the receipt stopped it before the claim: nothing to fire
				return
			}
			n := heraldtype.Notification{ID: escID, UserID: "u1", Type: "reservation", Title: "Booked",
				Channels: claimed[0].Channels, Priority: heraldtype.PriorityNormal, PayloadMode: heraldtype.PayloadAlert,
				Guarantee: heraldtype.AtLeastOnce, CreatedAt: due}
			ep := store.EnqueueParams{Notifications: []heraldtype.Notification{n}, MaxAttempts: 3, PushProviders: storetest.Providers(),
				Now: due, IdempotencyKey: store.EscalationIdempotencyKey(id, 1), IdempotencyNamespace: store.EscalationNamespace,
				RequestHash: "h"}
			outcome, _, _, fireErr = a.FireEscalation(ctx, store.EscalationFire{NotificationID: id, Step: 1, Owner: "a", Now: due,
				Enqueue: &ep})
		})
		wg.Go(func() {
			<-start
			if unless == heraldtype.ReceiptRead {
				_, receiptErr = b.MarkInboxRead(ctx, "u1", []int64{res.Inbox[0].ID}, now.Add(30*time.Second))
				return
			}
			_, receiptErr = b.RecordReceipts(ctx, []store.Receipt{{DeliveryID: push, NotificationID: id, Event: unless,
				At: now.Add(30 * time.Second)}})
		})
		close(start)
		wg.Wait()
		if fireErr != nil || receiptErr != nil {
			t.Fatalf("case %d: fire %v, receipt %v", i, fireErr, receiptErr)
		}
		es, err := a.ListEscalations(ctx, id)
		if err != nil || len(es) != 1 {
			t.Fatalf("case %d: ListEscalations = %+v, %v", i, es, err)
		}
		_, nerr := a.GetNotification(ctx, escID)
		sent := nerr == nil
		switch es[0].State {
		case heraldtype.EscalationFired:
			fired++
			if !sent || es[0].NotificationID != escID || outcome != heraldtype.EscalationFired {
				t.Fatalf("case %d: step fired (%+v) but its notification: %v, fire said %q", i, es[0], nerr, outcome)
			}
		case heraldtype.EscalationStopped:
			stopped++
			if sent || es[0].Reason != "receipt "+string(unless) || outcome == heraldtype.EscalationFired {
				t.Fatalf("case %d: step stopped (%+v) but its notification sent %v, fire said %q", i, es[0], sent, outcome)
			}
		default:
			t.Fatalf("case %d: step %+v is neither fired nor stopped", i, es[0])
		}
	}
	t.Logf("%d cases: %d escalated, %d stopped by the receipt", cases, fired, stopped)
}

// TestEscalationRacingCancelsPostgres races a cancel — by id, or by the
// cancellation key the escalated notification carries too — with the
// claim and fire of a due step on another store instance, 200 times
// (issue 36 item 4): either the cancel stopped the step and nothing was
// sent again, or the step fired first and the cancel found and cancelled
// what it sent. Never a pending delivery of the escalation left behind.
func TestEscalationRacingCancelsPostgres(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStoreConns(t, dsn, schema, 4), openStoreConns(t, dsn, schema, 4)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, a)
	ctx := t.Context()
	const cases = 200
	var fired, stopped int
	for i := range cases {
		id, key := fmt.Sprintf("n%04d", i), fmt.Sprintf("cart-%d", i)
		p := trigger(id)
		p.Notifications[0].CancellationKey = key
		p.Escalate = []heraldtype.EscalationStep{{After: time.Minute, Unless: heraldtype.ReceiptOpened,
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
		if _, err := a.Enqueue(ctx, p); err != nil {
			t.Fatalf("case %d: Enqueue: %v", i, err)
		}
		due := now.Add(time.Minute)
		escID := "e" + id
		var fireErr, cancelErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			claimed, err := a.ClaimEscalations(ctx, store.EscalationClaimParams{Owner: "a", Now: due, LeaseUntil: due.Add(time.Minute),
				Limit: 10})
			if err != nil || len(claimed) == 0 {
				fireErr = err
				return
			}
			n := heraldtype.Notification{ID: escID, UserID: "u1", Type: "reservation", Title: "Booked",
				Channels: claimed[0].Channels, Priority: heraldtype.PriorityNormal, PayloadMode: heraldtype.PayloadAlert,
				Guarantee: heraldtype.AtLeastOnce, CreatedAt: due, CancellationKey: key}
			ep := store.EnqueueParams{Notifications: []heraldtype.Notification{n}, MaxAttempts: 3, PushProviders: storetest.Providers(),
				Now: due, IdempotencyKey: store.EscalationIdempotencyKey(id, 1), IdempotencyNamespace: store.EscalationNamespace,
				RequestHash: "h"}
			_, _, _, fireErr = a.FireEscalation(ctx, store.EscalationFire{NotificationID: id, Step: 1, Owner: "a", Now: due, Enqueue: &ep})
		})
		wg.Go(func() {
			<-start
			cp := store.CancelParams{NotificationIDs: []string{id}, Reason: "race", Now: due}
			if i%2 == 1 {
				cp = store.CancelParams{CancellationKey: key, UserID: "u1", Reason: "race", Now: due}
			}
			_, cancelErr = b.CancelNotifications(ctx, cp)
		})
		close(start)
		wg.Wait()
		if fireErr != nil || cancelErr != nil {
			t.Fatalf("case %d: fire %v, cancel %v", i, fireErr, cancelErr)
		}
		es, err := a.ListEscalations(ctx, id)
		if err != nil || len(es) != 1 {
			t.Fatalf("case %d: ListEscalations = %+v, %v", i, es, err)
		}
		sent, err := a.ListNotificationDeliveries(ctx, escID)
		if err != nil && heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatal(err)
		}
		switch es[0].State {
		case heraldtype.EscalationFired:
			fired++
			if len(sent) != 1 || sent[0].State != heraldtype.StateCancelled {
				t.Fatalf("case %d: the step fired before the cancel, and its deliveries are %+v, want one cancelled", i, sent)
			}
		case heraldtype.EscalationStopped:
			stopped++
			if len(sent) != 0 || es[0].Reason != "cancelled: race" {
				t.Fatalf("case %d: step stopped (%+v) and its deliveries %+v", i, es[0], sent)
			}
		default:
			t.Fatalf("case %d: step %+v is neither fired nor stopped", i, es[0])
		}
	}
	t.Logf("%d cases: %d fired and then cancelled, %d stopped by the cancel", cases, fired, stopped)
}
