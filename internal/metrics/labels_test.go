package metrics

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Issue 23 item 2: 10,000 distinct values of every label kind leave the
// series count bounded by the declared sets plus "other".
func TestSeriesStayBoundedUnderDistinctInputs(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	m.DeclareTypes("welcome")
	m.DeclareProviders("fcm")
	m.DeclareCodes("UNREGISTERED")
	for i := range 10000 {
		v := "fresh-" + strconv.Itoa(i)
		m.Accepted.WithLabelValues(m.Type(v)).Inc()
		m.Failed.WithLabelValues(m.Provider(v), m.Code(v)).Inc()
		m.Skipped.WithLabelValues(m.Code(v)).Inc()
		m.PolicyDecisions.WithLabelValues(m.Code(v), m.Code(v)).Inc()
	}
	m.Accepted.WithLabelValues(m.Type("welcome")).Inc()
	m.Failed.WithLabelValues(m.Provider("fcm"), m.Code("UNREGISTERED")).Inc()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		series += len(mf.GetMetric())
	}
	// accepted {welcome, other}, failed {fcm/UNREGISTERED, other/other},
	// skipped {other}, policy {other/other}, the three unlabelled counters
	// (unknown, requeued, campaign fetch errors), the unlabelled
	// reminder lag histogram and the unlabelled gauge of pending webhook
	// messages. (The reminder and campaign counters' labels are Herald's
	// own fixed sets: events, stop reasons, outcomes.)
	if series != 11 {
		t.Fatalf("%d series after 10,000 distinct inputs, want 11", series)
	}
}

// A declared set is bounded too: values past maxLabelValues are "other".
func TestDeclaredSetIsCapped(t *testing.T) {
	m := New(nil)
	for i := range maxLabelValues + 50 {
		m.DeclareTypes("t" + strconv.Itoa(i))
	}
	if got := m.Type("t" + strconv.Itoa(maxLabelValues+10)); got != Other {
		t.Fatalf("type past the cap = %q, want %q", got, Other)
	}
	if got := m.Type("t1"); got != "t1" {
		t.Fatalf("declared type = %q, want t1", got)
	}
}

// The lookup runs for every delivery: it must not allocate.
func TestLabelLookupDoesNotAllocate(t *testing.T) {
	m := New(nil)
	m.DeclareCodes("UNREGISTERED")
	if n := testing.AllocsPerRun(1000, func() { _ = m.Code("UNREGISTERED"); _ = m.Code("nope") }); n != 0 {
		t.Fatalf("label lookup allocates %v times", n)
	}
}

func BenchmarkCodeLabel(b *testing.B) {
	m := New(nil)
	m.DeclareCodes("UNREGISTERED", "INTERNAL", "QUOTA_EXCEEDED")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = m.Code("INTERNAL")
		}
	})
}
