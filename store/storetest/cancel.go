package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// cancel runs CancelNotifications and fails the test on an error.
func (f *fixture) cancel(p store.CancelParams) store.CancelResult {
	f.t.Helper()
	res, err := f.s.CancelNotifications(f.ctx, p)
	if err != nil {
		f.t.Fatalf("CancelNotifications(%+v): %v", p, err)
	}
	return res
}

// byState counts a cancel's deliveries by state, and those it moved.
func byState(res store.CancelResult) (map[heraldtype.DeliveryState]int, int) {
	m, moved := map[heraldtype.DeliveryState]int{}, 0
	for _, d := range res.Deliveries {
		m[d.State]++
		if d.Cancelled {
			moved++
		}
	}
	return m, moved
}

// testCancel checks CancelNotifications (issue 36 item 4): by id it moves
// the pending deliveries to cancelled with a cancelled attempt row, leaves
// a leased one to its worker (whose outcome still applies) and reports it
// leased with its lease; by key it selects one user's or every user's
// notifications of that key and no other; an outcome for a lease of a
// delivery cancelled since changes nothing; the status is CANCELLED;
// a cancel writes delivery.finished and notification.status_changed; and
// a selection that is not exactly one is refused naming the field.
func testCancel(t *testing.T, newStore NewStore) {
	const reason = "cancelled by the test"
	t.Run("ByID", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		n := f.push("u1")[0]
		jobs := f.claim("w", at(time.Second), 1)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want 1", len(jobs))
		}
		res := f.cancel(store.CancelParams{NotificationIDs: []string{n.ID, "n-missing"}, Reason: reason, Now: at(2 * time.Second)})
		states, moved := byState(res)
		if len(res.NotificationIDs) != 1 || res.NotificationIDs[0] != n.ID || moved != 1 ||
			states[heraldtype.StateCancelled] != 1 || states[heraldtype.StateLeased] != 1 {
			t.Fatalf("cancel = %+v, want one cancelled and one leased of %s", res, n.ID)
		}
		for _, d := range res.Deliveries {
			if d.State == heraldtype.StateLeased && !d.LeaseUntil.Equal(at(time.Second).Add(time.Minute)) {
				t.Errorf("leased delivery's LeaseUntil = %v, want the claim's lease", d.LeaseUntil)
			}
		}
		for _, d := range f.deliveries(n.ID) {
			if d.ID == jobs[0].Delivery.ID {
				continue
			}
			last := d.Attempts[len(d.Attempts)-1]
			if d.State != heraldtype.StateCancelled || d.LastErrorCode != heraldtype.CodeCancelled || d.LastError != reason ||
				last.Outcome != heraldtype.OutcomeCancelled || last.ErrorCode != heraldtype.CodeCancelled || last.Error != reason {
				t.Fatalf("cancelled delivery = %+v, last attempt %+v", d, last)
			}
		}
		// The worker's outcome is guarded by its lease, which the cancel
		// left alone: it applies.
		f.complete(1, outcome(jobs[0], store.Sent{}, at(3*time.Second)))
		if st, _, _ := rules.DeliveriesStatus(n.Channels, f.deliveries(n.ID)); st != heraldtype.HistorySent {
			t.Errorf("status after the send = %s, want SENT", st)
		}
		// Again: nothing is left to cancel.
		res = f.cancel(store.CancelParams{NotificationIDs: []string{n.ID}, Reason: reason, Now: at(4 * time.Second)})
		if states, moved := byState(res); moved != 0 || states[heraldtype.StateSent] != 1 || states[heraldtype.StateCancelled] != 1 {
			t.Fatalf("second cancel = %+v", res)
		}
	})
	t.Run("ByKey", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u2", "a2", heraldtype.PlatformAndroid)
		keyed := func(user, key string) heraldtype.Notification {
			n := f.notification(user)
			n.CancellationKey = key
			return n
		}
		u1a, u2a, u1b, u1none := keyed("u1", "cart-1"), keyed("u2", "cart-1"), keyed("u1", "cart-2"), keyed("u1", "")
		f.enqueue(params(u1a, u2a, u1b, u1none))
		if got, err := f.s.GetNotification(f.ctx, u1a.ID); err != nil || got.CancellationKey != "cart-1" {
			t.Fatalf("GetNotification = %+v, %v; want cancellation key cart-1", got, err)
		}
		res := f.cancel(store.CancelParams{CancellationKey: "cart-1", UserID: "u1", Reason: reason, Now: at(time.Second)})
		if _, moved := byState(res); len(res.NotificationIDs) != 1 || res.NotificationIDs[0] != u1a.ID || moved != 1 {
			t.Fatalf("cancel of u1's cart-1 = %+v, want %s only", res, u1a.ID)
		}
		res = f.cancel(store.CancelParams{CancellationKey: "cart-1", Reason: reason, Now: at(time.Second)})
		if _, moved := byState(res); len(res.NotificationIDs) != 2 || moved != 1 || res.Deliveries[0].NotificationID > res.Deliveries[1].NotificationID {
			t.Fatalf("cancel of every user's cart-1 = %+v, want both, u2's moved", res)
		}
		for _, n := range []heraldtype.Notification{u1b, u1none} {
			if d := f.delivery(n.ID); d.State != heraldtype.StatePending {
				t.Errorf("%s (key %q) is %s, want pending", n.ID, n.CancellationKey, d.State)
			}
		}
		if res := f.cancel(store.CancelParams{CancellationKey: "nothing", Reason: reason, Now: at(time.Second)}); len(res.NotificationIDs) != 0 {
			t.Errorf("cancel of an unknown key = %+v", res)
		}
		// Only the pending one of u1 is claimed: the cancelled are not.
		if jobs := f.claim("w", at(time.Hour), 10); len(jobs) != 2 {
			t.Errorf("claimed %d after the cancels, want the two not cancelled", len(jobs))
		}
	})
	t.Run("StaleOutcome", func(t *testing.T) {
		// A delivery released for a retry (pending again), then cancelled:
		// the old lease's outcome finds it no longer leased.
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		n := f.push("u1")[0]
		j := f.claim("w", at(time.Second), 1)[0]
		f.complete(1, outcome(j, store.Released{}, at(2*time.Second)))
		f.cancel(store.CancelParams{NotificationIDs: []string{n.ID}, Reason: reason, Now: at(3 * time.Second)})
		f.complete(0, outcome(j, store.Sent{}, at(4*time.Second)))
		if d := f.delivery(n.ID); d.State != heraldtype.StateCancelled {
			t.Fatalf("delivery is %s after a stale outcome, want cancelled", d.State)
		}
		st, reasonCode, _ := rules.DeliveriesStatus(n.Channels, f.deliveries(n.ID))
		if st != heraldtype.HistoryCancelled || reasonCode != heraldtype.CodeCancelled {
			t.Errorf("status = %s (%s), want CANCELLED (cancelled)", st, reasonCode)
		}
		page, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{UserID: "u1", Status: heraldtype.HistoryCancelled, Limit: 10}, 0)
		if err != nil || len(page) != 1 || page[0].Status != heraldtype.HistoryCancelled {
			t.Errorf("history filtered by CANCELLED = %+v, %v", page, err)
		}
	})
	t.Run("Webhooks", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		n := f.push("u1")[0]
		f.cancel(store.CancelParams{NotificationIDs: []string{n.ID}, Reason: reason, Now: at(time.Second)})
		if ms := f.messagesOf("all", heraldtype.WebhookDeliveryFinished); len(ms) != 2 {
			t.Fatalf("%d delivery.finished, want 2", len(ms))
		}
		ms := f.messagesOf("all", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 1 {
			t.Fatalf("%d status events, want 1", len(ms))
		}
		f.wantStatusEvent(ms[0], n, 0, at(time.Second), heraldtype.HistoryCancelled)
	})
	t.Run("BadSelection", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		for _, tc := range []struct {
			p     store.CancelParams
			field string
		}{
			{store.CancelParams{}, "notification_id"},
			{store.CancelParams{UserID: "u1"}, "cancellation_key"},
			{store.CancelParams{NotificationIDs: []string{"n1"}, CancellationKey: "k"}, "notification_id"},
		} {
			_, err := f.s.CancelNotifications(f.ctx, tc.p)
			if !isFieldError(err, tc.field) {
				t.Errorf("CancelNotifications(%+v) = %v, want %s on %s", tc.p, err, heraldtype.EINVALID, tc.field)
			}
		}
	})
}

// isFieldError reports whether err is an EINVALID error naming field.
func isFieldError(err error, field string) bool {
	var e *heraldtype.Error
	return errors.As(err, &e) && e.Code == heraldtype.EINVALID && e.Field == field
}
