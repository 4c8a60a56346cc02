package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// S0.4, S4.6: a permanently failing delivery becomes a dead letter that
// operators can find by state and error code, inspect attempt by attempt,
// and replay one by one or in bulk.
func TestDeadLettersListAndReplay(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{fail: &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "THIRD_PARTY_AUTH_ERROR", Message: "bad APNs certificate"}}
	e := newEnv(t, envOptions{workers: true, provider: p})
	e.seedUser("alice")

	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "reservation", "title": "Confirmed"}).
		expect(t, http.StatusAccepted, &trig)

	dead := func(query string) []heraldtype.Delivery {
		t.Helper()
		var page herald.DeliveryPage
		e.do("GET", "/v1/deliveries?"+query, nil).expect(t, 200, &page)
		return page.Deliveries
	}
	deadWithReplays := func(n int) func() bool {
		return func() bool {
			ds := dead("state=dead")
			return len(ds) == 1 && ds[0].ReplayCount == n
		}
	}
	waitFor(t, "the delivery to die", deadWithReplays(0))

	from := url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339))
	ds := dead("state=dead&error_code=THIRD_PARTY_AUTH_ERROR&type=reservation&user_id=alice&notification_id=" + trig.ID + "&from=" + from + "&limit=10")
	if len(ds) != 1 {
		t.Fatalf("filtered dead letters = %+v", ds)
	}
	d := ds[0]
	if d.LastErrorCode != "THIRD_PARTY_AUTH_ERROR" || d.NotificationID != trig.ID {
		t.Fatalf("dead letter = %+v", d)
	}
	if other := dead("state=dead&error_code=UNREGISTERED"); len(other) != 0 {
		t.Fatalf("error_code filter let through %+v", other)
	}

	// The timeline shows the attempt with its outcome and error code.
	var st herald.NotificationStatus
	e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
	if st.Status != heraldtype.HistoryFailed || st.Reason != "THIRD_PARTY_AUTH_ERROR" || len(st.Deliveries) != 1 || len(st.Deliveries[0].Attempts) == 0 {
		t.Fatalf("status = %+v", st)
	}
	if a := st.Deliveries[0].Attempts[0]; a.Outcome != heraldtype.OutcomeDead || a.ErrorCode != "THIRD_PARTY_AUTH_ERROR" || a.At.IsZero() {
		t.Fatalf("attempt = %+v", a)
	}

	// Replay one: it is pending again and dies again (the provider still fails).
	var replayed heraldtype.Delivery
	e.do("POST", fmt.Sprintf("/v1/deliveries/%d/replay", d.ID), nil).expect(t, 200, &replayed)
	if replayed.ID != d.ID || replayed.ReplayCount != 1 {
		t.Fatalf("replayed = %+v", replayed)
	}
	waitFor(t, "the replayed delivery to die again", deadWithReplays(1))

	// Bulk replay by filter.
	var bulk struct {
		Replayed int `json:"replayed"`
	}
	e.do("POST", "/v1/deliveries/replay", map[string]string{"state": "dead", "error_code": "UNREGISTERED"}).expect(t, 200, &bulk)
	if bulk.Replayed != 0 {
		t.Fatalf("bulk replay of another error code replayed %d", bulk.Replayed)
	}
	e.do("POST", "/v1/deliveries/replay", map[string]string{"state": "dead", "error_code": "THIRD_PARTY_AUTH_ERROR", "type": "reservation", "user_id": "alice", "from": time.Now().Add(-time.Hour).Format(time.RFC3339)}).
		expect(t, 200, &bulk)
	if bulk.Replayed != 1 {
		t.Fatalf("bulk replay replayed %d, want 1", bulk.Replayed)
	}
	waitFor(t, "the bulk-replayed delivery to die again", deadWithReplays(2))
}

// Replaying a delivery that was sent is a conflict, not a silent resend.
func TestReplayOfSentDeliveryConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{workers: true})
	e.seedUser("alice")
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "hello", "title": "Hi"}).
		expect(t, http.StatusAccepted, &trig)
	var st herald.NotificationStatus
	waitFor(t, "the delivery to be sent", func() bool {
		e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
		return st.Status == heraldtype.HistorySent
	})
	if a := st.Deliveries[0].Attempts; len(a) == 0 || a[len(a)-1].ProviderMessageID == "" {
		t.Fatalf("sent delivery without a provider message id: %+v", st.Deliveries[0])
	}
	r := e.do("POST", fmt.Sprintf("/v1/deliveries/%d/replay", st.Deliveries[0].ID), nil)
	if r.status != http.StatusConflict || r.errorBody(t).Code != heraldtype.ECONFLICT {
		t.Fatalf("replay of a sent delivery: %d %s", r.status, r.body)
	}
}
