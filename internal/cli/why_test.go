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
	r.fails([]string{"why", "u1"}, "--type TYPE, --notification ID, or --rule NAME --rule-run ID")
	r.fails([]string{"why", "u1", "--type", "promo", "--since", "yesterday"}, "--since", "RFC 3339")
	r.fails([]string{"why", "nobody", "--type", "promo"}, "herald: not_found (HTTP 404): ")
	r.fails([]string{"why", "u1", "--rule", "price-drop"}, "herald: invalid_argument (HTTP 400): ", "rule_run")
}
