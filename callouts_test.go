package herald

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// loopbackNets is the callout allow-list the tests' endpoints, httptest
// servers on loopback, need (issue 31 item 2).
var loopbackNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// Issue 31 items 2 and 6: a webhook or a fetch whose host the guard
// refuses outright, or that names an undeclared secret, is refused on
// save naming its field.
func TestCalloutDefinitionsCheckedOnSave(t *testing.T) {
	p := newAudiencePipeline(t, func(c *Config) {
		c.Callout = CalloutConfig{Secrets: map[string]CalloutSecret{"crm": {Header: "Authorization", Value: "Bearer x"}}}
		c.Types["recommendation"] = TypeConfig{}
	})
	for _, tc := range []struct {
		url, secret, field string
	}{
		{"http://169.254.169.254/latest/meta-data", "", "audience.webhook.url"},
		{"http://localhost:8080/users", "", "audience.webhook.url"},
		{"http://[::ffff:127.0.0.1]/users", "", "audience.webhook.url"},
		{"http://2130706433/users", "", "audience.webhook.url"},
		{"https://crm.example/users", "nope", "audience.webhook.secret"},
	} {
		_, _, err := p.client.PutRule(p.ctx, dealsRule(heraldtype.RuleAudience{Webhook: &heraldtype.WebhookAudience{URL: tc.url, Secret: tc.secret}}))
		if he := asHeraldError(err); he == nil || he.Code != heraldtype.EINVALID || he.Field != tc.field {
			t.Errorf("webhook %s %q: %v, want %s", tc.url, tc.secret, err, tc.field)
		}
		req := dailyReco()
		req.Fetch = &heraldtype.CampaignFetch{URL: tc.url, Secret: tc.secret}
		_, _, err = p.client.PutCampaign(p.ctx, req)
		want := strings.Replace(tc.field, "audience.webhook", "fetch", 1)
		if he := asHeraldError(err); he == nil || he.Code != heraldtype.EINVALID || he.Field != want {
			t.Errorf("fetch %s %q: %v, want %s", tc.url, tc.secret, err, want)
		}
	}
	if _, _, err := p.client.PutRule(p.ctx, dealsRule(heraldtype.RuleAudience{Webhook: &heraldtype.WebhookAudience{URL: "https://crm.example/users", Secret: "crm"}})); err != nil {
		t.Fatal(err)
	}
}

// Issue 31 items 2 and 6: a dry run is no port or service oracle — a
// closed port, an open port that does not speak HTTP and one that never
// answers read the same — and shows neither the query nor the secret;
// the webhook gets the declared secret's header.
func TestDryRunIsNoOracle(t *testing.T) {
	var auth atomic.Value
	auth.Store("")
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		var q heraldtype.AudienceQuery
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.After != "" {
			_, _ = w.Write([]byte(`{"users":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"users":["a1","a2"]}`))
	}))
	defer hook.Close()
	p := newAudiencePipeline(t, func(c *Config) {
		c.Callout.Secrets = map[string]CalloutSecret{"crm": {Header: "Authorization", Value: "Bearer s3cret"}}
	})
	dry := func(url string) string {
		t.Helper()
		w := &heraldtype.WebhookAudience{URL: url, Secret: "crm", Timeout: heraldtype.Duration(300 * time.Millisecond)}
		if _, _, err := p.client.PutRule(p.ctx, dealsRule(heraldtype.RuleAudience{Webhook: w})); err != nil {
			t.Fatal(err)
		}
		out, err := p.client.DryRunRule(p.ctx, "deals", deal("", ""))
		if err != nil {
			t.Fatal(err)
		}
		rest := strings.ReplaceAll(out.Error, strings.SplitN(url, "?", 2)[0], "URL")
		if strings.Contains(rest, "s3cret") || strings.Contains(rest, "127.0.0.1") || strings.Contains(rest, "connect") {
			t.Errorf("%s: %q shows a secret or the network", url, out.Error)
		}
		return rest
	}
	if got := dry(hook.URL + "/users?token=s3cret"); got != "" || auth.Load() != "Bearer s3cret" {
		t.Fatalf("answering webhook: %q, auth %q", got, auth.Load())
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	banner := serveTCP(t, func(c net.Conn) { _, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n+OK redis\r\n")); c.Close() })
	silent := serveTCP(t, func(c net.Conn) { time.Sleep(time.Second); c.Close() })
	a := dry("http://" + closedAddr + "/users?token=s3cret")
	b := dry("http://" + banner + "/users?token=s3cret")
	c := dry("http://" + silent + "/users?token=s3cret")
	t.Logf("a dry run against each reads: %s", a)
	if a == "" || a != b || a != c || !strings.Contains(a, "failed") || strings.Contains(a, "s3cret") {
		t.Errorf("the dry runs differ or say too much:\n%s\n%s\n%s", a, b, c)
	}
}

// asHeraldError is err as a *heraldtype.Error, or nil.
func asHeraldError(err error) *heraldtype.Error {
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return he
	}
	return nil
}

// serveTCP accepts connections on loopback and serves each with serve.
func serveTCP(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return ln.Addr().String()
}

// Issue 31 item 3: a hostile fetch answer — 16 MiB of small values, of
// items, or one huge string — is refused with a clear last_error, and
// what the run allocates meanwhile stays far below the answer decoded
// whole (341 MiB of heap for 16 MiB before). Not parallel: it measures
// the process's allocations.
func TestHostileFetchAnswerIsBounded(t *testing.T) {
	const size = 16 << 20
	values := hostile(`{"users":{"u1":{"fields":{"f":[`, "1,", `1]}}}}`, size)
	items := hostile(`{"users":{"u1":{"items":[`, `{"k":"v"},`, `{}]}}}`, size)
	long := hostile(`{"users":{"u1":{"fields":{"f":"`, "x", `"}}}}`, size)
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"values", values, "holds more than 100000 values (campaigns.fetch_max_values)"},
		{"items", items, `has more than 100 items for user "u1" (campaigns.fetch_max_items)`},
		{"long", long, "the answer is longer than 4194304 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newCampaignPipeline(t)
			p.device("u1", "d-u1", "tok-u1")
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write(tc.body)
			}))
			defer srv.Close()
			req := dailyReco()
			req.Fetch = &heraldtype.CampaignFetch{URL: srv.URL}
			if _, _, err := p.client.PutCampaign(p.ctx, req); err != nil {
				t.Fatal(err)
			}
			if _, err := p.client.RunCampaign(p.ctx, "daily-reco", ""); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if err := p.client.campaigns.Tick(p.ctx); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d KiB during the run", allocated>>10)
			if allocated > 32<<20 {
				t.Errorf("the run allocated %d MiB for a %d MiB answer", allocated>>20, size>>20)
			}
			page, err := p.client.ListCampaignRuns(p.ctx, CampaignRunFilter{Campaign: "daily-reco"})
			if err != nil || len(page.Runs) != 1 {
				t.Fatalf("runs: %+v %v", page, err)
			}
			run := page.Runs[0]
			if run.State != heraldtype.RunFailed || run.FetchFailed != 1 || !strings.Contains(run.LastError, tc.want) ||
				!strings.Contains(run.LastError, "callout") && !strings.Contains(run.LastError, "POST") {
				t.Fatalf("run: %+v", run)
			}
		})
	}
}

// hostile is head, then unit repeated to about size bytes, then tail.
func hostile(head, unit, tail string, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + len(head) + len(tail))
	b.WriteString(head)
	for b.Len() < size {
		b.WriteString(unit)
	}
	b.WriteString(tail)
	return b.Bytes()
}
