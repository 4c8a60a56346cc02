package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 32 item 5: an unknown or badly typed nested field is named by its
// whole path, map keys and array indexes included, not its last part.
func TestDecodeNamesTheWholePath(t *testing.T) {
	t.Parallel()
	prefs := func(b []byte) error { var v herald.Preferences; return decodeBody(b, &v, bodySpec{}) }
	rule := func(b []byte) error { var v herald.Rule; return decodeBody(b, &v, bodySpec{}) }
	reminder := func(b []byte) error { var v herald.ReminderRequest; return decodeBody(b, &v, bodySpec{}) }
	campaign := func(b []byte) error { var v herald.CampaignRequest; return decodeBody(b, &v, bodySpec{}) }
	trigger := func(b []byte) error { var v herald.Request; return decodeBody(b, &v, bodySpec{timeField: "send_at"}) }
	for _, c := range []struct {
		name, json string
		decode     func([]byte) error
		field, msg string
	}{
		{"unknown in a map value", `{"types":{"promo":{"disabld":true}}}`, prefs, "types.promo.disabld", "is not a known field"},
		{"wrong type in a map value", `{"types":{"promo":{"disabled":"yes"}}}`, prefs, "types.promo.disabled", "must be true or false, not string"},
		{"unknown in a nested struct", `{"when":{"event":"e","detect":{"price_rise_pct":10}}}`, rule, "when.detect.price_rise_pct", "is not a known field"},
		{"unknown in a schedule", `{"user_id":"u","type":"t","title":"x","schedule":{"tz":"UTC"}}`, reminder, "schedule.tz", "is not a known field"},
		{"bad duration", `{"type":"t","title":"x","schedule":{"cron":"0 9 * * *"},"fetch":{"url":"http://x","timeout":"5x"}}`, campaign, "fetch.timeout", "must be a duration"},
		{"bad element of an array", `{"user_id":"u","type":"t","title":"x","channels":["push",7]}`, trigger, "channels[1]", "must be a string, not number"},
		{"bad time", `{"user_id":"u","type":"t","title":"x","send_at":"tomorrow"}`, trigger, "send_at", "RFC 3339"},
		{"unknown at the top", `{"user_id":"u","type":"t","title":"x","titel":"y"}`, trigger, "titel", "is not a known field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode([]byte(c.json))
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field || !strings.Contains(he.Message, c.msg) {
				t.Fatalf("error = %#v, want field %q with %q", err, c.field, c.msg)
			}
			if !strings.HasPrefix(he.Message, c.field+": ") {
				t.Errorf("message %q does not start with the field's path", he.Message)
			}
		})
	}
}
