package herald

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/heraldhq/herald/heraldtype"
)

// syncBuffer is a log sink the engine may write to from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Issue 30 item 3: an event from Kafka that a saved rule cannot judge (a
// price that is not a number, a missing previous price) leaves a failed
// run in the rule's runs, a log line, and the decision counted under the
// rule's own name — not "other".
func TestAnEventARuleCannotJudgeIsVisible(t *testing.T) {
	reg := prometheus.NewRegistry()
	logs := &syncBuffer{}
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{}
		c.Registerer = reg
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		c.Rules = RuleConfig{Pause: -1}
	})
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	bad := priceChange("kafka-1", 0, 8500)
	bad.Data["previous_price"] = "eighty"
	missing := priceChange("kafka-2", 0, 8500)
	delete(missing.Data, "previous_price")
	for _, e := range []Event{bad, missing} {
		out, err := p.client.Track(p.ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Rules) != 1 || out.Rules[0].Error == "" || out.Rules[0].Run == "" {
			t.Fatalf("Track(%s) = %+v, want the rule's error and its failed run", e.ID, out)
		}
	}
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if err != nil || len(runs.Runs) != 2 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	for _, r := range runs.Runs {
		if r.State != heraldtype.RunFailed || !strings.Contains(r.LastError, "previous_price") || r.Recipients != 0 {
			t.Errorf("run %s: state %s, last_error %q", r.ID, r.State, r.LastError)
		}
	}
	if got := counterValue(t, p.client.metrics.RuleDecisions.WithLabelValues("price-drop", "error")); got != 2 {
		t.Errorf(`herald_rule_decisions_total{rule="price-drop",outcome="error"} = %v, want 2`, got)
	}
	if got := counterValue(t, p.client.metrics.RuleDecisions.WithLabelValues("other", "error")); got != 0 {
		t.Errorf(`a saved rule's decisions counted under rule="other": %v`, got)
	}
	for _, id := range []string{"kafka-1", "kafka-2"} {
		if !strings.Contains(logs.String(), "event="+id) || !strings.Contains(logs.String(), "rule=price-drop") {
			t.Errorf("no log line names rule price-drop and event %s:\n%s", id, logs.String())
		}
	}
	// Nothing was sent for them.
	p.fanOut()
	if got := p.notified("price_drop"); len(got) != 0 {
		t.Fatalf("notified %v", got)
	}
}

// counterValue reads one counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
