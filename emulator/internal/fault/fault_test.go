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
	code       string
	times      int
	retryAfter int
	stage      bool
}

func newTestEngine() *Engine[string, rule, string] {
	return New[string](1,
		func(r rule) Retry { return Retry{Times: r.times, AfterSeconds: r.retryAfter} },
		func(r rule) string { return r.code })
}

func TestPickRulesThenRates(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e.Set("as set", map[string]rule{"a": {code: "GONE"}, "b": {code: "BUSY", times: 1, retryAfter: 10}}, nil, 0)
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
	c := e.Counts()
	if c.Accepted != 1 || c.Rejected["GONE"] != 3 || c.Rejected["BUSY"] != 1 || c.Rejected["STOP"] != 1 || c.EarlyRetries != 1 {
		t.Fatalf("counts %+v", c)
	}
	if f, rules := e.Current(); f != "as set" || len(rules) != 2 {
		t.Fatalf("Current = %q, %v", f, rules)
	}
	e.ResetCounts()
	e.Clear()
	if c := e.Counts(); c.Accepted != 0 || len(c.Rejected) != 0 || c.EarlyRetries != 0 {
		t.Fatalf("counts after ResetCounts %+v", c)
	}
}

func TestRatesAreSeededAndOrdered(t *testing.T) {
	t.Parallel()
	draw := func() []string {
		e := newTestEngine()
		e.Set("", nil, []Rate[rule]{{Name: "x", Fault: RateFault{Rate: 0.3}, Outcome: rule{code: "X"}},
			{Name: "y", Fault: RateFault{Rate: 0.3, RetryAfterSeconds: 2}, Outcome: rule{code: "Y"}}}, 0)
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
	e.Set("", map[string]rule{"late": {code: "550", stage: true, times: 1}},
		[]Rate[rule]{{Name: "all", Fault: RateFault{Rate: 1}, Outcome: rule{code: "421"}}}, 0)
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

func TestCheck(t *testing.T) {
	t.Parallel()
	e := newTestEngine()
	known := func(r rule) error {
		if r.code == "" {
			return errUnknown
		}
		return nil
	}
	tests := []struct {
		rules map[string]rule
		rates []Rate[rule]
		want  string
	}{
		{map[string]rule{"a": {}}, nil, `tokens["a"]: unknown`},
		{map[string]rule{"a": {code: "X", times: -1}}, nil, `tokens["a"]: times and retry_after_seconds must not be negative`},
		{nil, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 2}}}, "r: rate must be in 0..1 and retry_after_seconds not negative"},
		{nil, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 0.6}}, {Name: "s", Fault: RateFault{Rate: 0.6}}}, "the rates add up to more than 1"},
		{map[string]rule{"a": {code: "X"}}, []Rate[rule]{{Name: "r", Fault: RateFault{Rate: 0.5}}}, ""},
	}
	for _, tt := range tests {
		err := e.Check("tokens", tt.rules, known, tt.rates)
		if got := errString(err); got != tt.want {
			t.Errorf("Check(%v, %v) = %q, want %q", tt.rules, tt.rates, got, tt.want)
		}
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
	e.Set("", nil, nil, 60_000)
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
