package webpush

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/dispatch"
)

// The dispatcher finds the scope through this interface.
var _ dispatch.ThrottleScoper = (*Client)(nil)

// ThrottleScope is the endpoint's host, so each push service is throttled
// on its own 429s (issue 23).
func TestThrottleScope(t *testing.T) {
	t.Parallel()
	c := &Client{}
	for token, want := range map[string]string{
		"https://fcm.googleapis.com/fcm/send/abc":            "fcm.googleapis.com",
		"https://Updates.Push.Services.Mozilla.com/wpush/v2": "updates.push.services.mozilla.com",
		"https://user@web.push.apple.com:443/x?y#z":          "web.push.apple.com:443",
		"https://push.example?x":                             "push.example",
		"not a url":                                          "",
	} {
		if got := c.ThrottleScope(&heraldtype.Job{Device: &heraldtype.Device{Token: token}}); got != want {
			t.Errorf("ThrottleScope(%q) = %q, want %q", token, got, want)
		}
	}
	if got := c.ThrottleScope(&heraldtype.Job{}); got != "" {
		t.Errorf("ThrottleScope without a device = %q", got)
	}
}
