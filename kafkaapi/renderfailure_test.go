package kafkaapi_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
)

// Issue 31 item 1, "dead-lettered where it came from Kafka": an event
// record whose rule's title goes over the template budget is applied once
// (the rule's run recorded failed as render_failed), kept as a dead event
// of kind render_failed naming the rule, and its offset committed — the
// next record of its partition is applied, and a consumer of the same
// group started afterwards does not see it again. Replayed while the rule
// is still broken, the dead event fails with the render's error; once the
// rule is fixed, its replay sends the run's notification to the audience
// exactly once, and a second replay sends nothing and says so.
// overBudget is the doubling title's failure: its bytes, or on a loaded
// machine its time.
var overBudget = regexp.MustCompile(`templates\.max_(bytes|duration)`)

func TestRenderFailureIsDeadLetteredAndReplayed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.users(2)
	if _, err := f.client.PutType(f.ctx, "price_drop", herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}
	putRule := func(name, event, title string) {
		t.Helper()
		r := heraldtype.Rule{Name: name, Source: heraldtype.RuleSource{KafkaTopic: "events.v1"},
			When:     heraldtype.RuleWhen{Event: event, Detect: heraldtype.Detector{Always: true}},
			Audience: heraldtype.RuleAudience{EventUser: true}, Notify: heraldtype.RuleNotify{Type: "price_drop", Title: title}}
		if _, _, err := f.client.PutRule(f.ctx, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	putRule("price-drop", "PRICE_CHANGE", `{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}{{$x}}`)
	putRule("hello", "HELLO", `Hello {{.user_id}}`)
	// The rule runner sends the runs (the delivery workers stay off: the
	// notifications are counted in the store).
	if err := f.client.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.client.Stop(t.Context()) })

	event := func(id, name, user string) []byte {
		v, _ := json.Marshal(herald.Event{ID: id, Name: name, UserID: user, Data: map[string]string{"price": "8500"}})
		return v
	}
	runs := func(rule string) []heraldtype.RuleRun {
		t.Helper()
		page, err := f.client.ListRuleRuns(f.ctx, heraldtype.RuleRunFilter{Rule: rule})
		if err != nil {
			t.Fatal(err)
		}
		return page.Runs
	}
	stop := f.consumer(f.client, kafkaapi.Config{Group: "render"})
	// One key, one partition: the second record applied means the first
	// was settled.
	f.produce("events.v1", "product:42", event("ev-1", "PRICE_CHANGE", user(0)), event("ev-2", "HELLO", user(1)))
	f.waitFor("the record after the broken one", time.Minute, func() bool { return len(runs("hello")) == 1 })
	if rs := runs("price-drop"); len(rs) != 1 || rs[0].State != heraldtype.RunFailed ||
		!strings.HasPrefix(rs[0].LastError, "render_failed: notify.title: ") {
		t.Fatalf("the broken rule's runs: %+v", rs)
	}
	dead, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{})
	if err != nil || len(dead.DeadEvents) != 1 {
		t.Fatalf("dead events: %+v %v; want the broken rule's event", dead, err)
	}
	d := dead.DeadEvents[0]
	if d.Kind != herald.RecordRenderFailed || d.Topic != "events.v1" ||
		!strings.HasPrefix(d.Error, `render_failed: rule "price-drop": notify.title: `) || !overBudget.MatchString(d.Error) {
		t.Fatalf("the dead event: %+v", d)
	}
	var kept herald.Event
	if err := json.Unmarshal(d.Payload, &kept); err != nil || kept.ID != "ev-1" || kept.Data["price"] != "8500" {
		t.Fatalf("the dead event's payload %s: %v", d.Payload, err)
	}

	// The offset was committed: a consumer of the same group started
	// afterwards applies only what comes after.
	stop()
	tc := &trackCounter{Client: f.client, calls: map[string]int{}}
	f.consumer(tc, kafkaapi.Config{Group: "render"})
	f.produce("events.v1", "product:42", event("ev-3", "HELLO", user(1)))
	f.waitFor("the record produced after the restart", time.Minute, func() bool { return len(runs("hello")) == 2 })
	if n := tc.count("ev-1"); n != 0 {
		t.Fatalf("ev-1 tracked %d times after the restart: its offset was not committed", n)
	}

	// Still broken: the replay fails with the render's error, and the
	// dead event stays.
	if err := f.client.ReplayDeadEvent(f.ctx, d.ID); err == nil ||
		!strings.Contains(err.Error(), `render_failed: rule "price-drop": notify.title: `) || !overBudget.MatchString(err.Error()) {
		t.Fatalf("replay of a still broken rule: %v", err)
	}
	if got, _ := f.client.GetDeadEvent(f.ctx, d.ID); got.ReplayedAt != nil || !overBudget.MatchString(got.ReplayError) {
		t.Fatalf("after a failed replay: %+v", got)
	}

	// Fixed: the replay sends the run, once.
	putRule("price-drop", "PRICE_CHANGE", `Now {{.price}}`)
	if err := f.client.ReplayDeadEvent(f.ctx, d.ID); err != nil {
		t.Fatalf("replay of the fixed rule: %v", err)
	}
	f.waitFor("the retried run done", time.Minute, func() bool {
		rs := runs("price-drop")
		return len(rs) == 1 && rs[0].State == heraldtype.RunDone
	})
	history := func() []herald.HistoryEntry {
		page, err := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: user(0), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return page.Notifications
	}
	if h := history(); len(h) != 1 || h[0].Title != "Now 8500" {
		t.Fatalf("user(0)'s notifications after the replay: %+v", h)
	}
	if got, _ := f.client.GetDeadEvent(f.ctx, d.ID); got.ReplayedAt == nil || got.ReplayError != "" {
		t.Fatalf("after the replay: %+v", got)
	}

	// Again: the run is no longer failed; nothing is sent and the
	// replay says so.
	if err := f.client.ReplayDeadEvent(f.ctx, d.ID); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT ||
		!strings.Contains(err.Error(), "replayed before") {
		t.Fatalf("second replay: %v, want a conflict", err)
	}
	if rs := runs("price-drop"); len(rs) != 1 || rs[0].State != heraldtype.RunDone {
		t.Fatalf("the run after a second replay: %+v", rs)
	}
	if h := history(); len(h) != 1 {
		t.Fatalf("user(0) has %d notifications after a second replay, want 1", len(h))
	}
}
