package apitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldhq/herald/internal/apitest"
)

// The server reads a JSON body sent without a Content-Type, as a form
// (curl -d) or as text/plain (fetch() with a string) as JSON: the
// validator checks it as the JSON it is, so it passes when it conforms
// and still fails when it does not.
func TestJSONUnderOtherLabels(t *testing.T) {
	v, err := apitest.New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"a","size":2}`)
	})
	for _, ct := range []string{"", "application/x-www-form-urlencoded", "text/plain; charset=utf-8", "application/merge-patch+json"} {
		for _, c := range []struct{ body, want string }{
			{`{"size":2}`, ""},
			{`{"size":2,"colour":"red"}`, "refuses the request"},
		} {
			ft := &fakeT{TB: t}
			ts := httptest.NewServer(v.Handler(ft, h))
			req, _ := http.NewRequest("PUT", ts.URL+"/v1/things/a", strings.NewReader(c.body))
			req.Header.Del("Content-Type")
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			ts.Close()
			got := strings.Join(ft.errs, "\n")
			switch {
			case c.want == "" && got != "":
				t.Errorf("%q %s: complained: %s", ct, c.body, got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("%q %s: want a complaint naming %q, got %q", ct, c.body, c.want, got)
			}
		}
	}
}
