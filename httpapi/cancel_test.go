package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// TestCancelRoute: POST /v1/notifications/cancel by key cancels the
// pending deliveries of that user's keyed notifications and answers what
// it decided; the notification then reads CANCELLED with the decision on
// its timeline, naming the API key; by id it reports a delivery already
// cancelled as cancelled (issue 36 items 4 and 5).
func TestCancelRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	e.seedUser("bob")
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var a, b triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "cart", "title": "Your cart",
		"cancellation_key": "order-7", "send_at": later}).expect(t, http.StatusAccepted, &a)
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "bob", "type": "cart", "title": "Your cart",
		"cancellation_key": "order-7"}).expect(t, http.StatusAccepted, &b)

	var res herald.CancelResult
	e.do("POST", "/v1/notifications/cancel", map[string]any{"cancellation_key": "order-7", "user_id": "alice"}).
		expect(t, http.StatusOK, &res)
	if len(res.NotificationIDs) != 1 || res.NotificationIDs[0] != a.ID || res.Cancelled != 1 || len(res.Deliveries) != 1 ||
		res.Deliveries[0].Outcome != herald.CancelCancelled || res.Deliveries[0].State != heraldtype.StateCancelled {
		t.Fatalf("cancel = %+v", res)
	}
	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+a.ID, nil).expect(t, http.StatusOK, &st)
	if st.Status != heraldtype.HistoryCancelled || st.Reason != heraldtype.CodeCancelled || st.CancellationKey != "order-7" ||
		st.ChannelStatus[heraldtype.ChannelPush] != heraldtype.HistoryCancelled {
		t.Fatalf("status = %+v", st)
	}
	at := st.Deliveries[0].Attempts
	if last := at[len(at)-1]; last.Outcome != heraldtype.OutcomeCancelled || !strings.Contains(last.Error, "by API key") ||
		!strings.Contains(last.Error, `"order-7"`) {
		t.Fatalf("timeline's last row = %+v", last)
	}
	// The history filters by the new status.
	var page herald.HistoryPage
	e.do("GET", "/v1/notifications?status=cancelled", nil).expect(t, http.StatusOK, &page)
	if len(page.Notifications) != 1 || page.Notifications[0].NotificationID != a.ID {
		t.Fatalf("history of CANCELLED = %+v", page)
	}
	// bob's is untouched; cancelling alice's by id again reports it.
	var bs herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+b.ID, nil).expect(t, http.StatusOK, &bs)
	if bs.Status != heraldtype.HistoryPending {
		t.Errorf("bob's notification is %s", bs.Status)
	}
	e.do("POST", "/v1/notifications/cancel", map[string]any{"notification_id": a.ID}).expect(t, http.StatusOK, &res)
	if res.Cancelled != 1 || res.Deliveries[0].Outcome != herald.CancelCancelled {
		t.Fatalf("second cancel = %+v", res)
	}
	// Nothing selected: an empty answer.
	e.do("POST", "/v1/notifications/cancel", map[string]any{"notification_id": "nope"}).expect(t, http.StatusOK, &res)
	if len(res.NotificationIDs) != 0 || len(res.Deliveries) != 0 {
		t.Fatalf("cancel of an unknown id = %+v", res)
	}
}

// TestCancelRouteBadInput: every malformed cancel is a 400 naming the
// field, and the route needs notifications:write.
func TestCancelRouteBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "notification_id"},
		{map[string]any{"user_id": "alice"}, "cancellation_key"},
		{map[string]any{"notification_id": "n1", "cancellation_key": "k"}, "notification_id"},
		{map[string]any{"notification_id": "a/b"}, "notification_id"},
		{map[string]any{"cancellation_key": strings.Repeat("k", 256)}, "cancellation_key"},
		{map[string]any{"cancellation_key": "k\u0007"}, "cancellation_key"},
		{map[string]any{"cancellation_key": 7}, "cancellation_key"},
		{map[string]any{"cancellation_key": "k", "extra": true}, "extra"},
	} {
		r := e.do("POST", "/v1/notifications/cancel", tc.body)
		if r.status != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400; %s", tc.body, r.status, r.body)
			continue
		}
		if eb := r.errorBody(t); eb.Code != heraldtype.EINVALID || eb.Field != tc.field {
			t.Errorf("%v: %+v, want %s on %s", tc.body, eb, heraldtype.EINVALID, tc.field)
		}
	}
	// A trigger's cancellation_key is checked as its dedupe_key is.
	r := e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "cart", "title": "t",
		"cancellation_key": strings.Repeat("k", 256)})
	if eb := r.errorBody(t); r.status != http.StatusBadRequest || eb.Field != "cancellation_key" {
		t.Errorf("trigger with a long cancellation_key: %d %+v", r.status, eb)
	}
	_, readOnly, err := e.keys.Create(t.Context(), "reader", []auth.Scope{auth.ScopeNotificationsRead})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/v1/notifications/cancel", map[string]any{"cancellation_key": "k"}, "Authorization", "Bearer "+readOnly); r.status != http.StatusForbidden {
		t.Errorf("a notifications:read key cancelled: %d", r.status)
	}
}

// TestEventCancelsByKeyRoute: POST /v1/events with a cancellation_key
// cancels the user's notifications of the key before it answers.
func TestEventCancelsByKeyRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	var a triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "cart", "title": "Your cart",
		"cancellation_key": "order-8"}).expect(t, http.StatusAccepted, &a)
	var out herald.TrackResult
	e.do("POST", "/v1/events", map[string]any{"name": "order_shipped", "user_id": "alice", "cancellation_key": "order-8"}).
		expect(t, http.StatusOK, &out)
	if out.CancelledDeliveries != 1 {
		t.Fatalf("event = %+v, want one delivery cancelled", out)
	}
	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+a.ID, nil).expect(t, http.StatusOK, &st)
	if st.Status != heraldtype.HistoryCancelled {
		t.Fatalf("status %s", st.Status)
	}
	if r := e.do("POST", "/v1/events", map[string]any{"name": "x", "cancellation_key": strings.Repeat("k", 256)}); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "cancellation_key" {
		t.Fatalf("long key: %d %s", r.status, r.body)
	}
}

// cancelRounds signals each CancelNotifications that returned.
type cancelRounds struct {
	store.Store
	rounds chan store.CancelResult
}

func (s *cancelRounds) CancelNotifications(ctx context.Context, p store.CancelParams) (store.CancelResult, error) {
	res, err := s.Store.CancelNotifications(ctx, p)
	select {
	case s.rounds <- res:
	default:
	}
	return res, err
}

// TestCancelRouteWaitsPastTheStoreTimeout: the cancel's wait for a send in
// flight is not store time: with a store timeout shorter than the send,
// the answer still waits for it and reports it sent, rather than a 503.
func TestCancelRouteWaitsPastTheStoreTimeout(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{started: make(chan string, 1), hold: make(chan struct{})}
	rounds := &cancelRounds{rounds: make(chan store.CancelResult, 1)}
	// A store timeout a loaded machine's store calls still meet (CI under
	// load took more than 300 ms for one), and a send twice as long.
	e := newEnv(t, envOptions{workers: true, provider: p, storeTimeout: 2 * time.Second,
		wrapStore: func(s store.Store) store.Store { rounds.Store = s; return rounds }})
	e.seedUser("alice")
	var a triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "cart", "title": "Your cart"}).
		expect(t, http.StatusAccepted, &a)
	<-p.started // the worker is sending it
	answer := make(chan response, 1)
	go func() { answer <- e.do("POST", "/v1/notifications/cancel", map[string]any{"notification_id": a.ID}) }()
	if first := <-rounds.rounds; len(first.Deliveries) != 1 || first.Deliveries[0].State != heraldtype.StateLeased {
		t.Fatalf("first round = %+v, want the delivery in flight", first)
	}
	// The send takes longer than the store timeout.
	time.AfterFunc(4*time.Second, func() { close(p.hold) })
	var res herald.CancelResult
	(<-answer).expect(t, http.StatusOK, &res)
	if res.Sent != 1 || res.Deliveries[0].Outcome != herald.CancelSent {
		t.Fatalf("cancel = %+v, want the send in flight reported sent", res)
	}
}
