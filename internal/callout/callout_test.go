package callout

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/outbound"
)

// loopback is the allow-list tests need to reach httptest servers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newCaller(t *testing.T, allow []netip.Prefix, secrets map[string]Secret) *Caller {
	t.Helper()
	c, err := New(Config{Outbound: outbound.New(outbound.Config{Allow: allow}), Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		"https://reco.example/users":                   true,
		"http://127.0.0.1:9000/a?b=c":                  true,
		"ftp://reco.example/":                          false,
		"file:///etc/passwd":                           false,
		"https://user:pw@reco/":                        false,
		"/relative":                                    false,
		"https://" + strings.Repeat("a", MaxURLLength): false,
	} {
		if err := CheckURL(raw); (err == nil) != ok {
			t.Errorf("%q: %v", raw, err)
		}
	}
	strict := newCaller(t, nil, nil)
	for _, raw := range []string{"http://127.0.0.1:9000/a", "http://localhost/a", "http://[::1]/", "http://2130706433/",
		"http://169.254.169.254/latest/meta-data", "http://10.0.0.5/", "http://[::ffff:127.0.0.1]/"} {
		if err := strict.CheckHost(raw); err == nil {
			t.Errorf("%s accepted", raw)
		}
	}
	if err := strict.CheckHost("https://reco.example/users"); err != nil {
		t.Error(err)
	}
	if err := newCaller(t, loopback, nil).CheckHost("http://127.0.0.1:9000/a"); err != nil {
		t.Errorf("allowed loopback: %v", err)
	}
}

func decodeN(out *int) func(io.Reader) error {
	return func(r io.Reader) error {
		var v struct{ N int }
		err := json.NewDecoder(r).Decode(&v)
		*out = v.N
		return err
	}
}

func TestPost(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/echo":
			if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			_, _ = w.Write([]byte(`{"n":1}`))
		case "/auth":
			if r.Header.Get("Authorization") != "Bearer s3cret" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(`{"n":1}`))
		case "/fail":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/big":
			_, _ = w.Write([]byte(`{"n":1,"pad":"` + strings.Repeat("x", 100) + `"}`))
		case "/junk":
			_, _ = w.Write([]byte(`<html>`))
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(hang) // before Close, which waits for the hanging handler
	c := newCaller(t, loopback, map[string]Secret{"crm": {Header: "authorization", Value: "Bearer s3cret"}})
	for path, want := range map[string]string{
		"/echo":            "",
		"/auth?token=abc":  CodeStatus,
		"/fail":            CodeStatus,
		"/big":             CodeTooLarge,
		"/junk":            CodeBadAnswer,
		"/hang?token=abc":  CodeFailed,
		"/echo?secret=bad": "",
	} {
		var n int
		err := c.Post(context.Background(), Call{URL: srv.URL + path, Timeout: 100 * time.Millisecond, MaxBytes: 64, Body: map[string]string{"a": "b"}}, decodeN(&n))
		var ce *Error
		switch {
		case want == "" && (err != nil || n != 1):
			t.Errorf("%s: %d %v", path, n, err)
		case want != "" && (!errors.As(err, &ce) || ce.Code != want || !strings.Contains(err.Error(), srv.URL)):
			t.Errorf("%s: %v, want %s", path, err, want)
		case err != nil && (strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "boom") || strings.Contains(err.Error(), "<")):
			t.Errorf("%s: %v shows the query or the answer", path, err)
		}
	}
	var n int
	if err := c.Post(context.Background(), Call{URL: srv.URL + "/auth", Timeout: time.Second, MaxBytes: 64, Secret: "crm"}, decodeN(&n)); err != nil || n != 1 {
		t.Errorf("with the secret: %d %v", n, err)
	}
	err := c.Post(context.Background(), Call{URL: srv.URL + "/auth", Timeout: time.Second, MaxBytes: 64, Secret: "nope"}, decodeN(&n))
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != CodeSecret {
		t.Errorf("undeclared secret: %v", err)
	}
}

// Issue 31 item 6: a secret is declared by the operator with a header
// name and a value; what could break a request is refused.
func TestSecretsChecked(t *testing.T) {
	t.Parallel()
	out := outbound.New(outbound.Config{})
	for name, s := range map[string]Secret{
		"bad name!": {Header: "Authorization", Value: "x"},
		"crm":       {Header: "Bad Header", Value: "x"},
	} {
		if _, err := New(Config{Outbound: out, Secrets: map[string]Secret{name: s}}); err == nil {
			t.Errorf("%q %+v accepted", name, s)
		}
	}
	for _, s := range []Secret{{Header: "Host", Value: "x"}, {Header: "content-length", Value: "1"}, {Header: "X-Key", Value: ""},
		{Header: "X-Key", Value: "a\r\nX-Other: b"}} {
		if _, err := New(Config{Outbound: out, Secrets: map[string]Secret{"crm": s}}); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}
