package cli

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// herald why asks the running server why a quiet-hours user got nothing,
// and prints the answer (or the JSON); a question without a type or a
// notification is refused before any call, and the server's not_found
// prints as the other commands print it.
func TestWhy(t *testing.T) {
	s := startDev(t)
	r := &cliRunner{t: t, server: s.api, dir: t.TempDir()}
	now := time.Now().UTC()
	call(t, "PUT", s.api+"/v1/users/u1", `{"timezone":"UTC"}`)
	call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"phone","token":"tok-u1","platform":"android"}`)
	// Quiet hours from an hour ago to two hours ahead: now is inside.
	call(t, "PUT", s.api+"/v1/users/u1/preferences", `{"quiet_hours":{"start":"`+now.Add(-time.Hour).Format("15:04")+
		`","end":"`+now.Add(2*time.Hour).Format("15:04")+`"}}`)
	if code, out := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"promo","title":"Sale"}`); code != 202 {
		t.Fatalf("trigger: %d %v", code, out)
	}
	var x heraldtype.Explanation
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r.okJSON([]string{"why", "u1", "--type", "promo"}, &x)
		if x.Verdict == heraldtype.ExplainQuietHours {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker never deferred it: %+v", x)
		}
	}
	r.ok([]string{"why", "u1", "--notification", x.NotificationID}, "It was deferred on push to device phone by the user's quiet hours",
		"verdict:", "quiet_hours", "status:", "DEFERRED", "until ")
	r.fails([]string{"why", "u1"}, "--type TYPE, --notification ID, --idempotency-key KEY, --rule NAME --rule-run ID, or --event ID")
	r.fails([]string{"why", "u1", "--type", "promo", "--since", "yesterday"}, "--since", "RFC 3339")
	r.fails([]string{"why", "nobody", "--type", "promo"}, "herald: not_found (HTTP 404): ")
	r.fails([]string{"why", "u1", "--rule", "price-drop"}, "herald: invalid_argument (HTTP 400): ", "rule_run")
}

// herald why --event: what the rules decided on an event posted to the
// API (under the calling key's namespace), each rule named with its
// detector's reason; --event-source without --event is refused before any
// call, and an unrecorded event prints the server's not_found.
func TestWhyEvent(t *testing.T) {
	s := startDev(t)
	r := &cliRunner{t: t, server: s.api, dir: t.TempDir()}
	call(t, "PUT", s.api+"/v1/users/u1", `{"timezone":"UTC"}`)
	call(t, "PUT", s.api+"/v1/types/price_drop", `{"channels":["push"]}`)
	if code, out := call(t, "PUT", s.api+"/v1/rules/price-drop", `{"when":{"event":"PRICE_CHANGE","detect":{"price_drop_pct":10}},`+
		`"audience":{"interest":{"kinds":["VIEW"]}},"notify":{"type":"price_drop","title":"{{.product_name}} is {{.drop_pct}}% off"}}`); code != 201 {
		t.Fatalf("rule: %d %v", code, out)
	}
	if code, out := call(t, "POST", s.api+"/v1/events", `{"id":"ev-1","name":"PRICE_CHANGE","subject":"product:42",`+
		`"data":{"product_name":"Kettle","previous_price":10000,"current_price":9900}}`); code != 200 {
		t.Fatalf("event: %d %v", code, out)
	}
	r.ok([]string{"why", "u1", "--event", "ev-1"}, "Rule price-drop did not detect event ev-1: the price dropped 1 %, under the threshold.",
		"verdict:", "not_detected", "event:", "ev-1", "rule price-drop")
	var x heraldtype.Explanation
	r.okJSON([]string{"why", "u1", "--event", "ev-1"}, &x)
	if x.Verdict != heraldtype.ExplainNotDetected || x.Event != "ev-1" || len(x.Reasons) != 1 || x.Reasons[0].Rule != "price-drop" {
		t.Fatalf("--json: %+v", x)
	}
	r.fails([]string{"why", "u1", "--event-source", "product.inventory.v1"}, "--event-source and --event-namespace need --event ID")
	r.fails([]string{"why", "u1", "--event", "ev-1", "--event-source", "product.inventory.v1"}, "herald: not_found (HTTP 404): ",
		"some rule considered")
}
