package fault

import "testing"

func TestLayoutReadsByConvention(t *testing.T) {
	t.Parallel()
	type smtpLike struct{ Times int } // no Retry-After
	type smtpFaults struct {
		Recipients    map[string]smtpLike `json:"recipients,omitempty"`
		LatencyMillis int
	}
	l := layoutOf[smtpFaults, smtpLike]()
	f := smtpFaults{LatencyMillis: 250}
	*l.rulesOf(&f) = map[string]smtpLike{"a": {Times: 2}}
	if l.set != "recipients" || l.latencyOf(&f) != 250 || len(f.Recipients) != 1 {
		t.Fatalf("layout read set %q, latency %d, rules %v", l.set, l.latencyOf(&f), f.Recipients)
	}
	if r := l.retryOf(smtpLike{Times: 2}); r != (Retry{Times: 2}) {
		t.Fatalf("retryOf = %+v", r)
	}
	full := layoutOf[faults, rule]()
	if r := full.retryOf(rule{Times: 1, RetryAfterSeconds: 30}); r != (Retry{Times: 1, AfterSeconds: 30}) {
		t.Fatalf("retryOf = %+v", r)
	}
}

func TestLayoutRefusesAnotherShape(t *testing.T) {
	t.Parallel()
	type noTimes struct{ Code string }
	type badRetry struct {
		Times             int
		RetryAfterSeconds string
	}
	tests := map[string]func(){
		"no rules": func() { layoutOf[struct{ LatencyMillis int }, rule]() },
		"no JSON name": func() {
			layoutOf[struct {
				Rules         map[string]rule
				LatencyMillis int
			}, rule]()
		},
		"no latency": func() {
			layoutOf[struct {
				Rules map[string]rule `json:"rules"`
			}, rule]()
		},
		"no Times": func() {
			layoutOf[struct {
				Rules         map[string]noTimes `json:"rules"`
				LatencyMillis int
			}, noTimes]()
		},
		"Retry-After not an int": func() {
			layoutOf[struct {
				Rules         map[string]badRetry `json:"rules"`
				LatencyMillis int
			}, badRetry]()
		},
	}
	for name, f := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: layoutOf did not panic", name)
				}
			}()
			f()
		}()
	}
}
