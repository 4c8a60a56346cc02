package dispatch

import (
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/heraldtype"
)

// listingSender fails every send with a fresh code, except every tenth,
// which fails with the one code it lists.
type listingSender struct{ n atomic.Int64 }

func (s *listingSender) Send(context.Context, *heraldtype.Message) (string, error) {
	n := s.n.Add(1)
	if n%10 == 0 {
		return "", sendErr(heraldtype.ClassPermanent, "KNOWN")
	}
	return "", sendErr(heraldtype.ClassPermanent, fmt.Sprintf("fresh_%d", n))
}

func (s *listingSender) Codes() []string { return []string{"KNOWN"} }

// labelValues returns the distinct values of label in the metric family
// name.
func labelValues(t *testing.T, g prometheus.Gatherer, name, label string) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Issue 23 item 2: a provider's answers (and a delivery's stored provider
// name) must not create a series each; a code the provider does not list,
// and a provider nobody configured, count as "other".
func TestMetricLabelsAreBounded(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := newHarness(t, map[string]Sender{"fcm": &listingSender{}}, nil)
	reg.MustRegister(h.metrics.Failed, h.metrics.Dead, h.metrics.SendLatency)
	const n = 2000
	for range n {
		h.add(fakeDelivery{})
	}
	for i := 0; i < 3; i++ {
		h.add(fakeDelivery{provider: fmt.Sprintf("ghost-%d", i)})
	}
	for claimed := 0; claimed < n+3; {
		c, err := h.w.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c == 0 {
			t.Fatalf("claimed %d of %d deliveries", claimed, n+3)
		}
		claimed += c
	}
	if got := labelValues(t, reg, "herald_delivery_attempts_failed_total", "code"); fmt.Sprint(got) != "[KNOWN other]" {
		t.Errorf("failed code labels = %d values %.80v, want [KNOWN other]", len(got), got)
	}
	if got := labelValues(t, reg, "herald_deliveries_dead_total", "code"); fmt.Sprint(got) != "[KNOWN no_provider other]" {
		t.Errorf("dead code labels = %d values %.80v, want [KNOWN no_provider other]", len(got), got)
	}
	if got := labelValues(t, reg, "herald_deliveries_dead_total", "provider"); fmt.Sprint(got) != "[fcm other]" {
		t.Errorf("dead provider labels = %v, want [fcm other]", got)
	}
}
