package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/store/postgres"
)

// TestPageTimes measures the console's pages against a filled PostgreSQL
// database (scripts/consolefill.sql; docs/PERFORMANCE.md, "The console")
// and fails when a page's 95th percentile passes 300 ms. It runs only
// when HERALD_CONSOLE_PERF_DSN names that database.
func TestPageTimes(t *testing.T) {
	dsn := os.Getenv("HERALD_CONSOLE_PERF_DSN")
	if dsn == "" {
		t.Skip("HERALD_CONSOLE_PERF_DSN is not set")
	}
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := herald.NewClient(herald.Config{Store: st, DisableWorkers: true, MaintenanceInterval: -1, Logger: logger,
		Reminders: herald.ReminderConfig{Disabled: true}, Campaigns: herald.CampaignConfig{Disabled: true},
		Rules: herald.RuleConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := console.New(console.Config{Client: c, Dev: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	csrf := ""
	pages := []struct{ name, method, path string }{
		{"overview", "GET", "/console/overview"},
		{"overview fragment", "GET", "/console/overview?fragment=overview"},
		{"dead letters", "GET", "/console/dead-letters"},
		{"dead letters by code and channel", "GET", "/console/dead-letters?code=UNAVAILABLE&channel=push"},
		{"dead letters by user", "GET", "/console/dead-letters?user=u4207"},
		{"dead letters by type and time", "GET", "/console/dead-letters?type=promo&since=" + url.QueryEscape(time.Now().Add(-48*time.Hour).UTC().Format("2006-01-02T15:04"))},
		{"dead events", "GET", "/console/dead-letters?kind=events"},
		{"bulk dry run (code, capped count)", "POST", "/console/dead-letters/replay"},
	}
	for _, p := range pages {
		var times []time.Duration
		for i := range 40 {
			var body io.Reader
			if p.method == "POST" {
				if csrf == "" {
					csrf = metaRE.FindStringSubmatch(get(t, srv.URL+"/console/overview"))[1]
				}
				body = strings.NewReader(url.Values{"csrf": {csrf}, "dry_run": {"1"}, "code": {"UNAVAILABLE"}}.Encode())
			}
			req, _ := http.NewRequest(p.method, srv.URL+p.path, body)
			if body != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			start := time.Now()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("%s: %d", p.name, res.StatusCode)
			}
			if i >= 5 { // the first few warm the caches
				times = append(times, time.Since(start))
			}
		}
		slices.Sort(times)
		p50, p95 := times[len(times)/2], times[len(times)*95/100]
		t.Logf("%-36s p50 %6.1f ms  p95 %6.1f ms", p.name, ms(p50), ms(p95))
		if p95 > 300*time.Millisecond {
			t.Errorf("%s: p95 %s over 300 ms", p.name, p95)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func get(t *testing.T, u string) string {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
