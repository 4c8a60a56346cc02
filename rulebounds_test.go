package herald

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// alwaysRule is a rule of the Kafka price topic that fires on every
// PRICE_CHANGE and reaches the product's interested users.
func alwaysRule(name string) Rule {
	r := priceDropRule()
	r.Name = name
	r.When.Detect = heraldtype.Detector{Always: true}
	r.Notify.Title = "{{.product_name}}"
	r.Notify.Body = ""
	return r
}

// Issue 31 item 4: at most rules.max_per_event enabled rules judge one
// source's events of one name; one more is a 400 naming the limit, a
// disabled one is saved, replacing an enabled one is not one more, and
// enabling the disabled one is refused too.
func TestRulesPerEventAreBounded(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{}
		c.Rules = RuleConfig{MaxPerEvent: 3}
	})
	for i := range 3 {
		if _, _, err := p.client.PutRule(p.ctx, alwaysRule(fmt.Sprintf("r%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := p.client.PutRule(p.ctx, alwaysRule("r3"))
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID || errField(err) != "when.event" ||
		!strings.Contains(err.Error(), "rules.max_per_event") {
		t.Fatalf("a 4th enabled rule: %v, want invalid_argument on when.event naming rules.max_per_event", err)
	}
	off := alwaysRule("r3")
	off.Disabled = true
	if _, _, err := p.client.PutRule(p.ctx, off); err != nil {
		t.Fatalf("a disabled 4th rule: %v", err)
	}
	if _, _, err := p.client.PutRule(p.ctx, alwaysRule("r1")); err != nil {
		t.Fatalf("replacing an enabled rule: %v", err)
	}
	if _, _, err := p.client.PutRule(p.ctx, alwaysRule("r3")); errField(err) != "when.event" {
		t.Fatalf("enabling the 4th: %v", err)
	}
	// Another event name, or another source, has its own room.
	other := alwaysRule("stock")
	other.When.Event = "STOCK_CHANGE"
	if _, _, err := p.client.PutRule(p.ctx, other); err != nil {
		t.Fatal(err)
	}
	httpRule := alwaysRule("http")
	httpRule.Source = heraldtype.RuleSource{}
	if _, _, err := p.client.PutRule(p.ctx, httpRule); err != nil {
		t.Fatal(err)
	}
}

// Issue 31 item 4: an event's answer and its stored record are a bounded
// summary — the counts of every decision and the first
// rules.recorded_decisions of them — the same when it is replayed.
func TestEventRecordIsABoundedSummary(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{}
		c.Rules = RuleConfig{RecordedDecisions: 2, Pause: -1}
	})
	p.interested("VIEW", "product:42", "u1")
	for i := range 5 {
		if _, _, err := p.client.PutRule(p.ctx, alwaysRule(fmt.Sprintf("r%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	out, err := p.client.Track(p.ctx, priceChange("ev-1", 100, 90))
	if err != nil {
		t.Fatal(err)
	}
	want := DecisionCounts{Rules: 5, Detected: 5, Runs: 5}
	if len(out.Rules) != 2 || !out.RulesTruncated || out.Counts == nil || *out.Counts != want ||
		out.Rules[0].Rule != "r0" || out.Rules[1].Rule != "r1" {
		t.Fatalf("Track: %+v counts %+v", out, out.Counts)
	}
	rec, ok, err := p.store.RecordedEvent(p.ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-1"})
	if err != nil || !ok {
		t.Fatalf("record: %v %v", ok, err)
	}
	if strings.Contains(string(rec.Outcome), `"r2"`) || !strings.Contains(string(rec.Outcome), `"rules":5`) {
		t.Fatalf("stored record: %s", rec.Outcome)
	}
	again, err := p.client.Track(p.ctx, priceChange("ev-1", 100, 90))
	if err != nil || !again.Replayed || len(again.Rules) != 2 || *again.Counts != want {
		t.Fatalf("replay: %+v %v", again, err)
	}
	// Every run still fans out.
	p.fanOut()
	runs := 0
	for i := range 5 {
		page, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: fmt.Sprintf("r%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		runs += len(page.Runs)
	}
	if runs != 5 {
		t.Fatalf("%d runs, want 5", runs)
	}
}

// Issue 31 item 4: the compiled-rule cache keeps what it can hold — past
// 1,024 rules each is compiled once, not once per lap — and never more
// than its bound.
func TestCompiledRuleCacheDoesNotThrash(t *testing.T) {
	rules := make([]Rule, 2000)
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for i := range rules {
		rules[i] = alwaysRule(fmt.Sprintf("r%04d", i))
		rules[i].UpdatedAt = at
	}
	var cache compiledRules
	for range 3 {
		for _, r := range rules {
			if _, err := cache.get(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if cache.compiles != len(rules) {
		t.Fatalf("2,000 rules looked up 3 times compiled %d times, want 2,000", cache.compiles)
	}
	// An edit compiles the rule again.
	rules[7].UpdatedAt = at.Add(time.Second)
	if c, err := cache.get(rules[7]); err != nil || !c.Rule.UpdatedAt.Equal(rules[7].UpdatedAt) || cache.compiles != len(rules)+1 {
		t.Fatalf("after an edit: %v, %d compiles", err, cache.compiles)
	}
	// A bounded cache holds its bound, and the least recently used goes.
	small := compiledRules{limit: 8}
	for _, r := range rules[:10] {
		if _, err := small.get(r); err != nil {
			t.Fatal(err)
		}
	}
	if small.len() != 8 {
		t.Fatalf("the cache holds %d, want 8", small.len())
	}
	before := small.compiles
	for _, r := range rules[2:10] {
		if _, err := small.get(r); err != nil {
			t.Fatal(err)
		}
	}
	if small.compiles != before {
		t.Fatalf("the 8 most recent rules were compiled again: %d", small.compiles-before)
	}
	if _, err := small.get(rules[0]); err != nil || small.compiles != before+1 {
		t.Fatalf("the least recently used was kept: %v", err)
	}
}

// errField is the field a Herald error names ("" for none).
func errField(err error) string {
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return he.Field
	}
	return ""
}
