package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type testFaults struct {
	Rate float64 `json:"rate"`
}

// fakeEmulator is the smallest emulator the control routes can drive.
type fakeEmulator struct {
	msgs   []string
	faults testFaults
	resets int
}

var _ Emulator[string, testFaults, map[string]int] = (*fakeEmulator)(nil)

func (f *fakeEmulator) Messages() []string { return f.msgs }

func (f *fakeEmulator) MessagesTo(to string) []string {
	var out []string
	for _, m := range f.msgs {
		if m == to {
			out = append(out, m)
		}
	}
	return out
}

func (f *fakeEmulator) Reset()                    { f.resets++; f.msgs = nil }
func (f *fakeEmulator) CurrentFaults() testFaults { return f.faults }
func (f *fakeEmulator) ClearFaults()              { f.faults = testFaults{} }
func (f *fakeEmulator) Stats() map[string]int     { return map[string]int{"accepted": len(f.msgs)} }
func (f *fakeEmulator) SetFaults(tf testFaults) error {
	if tf.Rate > 1 {
		return errBadRate
	}
	f.faults = tf
	return nil
}

func (f *fakeEmulator) handler() http.Handler {
	mux := http.NewServeMux()
	Control[string, testFaults, map[string]int]{Emulator: f, ContentType: "application/json; charset=utf-8", Filter: "to"}.Register(mux)
	return mux
}

var errBadRate = errors.New("rate must be in 0..1")

func do(t *testing.T, h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, strings.NewReader(body)))
	return w
}

func TestControlRoutes(t *testing.T) {
	t.Parallel()
	f := &fakeEmulator{msgs: []string{"a", "b", "a"}}
	h := f.handler()

	tests := []struct {
		name, method, target, body string
		status                     int
		want                       string // the body, if status has one
	}{
		{"all messages", "GET", "/emulator/messages", "", 200, `["a","b","a"]`},
		{"filtered", "GET", "/emulator/messages?to=a", "", 200, `["a","a"]`},
		{"filtered to none is an array", "GET", "/emulator/messages?to=zz", "", 200, `[]`},
		{"stats", "GET", "/emulator/stats", "", 200, `{"accepted":3}`},
		{"put faults", "PUT", "/emulator/faults", `{"rate":0.5}`, 200, `{"rate":0.5}`},
		{"get faults", "GET", "/emulator/faults", "", 200, `{"rate":0.5}`},
		{"unknown field", "PUT", "/emulator/faults", `{"rat":1}`, 400, ""},
		{"invalid faults", "PUT", "/emulator/faults", `{"rate":2}`, 400, `{"error":"rate must be in 0..1"}`},
		{"clear faults", "DELETE", "/emulator/faults", "", 204, ""},
		{"cleared", "GET", "/emulator/faults", "", 200, `{"rate":0}`},
		{"reset", "DELETE", "/emulator/messages", "", 204, ""},
		{"empty is an array", "GET", "/emulator/messages", "", 200, `[]`},
	}
	for _, tt := range tests { // in order: each step sees the previous ones
		w := do(t, h, tt.method, tt.target, tt.body)
		if w.Code != tt.status {
			t.Fatalf("%s: status %d, want %d (body %s)", tt.name, w.Code, tt.status, w.Body)
		}
		if tt.status == 200 || tt.status == 400 {
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("%s: Content-Type %q", tt.name, ct)
			}
			if !json.Valid(w.Body.Bytes()) {
				t.Errorf("%s: body %q is not JSON", tt.name, w.Body)
			}
		}
		if tt.want != "" && w.Body.String() != tt.want {
			t.Errorf("%s: body %s, want %s", tt.name, w.Body, tt.want)
		}
	}
	if f.resets != 1 {
		t.Errorf("Reset called %d times, want 1", f.resets)
	}
}

func TestWriteJSONUnencodable(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	WriteJSON(w, http.StatusOK, "application/json", func() {})
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500 for a value JSON cannot encode", w.Code)
	}
}
