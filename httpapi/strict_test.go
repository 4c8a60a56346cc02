package httpapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Duplicate keys and case-variant field names are refused with a 400 that
// names the field, at every nesting level of every body type (issue 18,
// item 5); data maps keep accepting any distinct keys.
func TestDecodeStrictJSON(t *testing.T) {
	t.Parallel()
	type body struct {
		name, json string
		decode     func([]byte) error
		field      string // "" when the body is valid
	}
	trigger := func(b []byte) error { var v herald.Request; return decodeBody(b, &v, bodySpec{timeField: "send_at"}) }
	prefs := func(b []byte) error { var v herald.Preferences; return decodeBody(b, &v, bodySpec{}) }
	user := func(b []byte) error { var v herald.UserInput; return decodeBody(b, &v, bodySpec{optional: true}) }
	device := func(b []byte) error { var v herald.DeviceInput; return decodeBody(b, &v, bodySpec{}) }
	typ := func(b []byte) error { var v herald.TypeConfig; return decodeBody(b, &v, bodySpec{optional: true}) }
	replay := func(b []byte) error { var v replayFilter; return decodeBody(b, &v, bodySpec{}) }
	read := func(b []byte) error { var v markRead; return decodeBody(b, &v, bodySpec{}) }
	heartbeat := func(b []byte) error { var v herald.OwnHeartbeat; return decodeBody(b, &v, bodySpec{}) }
	cases := []body{
		{"valid trigger", `{"user_id":"a","type":"t","title":"x","data":{"User_Id":"1","user_id":"2"}}`, trigger, ""},
		{"duplicate key", `{"user_id":"a","user_id":"b","type":"t","title":"x"}`, trigger, "user_id"},
		{"duplicate key escaped", `{"user_id":"a","user\u005fid":"b","type":"t","title":"x"}`, trigger, "user_id"},
		{"case variant", `{"User_Id":"b","type":"t","title":"x"}`, trigger, "User_Id"},
		{"case variant after exact", `{"user_id":"a","USER_ID":"b","type":"t","title":"x"}`, trigger, "USER_ID"},
		{"duplicate data key", `{"user_id":"a","type":"t","title":"x","data":{"k":"1","k":"2"}}`, trigger, "data.k"},
		{"duplicate in a large map", `{"user_id":"a","type":"t","title":"x","data":{` + manyKeys(40) + `,"k3":"x"}}`, trigger, "data.k3"},
		{"duplicate nested in preferences", `{"types":{"promo":{"disabled":true,"disabled":false}}}`, prefs, "types.promo.disabled"},
		{"case variant nested in preferences", `{"types":{"promo":{"Disabled":true}}}`, prefs, "types.promo.Disabled"},
		{"duplicate preference type", `{"types":{"promo":{},"promo":{"disabled":true}}}`, prefs, "types.promo"},
		{"case variant quiet hours", `{"quiet_hours":{"start":"22:00","END":"08:00"}}`, prefs, "quiet_hours.END"},
		{"user duplicate", `{"timezone":"Asia/Seoul","timezone":"UTC"}`, user, "timezone"},
		{"device case variant", `{"Device_ID":"d","token":"t","platform":"ios"}`, device, "Device_ID"},
		{"type duplicate", `{"priority":"HIGH","priority":"LOW"}`, typ, "priority"},
		{"replay case variant", `{"State":"dead"}`, replay, "State"},
		{"inbox read duplicate", `{"ids":[1],"ids":[2]}`, read, "ids"},
		{"heartbeat duplicate", `{"device_id":"a","device_id":"b"}`, heartbeat, "device_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode([]byte(c.json))
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field {
				t.Fatalf("got %#v, want invalid_argument on field %q", err, c.field)
			}
		})
	}
}

func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = `"k` + strconv.Itoa(i) + `":"v"`
	}
	return strings.Join(keys, ",")
}
