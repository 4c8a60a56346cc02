package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 19 item 1: PUT creates (201) then updates (200), GET reads, the
// lists filter, DELETE removes (204, then 404); an event stops a reminder
// and says how many; bad input is a 400 naming the field.
func TestRemindersAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/cart_reminder", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	body := map[string]any{"user_id": "u1", "type": "cart_reminder", "title": "Still thinking?", "body": "Your cart is waiting",
		"schedule": map[string]any{"backoff": map[string]any{"first": "1h", "factor": 2, "max": "48h"}},
		"stop":     map[string]any{"max_sends": 5, "on_event": "checkout_completed"}}
	var r herald.Reminder
	e.do("PUT", "/v1/reminders/cart-42", body).expect(t, http.StatusCreated, &r)
	if r.Key != "cart-42" || r.NextAt.IsZero() || r.State != "active" || r.Stop.MaxSends != 5 {
		t.Fatalf("created: %+v", r)
	}
	e.do("PUT", "/v1/reminders/cart-42", body).expect(t, http.StatusOK, &r)
	e.do("GET", "/v1/reminders/cart-42", nil).expect(t, http.StatusOK, &r)
	var page herald.ReminderPage
	e.do("GET", "/v1/users/u1/reminders", nil).expect(t, http.StatusOK, &page)
	if len(page.Reminders) != 1 {
		t.Fatalf("user's reminders: %+v", page)
	}
	e.do("GET", "/v1/reminders?type=cart_reminder&state=active", nil).expect(t, http.StatusOK, &page)
	if len(page.Reminders) != 1 {
		t.Fatalf("filtered list: %+v", page)
	}
	var tr herald.TrackResult
	e.do("POST", "/v1/events", map[string]any{"name": "checkout_completed", "user_id": "u1"}).expect(t, http.StatusOK, &tr)
	if tr.StoppedReminders != 1 {
		t.Fatalf("event: %+v", tr)
	}
	e.do("GET", "/v1/reminders/cart-42", nil).expect(t, http.StatusOK, &r)
	if r.State != "stopped" || r.StopReason != "event" {
		t.Fatalf("after the event: %s %q", r.State, r.StopReason)
	}
	e.do("DELETE", "/v1/reminders/cart-42", nil).expect(t, http.StatusNoContent, nil)
	e.do("GET", "/v1/reminders/cart-42", nil).expect(t, http.StatusNotFound, nil)

	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"bad rrule":    {map[string]any{"user_id": "u1", "type": "cart_reminder", "title": "x", "schedule": map[string]any{"rrule": "FREQ=NEVER"}}, "schedule.rrule"},
		"bad duration": {map[string]any{"user_id": "u1", "type": "cart_reminder", "title": "x", "schedule": map[string]any{"backoff": map[string]any{"first": "soon", "factor": 2}}}, "schedule.backoff.first"},
		"unknown key":  {map[string]any{"user_id": "u1", "type": "cart_reminder", "title": "x", "schedule": map[string]any{"cron": "0 9 * * *"}, "color": "red"}, "color"},
	} {
		res := e.do("PUT", "/v1/reminders/bad", tc.body)
		if res.status != http.StatusBadRequest {
			t.Fatalf("%s: status %d %s", name, res.status, res.body)
		}
		if eb := res.errorBody(t); eb.Field != tc.field {
			t.Fatalf("%s: field %q, want %q (%s)", name, eb.Field, tc.field, res.body)
		}
	}
	var out map[string]int
	e.do("POST", "/v1/reminders/cancel", map[string]any{}).expect(t, http.StatusBadRequest, nil)
	e.do("POST", "/v1/reminders/cancel", map[string]any{"user_id": "u1"}).expect(t, http.StatusOK, &out)
}

// The reminder endpoints need their own scopes.
func TestRemindersScopes(t *testing.T) {
	e := newEnv(t, envOptions{})
	_, key, err := e.keys.Create(t.Context(), "notify-only", []auth.Scope{auth.ScopeNotificationsWrite})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/v1/reminders/k"}, {"GET", "/v1/reminders/k"}, {"DELETE", "/v1/reminders/k"},
		{"GET", "/v1/reminders"}, {"POST", "/v1/reminders/cancel"}, {"POST", "/v1/events"},
		{"GET", "/v1/users/u1/reminders"},
	} {
		if res := e.do(c.method, c.path, map[string]any{}, "Authorization", "Bearer "+key); res.status != http.StatusForbidden {
			t.Fatalf("%s %s with notifications:write: %d", c.method, c.path, res.status)
		}
	}
}
