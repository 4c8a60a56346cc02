package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The request bodies' decoders, fuzzed one target per body type (the
// trigger's, with its header handling, is FuzzDecodeTrigger). Whatever the
// bytes, decoding either succeeds or fails with a catalogued 4xx error —
// never a panic, never an error the caller would see as a 500. Committed
// corpora: testdata/fuzz/<target>.

func fuzzDecode[T any](f *testing.F, spec bodySpec, seeds ...string) {
	for _, s := range append(seeds, ``, `{}`, `null`, `[]`, `{"a":1}`, "\xff", `{"x":"\u0000"}`, `{}{}`, `{`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var dst T
		err := decodeBody(body, &dst, spec)
		if err == nil {
			return
		}
		var he *heraldtype.Error
		if !errors.As(err, &he) {
			t.Fatalf("decode error %v is not a *heraldtype.Error", err)
		}
		if st := StatusForCode(he.Code); st < 400 || st >= 500 {
			t.Fatalf("decode error %v maps to %d", err, st)
		}
	})
}

func FuzzDecodeUserInput(f *testing.F) {
	fuzzDecode[herald.UserInput](f, bodySpec{optional: true}, `{"timezone":"Asia/Seoul","locale":"ko-KR","email":"a@b.c","phone":"+821012345678"}`)
}

func FuzzDecodeDeviceInput(f *testing.F) {
	fuzzDecode[herald.DeviceInput](f, bodySpec{}, `{"device_id":"d1","token":"tok","platform":"android","app_version":"1.2","push_opt_in":false}`, `{"push_opt_in":"yes"}`)
}

func FuzzDecodeOwnHeartbeat(f *testing.F) {
	fuzzDecode[herald.OwnHeartbeat](f, bodySpec{}, `{"device_id":"d1"}`, `{"token":"tok-1"}`)
}

func FuzzDecodeReplayFilter(f *testing.F) {
	fuzzDecode[replayFilter](f, bodySpec{}, `{"state":"dead","error_code":"UNAVAILABLE","from":"2026-01-01T00:00:00Z"}`)
}

func FuzzDecodeInboxRead(f *testing.F) {
	fuzzDecode[markRead](f, bodySpec{}, `{"ids":[1,2,3]}`, `{"ids":[1e400]}`, `{"ids":[-1]}`, `{"ids":"1"}`)
}

func FuzzDecodePreferences(f *testing.F) {
	fuzzDecode[herald.Preferences](f, bodySpec{}, `{"types":{"promo":{"disabled":true,"channels":["push"]}},"opted_out_channels":["sms"],"quiet_hours":{"start":"22:00","end":"08:00"},"daily_cap":3}`,
		`{"types":{"promo":{},"promo":{}}}`, `{"Types":{}}`)
}

func FuzzDecodeTypeConfig(f *testing.F) {
	fuzzDecode[herald.TypeConfig](f, bodySpec{optional: true}, `{"channels":["push","in_app"],"priority":"HIGH","dedupe_window":"1h","quiet_hours":false,"counts_toward_cap":true,"guarantee":"at_most_once","critical":false}`)
}

// FuzzStrictJSON checks the strict-JSON step (strict.go) against
// encoding/json itself: a trigger body it accepts has no key given twice
// and no key that is not a field's exact name, at the top level and in
// data; and whatever the body, it answers a catalogued 4xx or nothing.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{
		`{"user_id":"a","type":"t","title":"x"}`,
		`{"user_id":"a","User_Id":"b","type":"t","title":"x"}`,
		`{"user_id":"a","user\u005fid":"b","type":"t","title":"x"}`,
		`{"user_id":"a","type":"t","title":"x","data":{"k":"1","K":"2"}}`,
		`{"user_id":"a","type":"t","title":"x","data":{"k":"1","k":"2"}}`,
		`{"user_id":"a","type":"t","title":"x","send_at":"2026-01-01T00:00:00Z","channels":["push"]}`,
	} {
		f.Add([]byte(s))
	}
	fields := infoFor(reflect.TypeFor[herald.Request]()).fields
	f.Fuzz(func(t *testing.T, body []byte) {
		var req herald.Request
		err := decodeBody(body, &req, bodySpec{timeField: "send_at"})
		if err != nil {
			var he *heraldtype.Error
			if !errors.As(err, &he) || StatusForCode(he.Code) != 400 && StatusForCode(he.Code) != 413 {
				t.Fatalf("decode error %v", err)
			}
			return
		}
		top, n := keysOf(t, body)
		if len(top) != n {
			t.Fatalf("accepted %q with a duplicate top-level key", body)
		}
		for k := range top {
			if _, ok := fields[k]; !ok {
				t.Fatalf("accepted %q with key %q, not a field's exact name", body, k)
			}
		}
		if raw, ok := top["data"]; ok && string(raw) != "null" {
			if d, n := keysOf(t, raw); len(d) != n {
				t.Fatalf("accepted %q with a duplicate data key", body)
			}
		}
	})
}

// keysOf returns the keys of a JSON object (the last value of each) and
// how many keys it holds, duplicates counted.
func keysOf(t *testing.T, obj []byte) (map[string]json.RawMessage, int) {
	m := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("accepted body %q is not an object", obj)
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		m[k.(string)] = v
		n++
	}
	return m, n
}
