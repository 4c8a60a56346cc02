package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
)

// TestEveryRouteIsDocumented holds the server's routes and the contract
// together both ways (issue 33 item 2): every pattern the server
// registers (with /metrics configured) is an operation of
// api/openapi.yaml, and every operation there is a registered route.
func TestEveryRouteIsDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{metrics: http.NotFoundHandler(), console: http.NotFoundHandler()})
	var registered []string
	for pattern, rule := range httpapi.Rules(e.srv) {
		if consoleMount(t, pattern, rule) {
			continue
		}
		registered = append(registered, pattern)
	}
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(registered)
	slices.Sort(documented)
	for _, p := range registered {
		if !slices.Contains(documented, p) {
			t.Errorf("route %q is registered but not documented in api/openapi.yaml", p)
		}
	}
	for _, p := range documented {
		if !slices.Contains(registered, p) {
			t.Errorf("operation %q is documented but the server does not register it", p)
		}
	}
	if len(registered) < 60 {
		t.Errorf("only %d routes registered", len(registered))
	}
}

// TestEveryOperationNamesItsScope: an operation that needs credentials
// says which (a server key's scope, and whether a user token may call it)
// exactly as the server's access rule does, and an open route says it is
// open.
func TestEveryOperationNamesItsScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{metrics: http.NotFoundHandler()})
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	for pattern, rule := range httpapi.Rules(e.srv) {
		method, path, _ := strings.Cut(pattern, " ")
		item := doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			continue // TestEveryRouteIsDocumented reports it
		}
		op := item.GetOperation(method)
		var got []string
		if op.Security != nil {
			for _, req := range *op.Security {
				for scheme, scopes := range req {
					got = append(got, scheme+":"+strings.Join(scopes, ","))
				}
			}
		}
		var want []string
		switch {
		case rule.Open:
			if pattern == "GET /metrics" {
				want = []string{"apiKey:metrics:read"} // open only when configured so
				break
			}
			want = nil
		case rule.UserOnly:
			want = []string{"userToken:"}
		case rule.Self, rule.User:
			want = []string{"apiKey:" + rule.Scope, "userToken:"}
		default:
			want = []string{"apiKey:" + rule.Scope}
		}
		slices.Sort(got)
		slices.Sort(want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the document's security is %v, the server's rule %v", pattern, got, want)
		}
	}
}

// TestTheContractIsServed: both forms, without credentials, with the
// version.
func TestTheContractIsServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	var want struct {
		Info struct{ Version string }
	}
	if err := yaml.Unmarshal(api.YAML, &want); err != nil || want.Info.Version == "" {
		t.Fatalf("the embedded document has no info.version: %v", err)
	}
	y := e.do("GET", "/openapi.yaml", nil, "Authorization", "")
	if y.status != 200 || y.header.Get("Content-Type") != "application/yaml" || string(y.body) != string(api.YAML) {
		t.Fatalf("GET /openapi.yaml: %d %q (%d bytes)", y.status, y.header.Get("Content-Type"), len(y.body))
	}
	j := e.do("GET", "/openapi.json", nil, "Authorization", "")
	var got struct {
		OpenAPI string `json:"openapi"`
		Info    struct{ Version string }
	}
	if j.status != 200 || json.Unmarshal(j.body, &got) != nil || got.Info.Version != want.Info.Version || !strings.HasPrefix(got.OpenAPI, "3.1") {
		t.Fatalf("GET /openapi.json: %d %s", j.status, j.body[:min(len(j.body), 200)])
	}
}

// collector is a testing.TB that keeps what the validator reports.
type collector struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (c *collector) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *collector) Helper() {}

// TestTheValidatorBites: the validator the suites run behind catches a
// server that drifts from the document — here a real route whose answer
// gains a field, and one that answers an undocumented status.
func TestTheValidatorBites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.seedUser("alice")
	for _, c := range []struct {
		name  string
		drift func(w http.ResponseWriter, r *http.Request, srv http.Handler)
		want  string
	}{
		{"an injected field", func(w http.ResponseWriter, r *http.Request, srv http.Handler) {
			rec := &bodyRewriter{ResponseWriter: w, rewrite: func(b []byte) []byte {
				return []byte(strings.Replace(string(b), "{", `{"injected":true,`, 1))
			}}
			srv.ServeHTTP(rec, r)
			rec.flush()
		}, "injected"},
		{"an undocumented status", func(w http.ResponseWriter, r *http.Request, _ http.Handler) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write([]byte(`{"code":"internal","message":"tea"}`))
		}, "status"},
		{"an error code its status does not have", func(w http.ResponseWriter, r *http.Request, _ http.Handler) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"code":"conflict","message":"no"}`))
		}, "not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &collector{TB: t}
			drifting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.drift(w, r, e.srv) })
			h := apitest.Handler(col, drifting)
			saved := e.h
			e.h = h
			defer func() { e.h = saved }()
			e.do("GET", "/v1/users/alice", nil)
			if got := strings.Join(col.errs, "\n"); !strings.Contains(got, c.want) {
				t.Fatalf("the validator did not report %s (want %q in %q)", c.name, c.want, got)
			}
		})
	}
}

// bodyRewriter holds a response back and lets the test change its body.
type bodyRewriter struct {
	http.ResponseWriter
	status  int
	body    []byte
	rewrite func([]byte) []byte
}

func (b *bodyRewriter) WriteHeader(code int) { b.status = code }
func (b *bodyRewriter) Write(p []byte) (int, error) {
	b.body = append(b.body, p...)
	return len(p), nil
}

func (b *bodyRewriter) flush() {
	out := b.rewrite(b.body)
	b.ResponseWriter.Header().Del("Content-Length")
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(out)
}

// consoleMount reports whether pattern is the operator console's mount,
// the one exception to "every route is an API operation": the console is
// HTML pages for a browser with their own sign-in (package console), not
// part of the API's contract, and its access rule says so. Only the
// patterns httpapi registers for it may carry that rule: the mount and its
// sign-in, which shares the API's failed-authentication limit.
func consoleMount(t *testing.T, pattern string, rule httpapi.RouteRule) bool {
	t.Helper()
	isMount := pattern == "GET /console" || pattern == "/console/" || pattern == "POST /console/sign-in"
	if rule.Console != isMount {
		t.Errorf("%s: console rule %v, but the console's mount is GET /console, /console/ and POST /console/sign-in only", pattern, rule.Console)
	}
	return isMount
}
