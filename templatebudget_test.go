package herald

// Issue 31 item 1 through the Client: a campaign and an event rule whose
// templates go over their budget fail that recipient or that decision as
// render_failed, counted, and the rest goes on.

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/boundtest"
)

// The templates of issue 31 item 1; the spin through a variable, so that
// it passes the check at save and reaches the render's budget.
const (
	doublingTemplate = `{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`
	spinTemplate     = `{{$n := 9000000000000000000}}{{range $n}}{{end}}`
	spinLiteral      = `{{range 9000000000000000000}}{{end}}`
)

// A campaign run over a template past its budget stops failed at its
// first batch — each recipient counted render_failed, the reason on the
// run — instead of taking the leader's memory or core, spending the budget
// on every user, or resuming into it after each restart; a campaign beside
// it runs to the end in the same tick. A range over a
// literal above the budget is refused when the campaign is saved. The
// heap is bounded (a child process whose heap past 512 MiB fails).
func TestCampaignTemplateBudget(t *testing.T) {
	t.Parallel()
	boundtest.Run(t, boundtest.Bounds{MaxHeap: 512 << 20, Timeout: 2 * time.Minute}, func(t *testing.T) {
		p := newPipeline(t, func(c *Config) {
			c.Types["recommendation"] = TypeConfig{}
			c.Logger = slog.New(slog.DiscardHandler)
			c.Campaigns = CampaignConfig{Pause: -1, BatchSize: 2}
		})
		p.clock.now = p.clock.now.Truncate(time.Second)
		for _, u := range []string{"u1", "u2", "u3"} {
			p.device(u, "d-"+u, "tok-"+u)
		}
		r := dailyReco()
		r.Title = spinLiteral
		if _, _, err := p.client.PutCampaign(p.ctx, r); heraldtype.ErrorCode(err) != heraldtype.EINVALID ||
			!strings.Contains(err.Error(), "templates.max_steps") {
			t.Fatalf("a range over 9e18 saved: %v", err)
		}
		cases := map[string]struct{ title, body, limit string }{
			"doubling": {doublingTemplate, "x", "bytes"},
			"spin":     {"x", spinTemplate, "steps"},
			"benign":   {"Hi", "For {{.User.ID}}", ""},
		}
		runs := map[string]string{}
		for name, tc := range cases {
			r := dailyReco()
			r.Name, r.Title, r.Body = name, tc.title, tc.body
			if _, _, err := p.client.PutCampaign(p.ctx, r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			run, err := p.client.RunCampaign(p.ctx, name, "")
			if err != nil {
				t.Fatal(err)
			}
			runs[name] = run.ID
		}
		if err := p.client.campaigns.Tick(p.ctx); err != nil {
			t.Fatal(err)
		}
		for name, tc := range cases {
			got, err := p.client.GetCampaignRun(p.ctx, name, runs[name])
			if err != nil {
				t.Fatal(err)
			}
			if tc.limit == "" {
				if got.State != heraldtype.RunDone || got.Enqueued != 3 {
					t.Errorf("%s: %+v", name, got)
				}
				continue
			}
			// The first batch (2 of the 3 users) all over the budget: the
			// run stops there.
			if got.State != heraldtype.RunFailed || got.Recipients != 2 || got.RenderFailed != 2 || got.Enqueued != 0 ||
				!strings.HasPrefix(got.LastError, "every recipient of a batch went over the template budget") ||
				!strings.Contains(got.LastError, "templates.max_"+tc.limit) && !strings.Contains(got.LastError, "templates.max_duration") {
				t.Errorf("%s: %+v", name, got)
			}
		}
		var over float64
		for _, limit := range []string{"bytes", "steps", "time"} {
			over += counterValue(t, p.client.metrics.TemplateOverBudget.WithLabelValues("campaign", limit))
		}
		if over != 4 {
			t.Errorf("herald_template_over_budget_total{campaign} = %v, want 4", over)
		}
	})
}

// A rule whose template goes over its budget fails its decision as
// render_failed, counted by herald_rule_decisions_total and
// herald_template_over_budget_total; the event's other rules decide as
// usual.
func TestRuleTemplateBudgetCounted(t *testing.T) {
	t.Parallel()
	boundtest.Run(t, boundtest.Bounds{MaxHeap: 512 << 20, Timeout: 2 * time.Minute}, func(t *testing.T) {
		p := newPipeline(t, func(c *Config) { c.Types["hostile"] = TypeConfig{} })
		p.device("u1", "d1", "tok1")
		for name, title := range map[string]string{"doubling": doublingTemplate, "spin": spinTemplate, "benign": "Hi"} {
			if _, _, err := p.client.PutRule(p.ctx, Rule{Name: name, When: heraldtype.RuleWhen{Event: "HOSTILE", Detect: heraldtype.Detector{Always: true}},
				Audience: heraldtype.RuleAudience{EventUser: true}, Notify: heraldtype.RuleNotify{Type: "hostile", Title: title}}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		out, err := p.client.Track(p.ctx, Event{ID: "ev-1", Name: "HOSTILE", UserID: "u1"})
		if err != nil || len(out.Rules) != 3 {
			t.Fatalf("track: %+v %v", out, err)
		}
		for _, o := range out.Rules {
			if failed := strings.HasPrefix(o.Error, "render_failed: notify.title: "); failed != (o.Rule != "benign") || o.Run == "" {
				t.Errorf("%s: %+v", o.Rule, o)
			}
		}
		// Rule names are label values once declared, else "other".
		labels := map[string]bool{}
		for _, rule := range []string{"doubling", "spin", "benign"} {
			labels[p.client.metrics.Rule(rule)] = true
		}
		var failed float64
		for l := range labels {
			failed += counterValue(t, p.client.metrics.RuleDecisions.WithLabelValues(l, "render_failed"))
		}
		if failed != 2 {
			t.Errorf("render_failed decisions: %v, want 2", failed)
		}
		// The spin stops at its steps, or on a machine so loaded that
		// 10,000 steps take 250 ms, at its time.
		var over float64
		for _, limit := range []string{"bytes", "steps", "time"} {
			over += counterValue(t, p.client.metrics.TemplateOverBudget.WithLabelValues("rule", limit))
		}
		if over != 2 {
			t.Errorf("renders over their budget: %v, want 2", over)
		}
	})
}
