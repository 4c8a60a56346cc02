package herald

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// unprintables are the characters issue 23 item 7 found accepted in ids: a
// C1 control (CSI, a terminal escape), a bidi override, zero-width
// characters, the BOM and a line separator.
var unprintables = map[string]string{
	"C1 CSI": "\u009b", "RLO": "\u202e", "LRI": "\u2066", "ZWSP": "\u200b", "ZWJ": "\u200d",
	"BOM": "\ufeff", "LS": "\u2028", "soft hyphen": "\u00ad",
}

// Issue 23 item 7: every identifier refuses control, format and bidi
// characters (Unicode Cc, Cf), as the README promises.
func TestIdentifiersRefuseUnprintables(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.DisableWorkers = true })
	p.device("u1", "d1", "tok-1")
	for name, r := range unprintables {
		bad := "id" + r + "1"
		checks := map[string]error{}
		_, checks["user id"] = p.client.PutUser(p.ctx, bad, UserInput{})
		_, checks["device_id"] = p.client.RegisterDevice(p.ctx, "u1", DeviceInput{DeviceID: bad, Token: "tok-2", Platform: "android"})
		_, checks["user_id of a trigger"] = p.client.Enqueue(p.ctx, Request{UserID: bad, Type: "t", Title: "x"})
		_, checks["dedupe_key"] = p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "t", Title: "x", DedupeKey: bad})
		checks["suppression address"] = p.client.DeleteSuppression(p.ctx, heraldtype.ChannelEmail, "a"+r+"@example.com")
		for what, err := range checks {
			if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
				t.Errorf("%s with %s: err = %v, want invalid_argument", what, name, err)
			}
		}
	}
	// Printable non-ASCII stays accepted.
	for _, ok := range []string{"ユーザー", "josé", "user-😀"} {
		if _, err := p.client.PutUser(p.ctx, ok, UserInput{}); err != nil {
			t.Errorf("PutUser(%q) = %v, want accepted", ok, err)
		}
	}
}
