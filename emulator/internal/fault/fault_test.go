package fault

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rule is the smallest rule type an emulator could plug in.
type rule struct {
	code              string
	Times             int
	RetryAfterSeconds int
	stage             bool
}

// faults is the smallest faults value an emulator could plug in.
type faults struct {
	name          string
	Rules         map[string]rule `json:"tokens"`
	rates         []Rate[rule]
	LatencyMillis int
}

func newTestEngine() *Engine[faults, rule, string] {
	return New(1, Spec[faults, rule, string]{
		Rates: func(f *faults) []Rate[rule] { return f.rates },
		Check: func(r rule) error {
			if r.code == "" {
				return errUnknown
			}
			return nil
		},
		Target: strings.ToLower,
		Key:    func(r rule) string { return r.code },
	})
}

// mustSet sets f or fails the test.
func mustSet(t *testing.T, e *Engine[faults, rule, string], f faults) {
	t.Helper()
	if err := e.SetFaults(f); err != nil {
		t.Fatal(err)
	}
}

func TestPickRulesThenRates(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mustSet(t, e, faults{name: "as set", Rules: map[string]rule{"A": {code: "GONE"}, "b": {code: "BUSY", Times: 1, RetryAfterSeconds: 10}}})
	for range 3 {
		if inj, fail := e.Pick("a", now, nil); !fail || inj.Outcome.code != "GONE" {
			t.Fatalf("a rule with Times 0 let a send through: %+v", inj)
		}
	}
	if inj, fail := e.Pick("b", now, nil); !fail || inj.RetryAfter != 10 {
		t.Fatalf("first send to b: %+v %v", inj, fail)
	}
	if _, fail := e.Pick("b", now.Add(time.Second), nil); fail {
		t.Fatal("a rule with Times 1 failed a second send")
	}
	forced := rule{code: "STOP"}
	if inj, fail := e.Pick("c", now, &forced); !fail || inj.Outcome.code != "STOP" {
		t.Fatalf("forced outcome: %+v %v", inj, fail)
	}
	if _, fail := e.Pick("", now, nil); fail {
		t.Fatal("a send without target failed without rates")
	}
	e.Accept()
	own := e.Counter()
	own.Inc()
	own.Inc()
	c := e.Counts()
	if own.Load() != 2 {
		t.Fatalf("an own counter = %d, want 2", own.Load())
	}
	if c.Accepted != 1 || c.Rejected["GONE"] != 3 || c.Rejected["BUSY"] != 1 || c.Rejected["STOP"] != 1 || c.EarlyRetries != 1 {
		t.Fatalf("counts %+v", c)
	}
	if f := e.Faults(); f.name != "as set" || len(f.Rules) != 2 || f.Rules["a"].code != "GONE" {
		t.Fatalf("Faults = %+v", f)
	}
	if err := e.Fail("C", rule{code: "LATER"}); err != nil {
		t.Fatal(err)
	}
	if inj, fail := e.Pick("c", now, nil); !fail || inj.Outcome.code != "LATER" {
		t.Fatalf("a rule added by Fail: %+v %v", inj, fail)
	}
	e.ResetCounts()
	e.Clear()
	if c := e.Counts(); c.Accepted != 0 || len(c.Rejected) != 0 || c.EarlyRetries != 0 {
		t.Fatalf("counts after ResetCounts %+v", c)
	}
	if own.Load() != 0 {
		t.Fatalf("an own counter after ResetCounts = %d, want 0", own.Load())
	}
	if f := e.Faults(); f.name != "" || len(f.Rules) != 0 {
		t.Fatalf("Faults after Clear = %+v", f)
	}
}

func TestRatesAreSeededAndOrdered(t *testing.T) {
	t.Parallel()
	draw := func() []string {
		e := newTestEngine()
		mustSet(t, e, faults{rates: []Rate[rule]{{Name: "x", Fault: RateFault{Rate: 0.3}, Outcome: rule{code: "X"}},
			{Name: "y", Fault: RateFault{Rate: 0.3, RetryAfterSeconds: 2}, Outcome: rule{code: "Y"}}}})
		var out []string
		for range 200 {
			inj, fail := e.Pick("t", time.Time{}, nil)
			if !fail {
				inj.Outcome.code = "ok"
			}
			out = append(out, inj.Outcome.code)
		}
		return out
	}
	a, b := draw(), draw()
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatal("the same seed drew different faults")
	}
	n := map[string]int{}
	for _, c := range a {
		n[c]++
	}
	if n["X"] < 30 || n["Y"] < 30 || n["ok"] < 50 {
		t.Fatalf("draws %v do not follow the rates", n)
	}
}

func TestPickStage(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	mustSet(t, e, faults{Rules: map[string]rule{"late": {code: "550", stage: true, Times: 1}},
		rates: []Rate[rule]{{Name: "all", Fault: RateFault{Rate: 1}, Outcome: rule{code: "421"}}}})
	atStage := func(stage bool) func(rule) bool { return func(r rule) bool { return r.stage == stage } }
	if _, fail := e.PickStage("late", atStage(false), true); fail {
		t.Fatal("a rule for the later stage, or a rate, failed the first stage")
	}
	if r, fail := e.PickStage("late", atStage(true), false); !fail || r.code != "550" {
		t.Fatalf("later stage: %+v %v", r, fail)
	}
	if _, fail := e.PickStage("late", atStage(true), false); fail {
		t.Fatal("a used-up rule failed again")
	}
	if r, fail := e.PickStage("other", atStage(false), true); !fail || r.code != "421" {
		t.Fatalf("rate at the first stage: %+v %v", r, fail)
	}
	if _, fail := e.PickStage("other", atStage(true), false); fail {
		t.Fatal("a rate failed a stage without rates")
	}
}

func TestSetFaultsChecks(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	tests := []struct {
		rules   map[string]rule
		rates   []Rate[rule]
		latency int
		want    string
	}{
		{map[string]rule{"a": {}}, nil, 0, `tokens["a"]: unknown`},
		{map[string]rule{"a": {code: "X", Times: -1}}, nil, 0, `tokens["a"]: times and retry_after_seconds must not be negative`},
		{nil, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 2}}}, 0, "r: rate must be in 0..1 and retry_after_seconds not negative"},
		{nil, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 0.6}}, {Name: "s", Fault: RateFault{Rate: 0.6}}}, 0, "the rates add up to more than 1"},
		{nil, nil, -1, "latency_ms must not be negative"},
		{map[string]rule{"a": {code: "X"}}, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 0.5}}}, 0, ""},
	}
	for _, tt := range tests {
		err := e.SetFaults(faults{Rules: tt.rules, rates: tt.rates, LatencyMillis: tt.latency})
		if got := errString(err); got != tt.want {
			t.Errorf("SetFaults(%v, %v, %d) = %q, want %q", tt.rules, tt.rates, tt.latency, got, tt.want)
		}
	}
	if err := e.Fail("a", rule{code: "X", RetryAfterSeconds: -1}); errString(err) != "times and retry_after_seconds must not be negative" {
		t.Errorf("Fail of an unsound rule = %v", err)
	}
	if err := RuleError("tokens", "a", e.Fail("a", rule{})); errString(err) != `tokens["a"]: unknown` {
		t.Errorf("RuleError(Fail of an unknown rule) = %v", err)
	}
}

type checkError string

func (c checkError) Error() string { return string(c) }

const errUnknown = checkError("unknown")

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestWaitAndRetryAfter(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	if !e.Wait(context.Background()) {
		t.Fatal("Wait without latency reported a cancelled context")
	}
	mustSet(t, e, faults{LatencyMillis: 60_000})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e.Wait(ctx) {
		t.Fatal("Wait outlived its context")
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{}
	WriteRetryAfter(h, 0, false, now)
	if h.Get("Retry-After") != "" {
		t.Fatal("Retry-After without seconds")
	}
	WriteRetryAfter(h, 30, false, now)
	if h.Get("Retry-After") != "30" {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
	WriteRetryAfter(h, 30, true, now)
	if h.Get("Retry-After") != "Fri, 02 Jan 2026 03:04:35 GMT" {
		t.Fatalf("Retry-After %q", h.Get("Retry-After"))
	}
}
