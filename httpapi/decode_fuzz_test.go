package httpapi

import (
	"errors"
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
