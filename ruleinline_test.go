package herald

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Issue 39 item 3: a rule run whose audience fits rules.inline_recipients
// is written, done, with its notifications in the event's own
// transaction; the others go through the runner as before. (That a
// failure inside the transaction leaves neither the event's record nor a
// notification is the stores' shared suite: store/storetest.)

// running returns the runs the rule runner would pick up.
func (p *pipeline) running() []RuleRun {
	p.t.Helper()
	runs, err := p.client.store.RunningRuleRuns(p.ctx, 100)
	if err != nil {
		p.t.Fatal(err)
	}
	return runs
}

func TestSmallAudienceIsSentWithItsEvent(t *testing.T) {
	p := newRulePipeline(t) // batches of 3: rules.inline_recipients defaults to 3
	p.interested("VIEW", "product:42", "u1", "u2", "u3")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	out, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500))
	if err != nil || len(out.Rules) != 1 || out.Rules[0].Run == "" {
		t.Fatalf("Track: %+v %v", out, err)
	}
	// No runner has run: the notifications committed with the event.
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1", "u2", "u3"}) {
		t.Fatalf("notified %v", got)
	}
	if rs := p.running(); len(rs) != 0 {
		t.Fatalf("the runner has runs to work: %+v", rs)
	}
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if err != nil || len(runs.Runs) != 1 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if r := runs.Runs[0]; r.State != heraldtype.RunDone || r.Recipients != 3 || r.Enqueued != 3 || r.Cursor != "u3" ||
		r.FinishedAt.IsZero() || r.LastError != "" {
		t.Fatalf("run: %+v", r)
	}
	// Built as the runner builds a batch: the rule and the event on the
	// timeline, the subject as the dedupe key.
	n := p.history(HistoryFilter{UserID: "u1", Type: "price_drop"})[0]
	if src := p.status(n.NotificationID).Notification.Source; src == nil || src.Kind != heraldtype.SourceRule ||
		src.Name != "price-drop" || src.ID != "ev-1" || src.Occurrence != out.Rules[0].Run {
		t.Fatalf("source: %+v", src)
	}
	// Explained at once: the user's notification of the run, no "not
	// reached yet".
	x, err := p.client.Explain(p.ctx, ExplainRequest{UserID: "u1", Rule: "price-drop", RuleRun: out.Rules[0].Run})
	if err != nil || x.NotificationID != n.NotificationID {
		t.Fatalf("explain: %+v %v", x, err)
	}
	if got := counterValue(t, p.client.metrics.RuleRuns.WithLabelValues("done")); got != 1 {
		t.Fatalf("rule runs done: %v", got)
	}
	// A redelivery finds the record: nothing is sent again, and the
	// runner finds nothing to do.
	again, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500))
	if err != nil || !again.Replayed {
		t.Fatalf("replay: %+v %v", again, err)
	}
	p.fanOut()
	if got := p.notified("price_drop"); len(got) != 3 {
		t.Fatalf("after the replay: %v", got)
	}
	if sent := p.work(); sent != 3 {
		t.Fatalf("worked %d deliveries, want 3", sent)
	}
}

func TestLargerAudienceGoesThroughTheRunner(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1", "u2", "u3", "u4")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500)); err != nil {
		t.Fatal(err)
	}
	if got := p.notified("price_drop"); len(got) != 0 {
		t.Fatalf("notified before the runner: %v", got)
	}
	if rs := p.running(); len(rs) != 1 {
		t.Fatalf("running: %+v", rs)
	}
	p.fanOut()
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1", "u2", "u3", "u4"}) {
		t.Fatalf("notified %v", got)
	}
}

func TestInlineFallsBackToTheRunner(t *testing.T) {
	t.Run("UnknownListedUser", func(t *testing.T) {
		// The enqueue refuses the unknown user inside the event's
		// transaction: nothing is written, the event is recorded again
		// with its run for the runner, which leaves the user out.
		p := newRulePipeline(t)
		p.user("a", "Asia/Seoul", "tok-a")
		p.user("c", "Asia/Seoul", "tok-c")
		r := Rule{Name: "ops", When: heraldtype.RuleWhen{Event: "deploy_failed"},
			Audience: heraldtype.RuleAudience{UserIDs: []string{"a", "b", "c"}},
			Notify:   heraldtype.RuleNotify{Type: "back_in_stock", Title: "{{.service}} failed"}}
		if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
			t.Fatal(err)
		}
		ev := Event{ID: "d1", Name: "deploy_failed", Data: map[string]string{"service": "api"}}
		if _, err := p.client.Track(p.ctx, ev); err != nil {
			t.Fatal(err)
		}
		if rs := p.running(); len(rs) != 1 || len(p.notified("back_in_stock")) != 0 {
			t.Fatalf("running %+v, notified %v", rs, p.notified("back_in_stock"))
		}
		if again, err := p.client.Track(p.ctx, ev); err != nil || !again.Replayed {
			t.Fatalf("replay: %+v %v", again, err)
		}
		p.fanOut()
		p.fanOut()
		if got := p.notified("back_in_stock"); !slices.Equal(got, []string{"a", "c"}) {
			t.Fatalf("notified %v", got)
		}
		runs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "ops"})
		if r := runs.Runs[0]; r.State != heraldtype.RunDone || !strings.Contains(r.LastError, `"b"`) {
			t.Fatalf("run: %+v", r)
		}
	})
	t.Run("Off", func(t *testing.T) {
		p := newPolicyPipeline(t, func(c *Config) {
			c.Types["price_drop"] = TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
			c.Rules = RuleConfig{Pause: -1, BatchSize: 3, InlineRecipients: -1}
		})
		p.interested("VIEW", "product:42", "u1")
		if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
			t.Fatal(err)
		}
		if _, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500)); err != nil {
			t.Fatal(err)
		}
		if rs := p.running(); len(rs) != 1 {
			t.Fatalf("running: %+v", rs)
		}
		p.fanOut()
		if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1"}) {
			t.Fatalf("notified %v", got)
		}
	})
}

func TestInlineRecipientsIsBoundedByTheBatch(t *testing.T) {
	st := newPipeline(t, nil).client.store
	_, err := NewClient(Config{Store: st, Rules: RuleConfig{BatchSize: 50, InlineRecipients: 51}})
	if err == nil || !strings.Contains(err.Error(), "rules.inline_recipients") {
		t.Fatalf("NewClient: %v, want an error naming rules.inline_recipients", err)
	}
	c, err := NewClient(Config{Store: st, Rules: RuleConfig{BatchSize: 50}})
	if err != nil || c.cfg.Rules.InlineRecipients != 50 {
		t.Fatalf("default under a batch of 50: %v %v", c.cfg.Rules.InlineRecipients, err)
	}
}

// interestReads counts the interest pages read through the audiences
// (not those EventState reads ahead).
type interestReads struct {
	store.Store
	reads atomic.Int64
}

func (s *interestReads) InterestedUsers(ctx context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error) {
	s.reads.Add(1)
	return s.Store.InterestedUsers(ctx, q)
}

// TestAudienceReadAhead: an inline batch's first page is read with the
// event's rules, record and subject, guessed from the rules of the last
// event of the same name (rulereadahead.go); a guess an edit made wrong
// costs a read of its own, never a wrong audience.
func TestAudienceReadAhead(t *testing.T) {
	var counted *interestReads
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
		c.Rules = RuleConfig{Pause: -1, BatchSize: 3}
		counted = &interestReads{Store: c.Store}
		c.Store = counted
	})
	p.interested("VIEW", "product:42", "u1", "u2")
	p.interested("VIEW", "product:43", "u3")
	p.interested("CLICK", "product:44", "u4")
	p.interested("VIEW", "product:44", "u5")
	r := priceDropRule()
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	track := func(id, subject string) {
		t.Helper()
		e := priceChange(id, 10000, 8500)
		e.Subject = subject
		if out, err := p.client.Track(p.ctx, e); err != nil || len(out.Rules) != 1 || out.Rules[0].Run == "" {
			t.Fatalf("Track(%s): %+v %v", id, out, err)
		}
	}
	// The first event of its name has nothing to guess from.
	track("ev-1", "product:42")
	if got := counted.reads.Load(); got != 1 {
		t.Fatalf("%d audience reads for the first event, want 1", got)
	}
	// The next is read ahead.
	track("ev-2", "product:43")
	if got := counted.reads.Load(); got != 1 {
		t.Fatalf("%d audience reads after the second event, want still 1", got)
	}
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1", "u2", "u3"}) {
		t.Fatalf("notified %v", got)
	}
	// The rule now wants clicks only: the guess (views too) reads u4 and
	// u5 ahead, the batch's own query differs and is read by itself.
	r.Audience.Interest.Kinds = []string{"CLICK"}
	p.setClock(p.clock.Now().Add(time.Second)) // a rule is compiled again when its update time moves
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	track("ev-3", "product:44")
	if got := counted.reads.Load(); got != 2 {
		t.Fatalf("%d audience reads after a wrong guess, want 2", got)
	}
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1", "u2", "u3", "u4"}) {
		t.Fatalf("notified %v after the edit", got)
	}
	// An event the rule does not fire on leaves nothing to guess from:
	// the next event reads its audience itself, and reads nothing ahead
	// it would not use.
	up := priceChange("ev-4", 8500, 9000)
	up.Subject = "product:45"
	if out, err := p.client.Track(p.ctx, up); err != nil || len(out.Rules) != 1 || out.Rules[0].Detected {
		t.Fatalf("a price rise: %+v %v", out, err)
	}
	if g := p.client.ruleGuesses.get("product.inventory.v1", "PRICE_CHANGE"); len(g) != 0 {
		t.Fatalf("a guess after an event no rule fired on: %d rules", len(g))
	}
	track("ev-5", "product:46")
	if got := counted.reads.Load(); got != 3 {
		t.Fatalf("%d audience reads after an event no rule fired on, want 3", got)
	}
}
