package metrics

import (
	"sync"
	"sync/atomic"
)

// Other is the label value of anything outside a label's declared set.
// Label values come from triggers (types), configuration (providers) and
// provider answers (codes); each unbounded source would otherwise create
// one series per distinct value, and a series never goes away (issue 23).
const Other = "other"

// maxLabelValues bounds each declared set, so that even a stream of
// declared types (PUT /v1/types) cannot grow /metrics without bound.
const maxLabelValues = 1000

// labelSet is the bounded set of values one label kind may take. Reads are
// an atomic load and a map lookup, without a lock or an allocation: they
// run for every delivery. Writes (rare: start-up, a new declared type)
// copy the map.
type labelSet struct {
	mu     sync.Mutex // serialises writers
	values atomic.Pointer[map[string]string]
}

// get returns v if it is declared, Other otherwise.
func (s *labelSet) get(v string) string {
	if m := s.values.Load(); m != nil {
		if l, ok := (*m)[v]; ok {
			return l
		}
	}
	return Other
}

// add declares vs; values beyond maxLabelValues stay Other.
func (s *labelSet) add(vs ...string) {
	if old := s.values.Load(); old != nil {
		missing := false
		for _, v := range vs {
			if _, ok := (*old)[v]; !ok {
				missing = true
				break
			}
		}
		if !missing {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string]string{}
	if old := s.values.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	for _, v := range vs {
		if len(next) >= maxLabelValues {
			break
		}
		next[v] = v
	}
	s.values.Store(&next)
}

// Type is the value of the type label for a notification type: the type
// if it is declared (DeclareTypes), Other otherwise.
func (m *Metrics) Type(name string) string { return m.types.get(name) }

// DeclareTypes adds declared notification types (configuration file, PUT
// /v1/types) to the type label's set.
func (m *Metrics) DeclareTypes(names ...string) { m.types.add(names...) }

// Provider is the value of the provider label: a configured provider's
// name, Other otherwise.
func (m *Metrics) Provider(name string) string { return m.providers.get(name) }

// DeclareProviders adds configured providers to the provider label's set.
func (m *Metrics) DeclareProviders(names ...string) { m.providers.add(names...) }

// Code is the value of a code or reason label: a code a provider or Herald
// declared (DeclareCodes), Other otherwise.
func (m *Metrics) Code(code string) string { return m.codes.get(code) }

// DeclareCodes adds error and reason codes to the code label's set: each
// provider's known codes and Herald's own.
func (m *Metrics) DeclareCodes(codes ...string) { m.codes.add(codes...) }

// Rule returns the label of a rule: its name if declared (DeclareRules),
// else Other, so the rule series stay bounded.
func (m *Metrics) Rule(name string) string { return m.rules.get(name) }

// DeclareRules declares rule names as label values.
func (m *Metrics) DeclareRules(names ...string) { m.rules.add(names...) }
