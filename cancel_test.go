package herald

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// TestCancelByKey: a cancel by key ends every pending delivery of that
// user's notifications with the key — scheduled for later or due — and
// no other's; nothing of them is sent; the timeline shows the decision
// with its reason, the status is CANCELLED (issue 36 items 4 and 5).
func TestCancelByKey(t *testing.T) {
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	p.device("u2", "d2", "tok-2")
	later := p.clock.Now().Add(time.Hour)
	a := p.enqueue(Request{UserID: "u1", CancellationKey: "order-7"}).Notifications[0].ID
	b := p.enqueue(Request{UserID: "u1", CancellationKey: "order-7", SendAt: &later}).Notifications[0].ID
	other := p.enqueue(Request{UserID: "u2", CancellationKey: "order-7"}).Notifications[0].ID
	res, err := p.client.Cancel(p.ctx, CancelRequest{CancellationKey: "order-7", UserID: "u1", By: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotificationIDs) != 2 || res.Cancelled != 2 || res.Sent+res.NotSent+res.InFlight != 0 || len(res.Deliveries) != 2 {
		t.Fatalf("cancel = %+v, want u1's two notifications cancelled", res)
	}
	for _, d := range res.Deliveries {
		if d.Outcome != CancelCancelled || d.State != heraldtype.StateCancelled || d.Channel != heraldtype.ChannelPush {
			t.Errorf("delivery %+v", d)
		}
	}
	p.clock.Advance(2 * time.Hour)
	p.work()
	if n := len(p.em.MessagesTo("tok-1")); n != 0 {
		t.Errorf("u1 got %d pushes after the cancel", n)
	}
	if n := len(p.em.MessagesTo("tok-2")); n != 1 {
		t.Errorf("u2 got %d pushes, want 1: another user's notification is not cancelled by u1's key", n)
	}
	for _, id := range []string{a, b} {
		st := p.status(id)
		if st.Status != heraldtype.HistoryCancelled || st.Reason != heraldtype.CodeCancelled || st.CancellationKey != "order-7" {
			t.Fatalf("%s: status %s (%s), key %q", id, st.Status, st.Reason, st.CancellationKey)
		}
		at := st.Deliveries[0].Attempts
		last := at[len(at)-1]
		if last.Outcome != heraldtype.OutcomeCancelled || !strings.Contains(last.Error, `by shop with cancellation key "order-7"`) {
			t.Errorf("%s: last attempt %+v, want the cancel with its reason", id, last)
		}
	}
	if st := p.status(other); st.Status != heraldtype.HistorySent {
		t.Errorf("u2's notification is %s", st.Status)
	}
	// Again, and for every user: nothing left to decide; each delivery is
	// reported as it ended.
	res, err = p.client.Cancel(p.ctx, CancelRequest{CancellationKey: "order-7"})
	if err != nil || len(res.NotificationIDs) != 3 || res.Cancelled != 2 || res.Sent != 1 || len(res.Deliveries) != 3 {
		t.Fatalf("second cancel = %+v, %v", res, err)
	}
	// A key nobody used: an empty answer, not an error.
	res, err = p.client.Cancel(p.ctx, CancelRequest{CancellationKey: "never"})
	if err != nil || len(res.NotificationIDs) != 0 || res.Deliveries == nil {
		t.Fatalf("cancel of an unused key = %+v, %v", res, err)
	}
}

// TestCancelBadRequest: a selection that is not exactly one, or a bad
// value, is refused naming the field.
func TestCancelBadRequest(t *testing.T) {
	p := newPipeline(t, nil)
	for _, tc := range []struct {
		r     CancelRequest
		field string
	}{
		{CancelRequest{}, "notification_id"},
		{CancelRequest{UserID: "u1"}, "cancellation_key"},
		{CancelRequest{NotificationID: "n1", CancellationKey: "k"}, "notification_id"},
		{CancelRequest{NotificationID: "n1", UserID: "u1"}, "notification_id"},
		{CancelRequest{NotificationID: "a/b"}, "notification_id"},
		{CancelRequest{CancellationKey: strings.Repeat("k", MaxCancellationKeyLength+1)}, "cancellation_key"},
		{CancelRequest{CancellationKey: "k\x00"}, "cancellation_key"},
		{CancelRequest{CancellationKey: "k", UserID: "u 1"}, "user_id"},
	} {
		_, err := p.client.Cancel(p.ctx, tc.r)
		var e *heraldtype.Error
		if !errors.As(err, &e) || e.Code != heraldtype.EINVALID || e.Field != tc.field {
			t.Errorf("Cancel(%+v) = %v, want %s on %s", tc.r, err, heraldtype.EINVALID, tc.field)
		}
	}
	if _, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "t", CancellationKey: "k\u202e"}); heraldtype.ErrorCode(err) != heraldtype.EINVALID ||
		!strings.HasPrefix(heraldtype.ErrorMessage(err), "cancellation_key") {
		t.Errorf("trigger with a bidi character in its key = %v", err)
	}
}

// blockingProvider holds each send until released, and says when one
// started.
type blockingProvider struct {
	started chan string
	release chan struct{}
}

func (b *blockingProvider) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	b.started <- m.Key
	select {
	case <-b.release:
		return "pm-1", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// roundStore signals each CancelNotifications that has returned.
type roundStore struct {
	store.Store
	rounds chan store.CancelResult
}

func (s *roundStore) CancelNotifications(ctx context.Context, p store.CancelParams) (store.CancelResult, error) {
	res, err := s.Store.CancelNotifications(ctx, p)
	select {
	case s.rounds <- res:
	default:
	}
	return res, err
}

// TestCancelWaitsForTheSendInFlight: a cancel of a notification whose
// delivery a worker is sending waits for the outcome and reports it sent;
// with no wait allowed it reports it in flight.
func TestCancelWaitsForTheSendInFlight(t *testing.T) {
	for _, wait := range []time.Duration{0, -1} {
		bp := &blockingProvider{started: make(chan string, 1), release: make(chan struct{})}
		rs := &roundStore{rounds: make(chan store.CancelResult, 1)}
		p := newPipeline(t, func(c *Config) {
			c.Providers = map[string]Provider{"fcm": bp}
			c.CancelWait = wait
			rs.Store = c.Store
			c.Store = rs
		})
		p.device("u1", "d1", "tok-1")
		n := p.enqueue(Request{UserID: "u1"}).Notifications[0].ID
		worked := make(chan error, 1)
		go func() { _, err := p.client.runOnce(p.ctx); worked <- err }()
		<-bp.started // claimed and in flight
		got := make(chan CancelResult, 1)
		go func() {
			res, err := p.client.Cancel(p.ctx, CancelRequest{NotificationID: n})
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		if wait < 0 {
			res := <-got
			if res.InFlight != 1 || res.Deliveries[0].Outcome != CancelInFlight || res.Deliveries[0].State != heraldtype.StateLeased {
				t.Errorf("cancel without a wait = %+v, want the delivery in flight", res)
			}
			close(bp.release)
			if err := <-worked; err != nil {
				t.Fatal(err)
			}
			continue
		}
		// The cancel's first round found the delivery in flight; only then
		// does the send end.
		if first := <-rs.rounds; len(first.Deliveries) != 1 || first.Deliveries[0].State != heraldtype.StateLeased {
			t.Fatalf("first round = %+v, want the delivery leased", first)
		}
		close(bp.release)
		if err := <-worked; err != nil {
			t.Fatal(err)
		}
		res := <-got
		if res.Sent != 1 || res.Cancelled != 0 || res.Deliveries[0].Outcome != CancelSent || res.Deliveries[0].State != heraldtype.StateSent {
			t.Errorf("cancel racing a send in flight = %+v, want it reported sent", res)
		}
	}
}

// TestEventCancelsByKey: an event carrying a cancellation key cancels its
// user's notifications of that key before Track returns, and the
// timeline names the event; an event without a user cancels every
// user's; a bad key is refused naming the field (issue 36 item 4).
func TestEventCancelsByKey(t *testing.T) {
	p := newPipeline(t, nil)
	p.device("u1", "d1", "tok-1")
	p.device("u2", "d2", "tok-2")
	later := p.clock.Now().Add(time.Hour)
	n1 := p.enqueue(Request{UserID: "u1", CancellationKey: "order-7", SendAt: &later}).Notifications[0].ID
	n2 := p.enqueue(Request{UserID: "u2", CancellationKey: "order-7", SendAt: &later}).Notifications[0].ID
	out, err := p.client.Track(p.ctx, Event{Name: "order_shipped", UserID: "u1", CancellationKey: "order-7"})
	if err != nil || out.CancelledDeliveries != 1 {
		t.Fatalf("Track = %+v, %v; want one delivery cancelled", out, err)
	}
	st := p.status(n1)
	at := st.Deliveries[0].Attempts
	if st.Status != heraldtype.HistoryCancelled || !strings.Contains(at[len(at)-1].Error, "by event order_shipped") {
		t.Fatalf("u1's notification: %s, timeline %+v", st.Status, at)
	}
	if st := p.status(n2); st.Status != heraldtype.HistoryPending {
		t.Fatalf("u2's notification is %s; an event of u1 cancels only u1's", st.Status)
	}
	if out, err := p.client.Track(p.ctx, Event{Name: "sale_ended", CancellationKey: "order-7"}); err != nil || out.CancelledDeliveries != 1 {
		t.Fatalf("Track without a user = %+v, %v; want u2's cancelled", out, err)
	}
	_, err = p.client.Track(p.ctx, Event{Name: "x", CancellationKey: "k\x01"})
	var e *heraldtype.Error
	if !errors.As(err, &e) || e.Field != "cancellation_key" {
		t.Fatalf("Track with a control character in the key = %v", err)
	}
}
