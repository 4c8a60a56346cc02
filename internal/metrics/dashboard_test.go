package metrics_test

// Issue 34 item 5: the Grafana dashboard in docs/grafana names only
// metrics Herald exports. The exported set is read from a real registry —
// every collector a Client and a Kafka consumer register, after a real
// send — so a renamed or removed metric fails here, not on an operator's
// empty panel.

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
	"github.com/heraldhq/herald/store/sqlite"
)

const dashboardPath = "../../docs/grafana/herald-dashboard.json"

// recorder registers into a real registry and remembers each collector,
// so the test knows every metric's name and whether it is a histogram
// (whose series are name_bucket, name_sum and name_count) even before a
// label value is observed.
type recorder struct {
	*prometheus.Registry
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registry.Register(c)
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// series is every series name the recorded collectors export.
func (r *recorder) series(t *testing.T) map[string]bool {
	out := map[string]bool{}
	for _, c := range r.collectors {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("no name in %s", d)
			}
			switch c.(type) {
			case prometheus.Histogram, *prometheus.HistogramVec, prometheus.Summary, *prometheus.SummaryVec:
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					out[m[1]+suffix] = true
				}
			default:
				out[m[1]] = true
			}
		}
	}
	// What Gather returns after the send must be among them: the
	// recorder saw every collector.
	fams, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		name := f.GetName()
		if !out[name] && !out[name+"_bucket"] {
			t.Errorf("gathered %s, which no recorded collector describes", name)
		}
	}
	return out
}

type okProvider struct{}

func (okProvider) Send(context.Context, *heraldtype.Message) (string, error) { return "ok", nil }

// exported builds a Client and a Kafka consumer on one recorder, sends one
// notification, and returns the series names they export.
func exported(t *testing.T) map[string]bool {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	reg := &recorder{Registry: prometheus.NewRegistry()}
	c, err := herald.NewClient(herald.Config{Store: s, Providers: map[string]herald.Provider{"fcm": okProvider{}},
		MaintenanceInterval: -1, Logger: slog.New(slog.DiscardHandler), Registerer: reg,
		Worker: herald.WorkerConfig{PollInterval: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	if _, err := c.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "u1", herald.DeviceInput{DeviceID: "d1", Token: "tok", Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Enqueue(ctx, herald.Request{UserID: "u1", Type: "promo", Title: "t", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := c.GetNotification(ctx, res.Notifications[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Deliveries) == 1 && st.Deliveries[0].State == heraldtype.StateSent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notification was not sent: %+v", st.Deliveries)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := kafkaapi.New(kafkaapi.Config{Brokers: []string{"127.0.0.1:1"}, Registerer: reg,
		Topics: []kafkaapi.Topic{{Name: "requests", Kind: kafkaapi.KindNotifications}}}, c); err != nil {
		t.Fatal(err)
	}
	return reg.series(t)
}

var (
	quoted   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	braces   = regexp.MustCompile(`\{[^{}]*\}`)
	ranges   = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	variable = regexp.MustCompile(`\$\{?\w+\}?`)
	ident    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	keywords = map[string]bool{"and": true, "or": true, "unless": true, "offset": true, "bool": true, "by": true,
		"without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// metricNames are the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, grouping
// clauses and dashboard variables are removed, that are not functions
// (followed by "(") or keywords.
func metricNames(expr string) []string {
	e := quoted.ReplaceAllString(expr, `""`)
	e = braces.ReplaceAllString(e, " ")
	e = ranges.ReplaceAllString(e, " ")
	e = grouping.ReplaceAllString(e, " ")
	e = variable.ReplaceAllString(e, " ")
	var names []string
	for _, m := range ident.FindAllString(e, -1) {
		if strings.HasSuffix(m, "(") || keywords[strings.ToLower(m)] {
			continue
		}
		names = append(names, m)
	}
	return names
}

func TestMetricNamesOfPromQL(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.95, sum by (le, provider) (rate(herald_send_duration_seconds_bucket{provider=~"$provider"}[$__rate_interval])))`: {"herald_send_duration_seconds_bucket"},
		`sum(rate(a_total{x="y(z)"}[5m])) / (sum without (code) (b) or on(job) c)`:                                                             {"a_total", "b", "c"},
		`label_values(herald_deliveries_sent_total, provider)`:                                                                                 {"herald_deliveries_sent_total", "provider"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %v, want %v", expr, got, want)
		}
	}
}

// expressions are the dashboard's PromQL: every panel target's expr and
// every query variable's query, with where each is.
func expressions(t *testing.T) map[string]string {
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	out := map[string]string{}
	for _, p := range d.Panels {
		for i, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q target %d has no expr", p.Title, i)
			}
			out[tg.Expr] = "panel " + p.Title
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil || q.Query == "" {
			t.Fatalf("variable %s: query %s: %v", v.Name, v.Query, err)
		}
		// label_values(metric, label): only the metric is a name.
		expr := q.Query
		if rest, ok := strings.CutPrefix(expr, "label_values("); ok {
			expr, _, _ = strings.Cut(rest, ",")
		}
		out[expr] = "variable " + v.Name
	}
	return out
}

func TestDashboardNamesOnlyExportedMetrics(t *testing.T) {
	have := exported(t)
	exprs := expressions(t)
	if len(exprs) < 20 {
		t.Fatalf("only %d expressions in %s", len(exprs), dashboardPath)
	}
	used := map[string]bool{}
	for expr, where := range exprs {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", where, expr)
		}
		for _, n := range names {
			used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
			if !have[n] {
				t.Errorf("%s: %q names %s, which Herald does not export", where, expr, n)
			}
		}
	}
	// Every Herald metric has a panel: a metric added without one is a
	// gap in the dashboard, not a silent omission.
	missing := map[string]bool{}
	for n := range have {
		base := n
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, s)
		}
		if !used[base] {
			missing[base] = true
		}
	}
	for base := range missing {
		t.Errorf("the dashboard has no panel over %s", base)
	}
}
