package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// newBareServer is a Server without a Client, for tests of the transport
// alone (routes that never reach the Client).
func newBareServer(logs *bytes.Buffer) *Server {
	return &Server{log: slog.New(slog.NewJSONHandler(logs, nil)), maxBody: DefaultMaxBodyBytes, mux: http.NewServeMux()}
}

// The last resort: a handler that panics answers 500 internal, logs the
// panic, and leaks nothing.
func TestPanicBecomesInternalError(t *testing.T) {
	var logs bytes.Buffer
	s := newBareServer(&logs)
	s.mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("secret detail") })
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != 500 {
		t.Fatalf("status %d", rec.Code)
	}
	var eb ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Code != heraldtype.EINTERNAL {
		t.Fatalf("body %s (%v)", rec.Body.Bytes(), err)
	}
	if strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("the panic value leaked: %s", rec.Body.Bytes())
	}
	if !strings.Contains(logs.String(), "secret detail") || !strings.Contains(logs.String(), `"status":500`) {
		t.Fatalf("the panic was not logged with its access line:\n%s", logs.String())
	}
}

// An error that is not a catalogued *heraldtype.Error is a 500 whose
// message says nothing; the real error goes only to the log.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{errors.New("database is locked: /var/lib/herald/h.db"), 500, heraldtype.EINTERNAL},
		{fmt.Errorf("enqueue: %w", heraldtype.Errorf(heraldtype.ENOTFOUND, "user %q not found", "bob")), 404, heraldtype.ENOTFOUND},
		{heraldtype.Errorf("made_up_code", "secret"), 500, heraldtype.EINTERNAL},
		{heraldtype.Errorf(heraldtype.EINTERNAL, "secret"), 500, heraldtype.EINTERNAL},
	}
	for _, tc := range tests {
		var logs bytes.Buffer
		s := newBareServer(&logs)
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("GET", "/", nil), tc.err)
		var eb ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
			t.Fatal(err)
		}
		if rec.Code != tc.status || eb.Code != tc.code {
			t.Errorf("%v: %d %s, want %d %s", tc.err, rec.Code, eb.Code, tc.status, tc.code)
		}
		if tc.status == 500 {
			if strings.Contains(rec.Body.String(), "secret") || strings.Contains(rec.Body.String(), "/var/lib") {
				t.Errorf("%v leaked: %s", tc.err, rec.Body.Bytes())
			}
			if !strings.Contains(logs.String(), tc.err.Error()) {
				t.Errorf("%v was not logged: %s", tc.err, logs.String())
			}
		}
	}
}

func TestDecodeBody(t *testing.T) {
	type target struct {
		Name  string            `json:"name"`
		Count int               `json:"count"`
		Tags  map[string]string `json:"tags"`
	}
	tests := []struct {
		body    string
		spec    bodySpec
		field   string
		wantErr bool
	}{
		{body: `{"name":"x","count":2}`},
		{body: " \n{\"name\":\"x\"}\n\t "},
		{body: ``, spec: bodySpec{optional: true}},
		{body: `   `, wantErr: true},
		{body: `{"count":"2"}`, field: "count", wantErr: true},
		{body: `{"count":1.5}`, field: "count", wantErr: true},
		{body: `{"count":1e999}`, field: "count", wantErr: true},
		{body: `{"tags":{"a":true}}`, field: "tags.a", wantErr: true},
		{body: `{"tags":[]}`, field: "tags", wantErr: true},
		{body: `{"nope":1}`, field: "nope", wantErr: true},
		{body: `{"name":"x"} {"name":"y"}`, wantErr: true},
		{body: `{"name":"x"}]`, wantErr: true},
		{body: `"x"`, wantErr: true},
		{body: `{"name":"` + "\xc3\x28" + `"}`, wantErr: true},
		{body: strings.Repeat(`{"tags":`, 20000), wantErr: true},
	}
	for _, tc := range tests {
		var v target
		err := decodeBody([]byte(tc.body), &v, tc.spec)
		if (err != nil) != tc.wantErr {
			t.Errorf("%.40q: err %v, want error %v", tc.body, err, tc.wantErr)
			continue
		}
		if err == nil {
			continue
		}
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != tc.field {
			t.Errorf("%.40q: %#v, want invalid_argument on field %q", tc.body, err, tc.field)
		}
	}
}

func TestCheckContentType(t *testing.T) {
	for ct, ok := range map[string]bool{
		"":                                  true,
		"application/json":                  true,
		"Application/JSON; charset=UTF-8":   true,
		"application/merge-patch+json":      true,
		"application/x-www-form-urlencoded": true,
		"text/plain;charset=utf-8":          true,
		"application/xml":                   false,
		"multipart/form-data; boundary=x":   false,
		"application/json; charset=utf-16":  false,
		"application/json; charset=":        false,
		";;;":                               false,
	} {
		err := checkContentType(ct)
		if (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", ct, err, ok)
		}
		if err != nil && heraldtype.ErrorCode(err) != EUnsupportedMediaType {
			t.Errorf("%q: code %s", ct, heraldtype.ErrorCode(err))
		}
	}
}

// maskAddress never shows a whole address, however short.
func TestMaskAddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ch         heraldtype.Channel
		addr, want string
	}{
		{heraldtype.ChannelEmail, "alice@example.com", "a***@example.com"},
		{heraldtype.ChannelEmail, "a@b.c", "a***@b.c"},
		{heraldtype.ChannelEmail, "no-at-sign", "no***gn"},
		{heraldtype.ChannelSMS, "+15550000001", "+1555***0001"},
		{heraldtype.ChannelSMS, "+4930123456", "+4***56"},
		{heraldtype.ChannelSMS, "123", "***"},
		{heraldtype.ChannelSMS, "", ""},
	} {
		if got := maskAddress(c.ch, c.addr); got != c.want {
			t.Errorf("maskAddress(%s, %q) = %q, want %q", c.ch, c.addr, got, c.want)
		}
	}
}
