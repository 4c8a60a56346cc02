package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 22 item 4 (S0.4): the dead-letter list hands out delivery ids, and
// GET /v1/deliveries/{id} answers with that delivery and its timeline,
// under the list's scope; an unknown id is 404, a malformed one 400 on id.
func TestGetDeliveryByID(t *testing.T) {
	t.Parallel()
	p := &fakeProvider{fail: &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: "SENDER_ID_MISMATCH", Message: "wrong sender"}}
	e := newEnv(t, envOptions{workers: true, provider: p})
	e.seedUser("alice")
	var trig triggerAnswer
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "reservation", "title": "Confirmed"}).
		expect(t, http.StatusAccepted, &trig)
	var page herald.DeliveryPage
	waitFor(t, "the dead letter", func() bool {
		e.do("GET", "/v1/deliveries?state=dead", nil).expect(t, 200, &page)
		return len(page.Deliveries) == 1
	})
	id := page.Deliveries[0].ID
	// By channel, as the console filters (issue 34 item 2).
	e.do("GET", "/v1/deliveries?state=dead&channel=push", nil).expect(t, 200, &page)
	if len(page.Deliveries) != 1 || page.Deliveries[0].ID != id {
		t.Fatalf("the push dead letters: %+v", page.Deliveries)
	}
	e.do("GET", "/v1/deliveries?state=dead&channel=email", nil).expect(t, 200, &page)
	if len(page.Deliveries) != 0 {
		t.Fatalf("the email dead letters: %+v", page.Deliveries)
	}
	if r := e.do("GET", "/v1/deliveries?channel=pigeon", nil); r.status != 400 || r.errorBody(t).Field != "channel" {
		t.Fatalf("an unknown channel: %d %s", r.status, r.body)
	}
	var replayed struct{ Replayed int }
	e.do("POST", "/v1/deliveries/replay", map[string]any{"channel": "email"}).expect(t, 200, &replayed)
	if replayed.Replayed != 0 {
		t.Fatalf("replaying the email dead letters replayed %d", replayed.Replayed)
	}
	e.do("GET", "/v1/deliveries?state=dead", nil).expect(t, 200, &page)
	id = page.Deliveries[0].ID

	reader := "Bearer " + e.key(auth.ScopeDeliveriesRead)
	var d heraldtype.Delivery
	e.do("GET", fmt.Sprintf("/v1/deliveries/%d", id), nil, "Authorization", reader).expect(t, 200, &d)
	if d.ID != id || d.NotificationID != trig.ID || d.State != heraldtype.StateDead || d.LastErrorCode != "SENDER_ID_MISMATCH" {
		t.Fatalf("delivery = %+v", d)
	}
	if len(d.Attempts) != 1 || d.Attempts[0].Outcome != heraldtype.OutcomeDead || d.Attempts[0].ErrorCode != "SENDER_ID_MISMATCH" {
		t.Fatalf("timeline = %+v", d.Attempts)
	}

	// The list's scope, no other.
	other := "Bearer " + e.key(auth.ScopeNotificationsRead)
	if r := e.do("GET", fmt.Sprintf("/v1/deliveries/%d", id), nil, "Authorization", other); r.status != 403 ||
		r.errorBody(t).Code != heraldtype.EPERMISSIONDENIED {
		t.Fatalf("without deliveries:read: %d %s", r.status, r.body)
	}
	if r := e.do("GET", fmt.Sprintf("/v1/deliveries/%d", id), nil, "Authorization", ""); r.status != 401 {
		t.Fatalf("without credentials: %d %s", r.status, r.body)
	}

	r := e.do("GET", "/v1/deliveries/987654321", nil)
	if eb := r.errorBody(t); r.status != 404 || eb.Code != heraldtype.ENOTFOUND || eb.Message != "delivery 987654321 not found" {
		t.Fatalf("unknown id: %d %s", r.status, r.body)
	}
	for _, bad := range []string{"abc", "0", "-1", "1.5", "99999999999999999999"} {
		r := e.do("GET", "/v1/deliveries/"+bad, nil)
		if eb := r.errorBody(t); r.status != 400 || eb.Code != heraldtype.EINVALID || eb.Field != "id" {
			t.Errorf("id %q: %d %s, want 400 on id", bad, r.status, r.body)
		}
	}
}
