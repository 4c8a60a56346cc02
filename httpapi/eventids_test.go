package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 31 item 5: an event id is the calling key's own, as a trigger's
// Idempotency-Key is. Another key sending your id neither reads your
// event's outcome nor, sending it first, suppresses your event — each is
// an event of its own with its own run; the same key sending the id again
// is answered from the record, and with another body is a 409.
func TestEventIDsBelongToTheirKey(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/price_drop", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
	e.do("POST", "/v1/interests", map[string]any{"user_id": "u1", "subject": "product:42", "kind": "VIEW"}).expect(t, http.StatusOK, nil)
	e.do("PUT", "/v1/rules/price-drop", map[string]any{
		"when":     map[string]any{"event": "PRICE_CHANGE", "detect": map[string]any{"price_drop_pct": 10}},
		"audience": map[string]any{"interest": map[string]any{"kinds": []string{"VIEW"}}},
		"notify":   map[string]any{"type": "price_drop", "title": "{{.product_name}} is {{.drop_pct}}% off"},
	}).expect(t, http.StatusCreated, nil)
	bearer := func(name string) string {
		_, key, err := e.keys.Create(t.Context(), name, []auth.Scope{auth.ScopeEventsWrite})
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + key
	}
	victim, attacker := bearer("victim"), bearer("attacker")
	ev := func(cur int) map[string]any {
		return map[string]any{"id": "order-7", "name": "PRICE_CHANGE", "subject": "product:42",
			"data": map[string]any{"product_name": "Kettle", "previous_price": 10000, "current_price": cur}}
	}
	// The attacker claims the id first, with a body of its own.
	var first herald.TrackResult
	e.do("POST", "/v1/events", ev(8000), "Authorization", attacker).expect(t, http.StatusOK, &first)
	if first.Replayed || len(first.Rules) != 1 || !first.Rules[0].Detected {
		t.Fatalf("the attacker's event: %+v", first)
	}
	// The victim's event of the same id is applied, not suppressed.
	var mine herald.TrackResult
	e.do("POST", "/v1/events", ev(8500), "Authorization", victim).expect(t, http.StatusOK, &mine)
	if mine.Replayed || len(mine.Rules) != 1 || !mine.Rules[0].Detected || mine.Rules[0].Run == first.Rules[0].Run {
		t.Fatalf("the victim's event was not applied: %+v", mine)
	}
	// Replaying the id with the victim's body does not read the victim's
	// outcome: for the attacker it is a body other than its own.
	res := e.do("POST", "/v1/events", ev(8500), "Authorization", attacker)
	if res.status != http.StatusConflict || res.errorBody(t).Code != "conflict" {
		t.Fatalf("the attacker replaying the victim's body: %d %s", res.status, res.body)
	}
	// The victim's redelivery is answered from its record.
	var again herald.TrackResult
	e.do("POST", "/v1/events", ev(8500), "Authorization", victim).expect(t, http.StatusOK, &again)
	if !again.Replayed || len(again.Rules) != 1 || again.Rules[0].Run != mine.Rules[0].Run {
		t.Fatalf("the victim's redelivery: %+v", again)
	}
	// The victim's own id with another body is a conflict, not a replay.
	res = e.do("POST", "/v1/events", ev(7000), "Authorization", victim)
	if res.status != http.StatusConflict || res.errorBody(t).Code != "conflict" {
		t.Fatalf("the same id with another body: %d %s", res.status, res.body)
	}
	// Each event has its own run.
	var runs herald.RuleRunPage
	e.do("GET", "/v1/rules/price-drop/runs", nil).expect(t, http.StatusOK, &runs)
	if len(runs.Runs) != 2 || runs.Runs[0].ID == runs.Runs[1].ID {
		t.Fatalf("runs: %+v", runs)
	}
}
