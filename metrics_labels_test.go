package herald

import (
	"fmt"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/internal/policy"
)

// acceptedTypes returns the type label values of
// herald_notifications_accepted_total.
func acceptedTypes(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != "herald_notifications_accepted_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "type" {
					out = append(out, l.GetValue())
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Issue 23 item 2: a trigger's fresh type name must not create a series.
// Declared types (configuration, PUT /v1/types) keep their own label;
// every other type is "other".
func TestAcceptedTypeLabelIsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := newPipeline(t, func(c *Config) { c.Registerer = reg; c.DisableWorkers = true })
	p.device("u1", "d1", "tok-1")
	p.enqueue(Request{UserID: "u1", Type: "nudge"})
	for i := range 300 {
		p.enqueue(Request{UserID: "u1", Type: fmt.Sprintf("fresh-%d", i)})
	}
	if got := acceptedTypes(t, reg); fmt.Sprint(got) != "[nudge other]" {
		t.Fatalf("type labels after 300 fresh types = %v, want [nudge other]", got)
	}
	// A type declared later gets its own label from then on.
	if _, err := p.client.PutType(p.ctx, "fresh-7", TypeConfig{}); err != nil {
		t.Fatal(err)
	}
	p.enqueue(Request{UserID: "u1", Type: "fresh-7"})
	if got := acceptedTypes(t, reg); fmt.Sprint(got) != "[fresh-7 nudge other]" {
		t.Fatalf("type labels after PUT /v1/types/fresh-7 = %v, want [fresh-7 nudge other]", got)
	}
	// So does a type another instance declared, once this one resolves it
	// (at its first trigger here, or when the catalog cache expires).
	if _, err := p.store.PutType(p.ctx, policy.DefaultType("declared-elsewhere"), p.clock.Now()); err != nil {
		t.Fatal(err)
	}
	p.enqueue(Request{UserID: "u1", Type: "declared-elsewhere"})
	if got := acceptedTypes(t, reg); fmt.Sprint(got) != "[declared-elsewhere fresh-7 nudge other]" {
		t.Fatalf("type labels after another instance declared declared-elsewhere = %v", got)
	}
}
