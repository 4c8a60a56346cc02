package herald

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// cancelAfterBatch stops its runner (cancels its context) once one batch
// was written: a crash between two batches.
type cancelAfterBatch struct {
	*sqlite.Store
	cancel func()
}

func (c cancelAfterBatch) AdvanceRuleRun(ctx context.Context, b store.RuleBatch) (store.RuleBatchResult, error) {
	res, err := c.Store.AdvanceRuleRun(ctx, b)
	c.cancel()
	return res, err
}

func newRulePipeline(t *testing.T) *pipeline {
	t.Helper()
	return newPolicyPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
		c.Types["back_in_stock"] = TypeConfig{}
		c.Rules = RuleConfig{Pause: -1, BatchSize: 3}
	})
}

// fanOut works every running rule run to its end.
func (p *pipeline) fanOut() {
	p.t.Helper()
	if err := p.client.ruleRunner.Tick(p.ctx); err != nil {
		p.t.Fatalf("rule runner: %v", err)
	}
}

// notified returns the users with a notification of type typ, sorted, and
// fails on a user with two.
func (p *pipeline) notified(typ string) []string {
	p.t.Helper()
	var users []string
	for _, n := range p.history(HistoryFilter{Type: typ, Limit: 200}) {
		users = append(users, n.UserID)
	}
	slices.Sort(users)
	if c := slices.Compact(slices.Clone(users)); len(c) != len(users) {
		p.t.Fatalf("a user was notified twice: %v", users)
	}
	return users
}

func priceChange(id string, prev, cur int) Event {
	return Event{ID: id, Name: "PRICE_CHANGE", Subject: "product:42", Topic: "product.inventory.v1",
		Data: map[string]string{"product_name": "Kettle", "previous_price": fmt.Sprint(prev), "current_price": fmt.Sprint(cur)}}
}

// interested registers users with devices and their interests in
// subjects, shown an hour ago.
func (p *pipeline) interested(kind, subject string, users ...string) {
	p.t.Helper()
	at := p.clock.Now().Add(-time.Hour)
	var in []InterestInput
	for _, u := range users {
		p.user(u, "Asia/Seoul", "tok-"+u)
		in = append(in, InterestInput{UserID: u, Subject: subject, Kind: kind, At: &at})
	}
	if _, err := p.client.RecordInterests(p.ctx, in); err != nil {
		p.t.Fatal(err)
	}
}

// Issue 20 items 1–4, S3.13 "targeting 100 % correct": a price drop
// reaches exactly the users with a matching interest in the product, in
// batches, once; the timeline names the rule and the event; a
// redelivered event does nothing again.
func TestPriceDropReachesExactlyTheInterestedOnce(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1", "u2", "u3", "u4", "u5", "u6", "u7")
	p.interested("ADD_TO_CART", "product:42", "u8")
	p.interested("VIEW", "product:43", "v1")     // another product
	p.interested("PURCHASE", "product:42", "v2") // a kind the rule does not name
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	// An HTTP event does not feed a Kafka-sourced rule.
	http := priceChange("ev-0", 10000, 8500)
	http.Topic = ""
	if out, err := p.client.Track(p.ctx, http); err != nil || len(out.Rules) != 0 {
		t.Fatalf("http event: %+v %v", out, err)
	}
	out, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rules) != 1 || !out.Rules[0].Detected || out.Rules[0].Run != "product.inventory.v1/ev-1" || out.Replayed {
		t.Fatalf("Track: %+v", out)
	}
	p.fanOut()
	want := []string{"u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}
	if got := p.notified("price_drop"); !slices.Equal(got, want) {
		t.Fatalf("notified %v, want %v", got, want)
	}
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if err != nil || len(runs.Runs) != 1 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if r := runs.Runs[0]; r.State != heraldtype.RunDone || r.Recipients != 8 || r.Enqueued != 8 ||
		r.Job.Notification.Title != "Kettle is 15% off" || r.Job.Notification.DedupeKey != "product:42" {
		t.Fatalf("run: %+v", r)
	}
	// The timeline names the rule and the event (S3.12).
	n := p.history(HistoryFilter{UserID: "u1", Type: "price_drop"})[0]
	st := p.status(n.NotificationID)
	if src := st.Notification.Source; src == nil || src.Kind != heraldtype.SourceRule || src.Name != "price-drop" ||
		src.ID != "ev-1" || src.Event != "PRICE_CHANGE" {
		t.Fatalf("source: %+v", st.Notification.Source)
	}
	// The same event again (a Kafka redelivery): answered from its
	// record, nothing new.
	again, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500))
	if err != nil || !again.Replayed || len(again.Rules) != 1 || again.Rules[0].Run != out.Rules[0].Run {
		t.Fatalf("replay: %+v %v", again, err)
	}
	p.fanOut()
	if got := p.notified("price_drop"); len(got) != 8 {
		t.Fatalf("after the replay: %v", got)
	}
	// Sent: every one of them, through the pipeline.
	if sent := p.work(); sent != 8 {
		t.Fatalf("worked %d deliveries, want 8", sent)
	}
	// S3.8, S3.13: the same drop again (a new event) within the hour: a
	// new run, and the pipeline records each push as a duplicate
	// (rate_limited; the inbox keeps the item).
	p.clock.Advance(10 * time.Minute)
	if _, err := p.client.Track(p.ctx, priceChange("ev-2", 8500, 7000)); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	p.work()
	dups := 0
	for _, h := range p.history(HistoryFilter{UserID: "u1", Type: "price_drop"}) {
		if h.ChannelStatus[heraldtype.ChannelPush] == heraldtype.HistoryRateLimited {
			dups++
		}
	}
	if dups != 1 {
		t.Fatalf("u1's second price drop within the hour: %d skipped, want 1: %+v", dups, p.history(HistoryFilter{UserID: "u1"}))
	}
}

// Issue 20 item 1: an event whose version is not newer than the last one
// applied for its subject is dropped as stale.
func TestStaleEventIsDropped(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	newer := priceChange("ev-2", 10000, 8000)
	newer.Version = 200
	if out, err := p.client.Track(p.ctx, newer); err != nil || out.Stale || !out.Rules[0].Detected {
		t.Fatalf("v200: %+v %v", out, err)
	}
	older := priceChange("ev-1", 12000, 9000)
	older.Version = 100
	out, err := p.client.Track(p.ctx, older)
	if err != nil || !out.Stale || len(out.Rules) != 0 {
		t.Fatalf("v100 after v200: %+v %v", out, err)
	}
	same := priceChange("ev-3", 12000, 9000)
	same.Version = 200
	if out, _ := p.client.Track(p.ctx, same); !out.Stale {
		t.Fatalf("v200 again: %+v", out)
	}
	p.fanOut()
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1"}) {
		t.Fatalf("notified %v", got)
	}
}

// Issue 20 item 2: restock (0 → ≥ 1) with hysteresis, to the cart users
// (S3.3); a flapping 0/1 stock does not notify again within rearm_after.
func TestRestockWithHysteresisReachesCartUsers(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("ADD_TO_CART", "product:9", "c1", "c2")
	p.interested("VIEW", "product:9", "viewer")
	r := Rule{Name: "restock", When: heraldtype.RuleWhen{Event: "STOCK_CHANGE",
		Detect: heraldtype.Detector{Restock: &heraldtype.RestockDetector{RearmAfter: heraldtype.Duration(time.Hour)}}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"ADD_TO_CART"}}},
		Notify:   heraldtype.RuleNotify{Type: "back_in_stock", Title: "{{.name}} is back ({{.current_stock}} left)"}}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	stock := func(id string, prev, cur int) TrackResult {
		t.Helper()
		out, err := p.client.Track(p.ctx, Event{ID: id, Name: "STOCK_CHANGE", Subject: "product:9",
			Data: map[string]string{"name": "Lamp", "previous_stock": fmt.Sprint(prev), "current_stock": fmt.Sprint(cur)}})
		if err != nil {
			t.Fatal(err)
		}
		p.clock.Advance(time.Minute)
		return out
	}
	if out := stock("s1", 0, 3); !out.Rules[0].Detected {
		t.Fatalf("restock: %+v", out)
	}
	stock("s2", 3, 0)
	if out := stock("s3", 0, 1); out.Rules[0].Detected || !strings.Contains(out.Rules[0].Reason, "hysteresis") {
		t.Fatalf("flap within the hour: %+v", out)
	}
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, []string{"c1", "c2"}) {
		t.Fatalf("notified %v", got)
	}
	// Out of stock for over an hour: armed again.
	stock("s4", 1, 0)
	p.clock.Advance(2 * time.Hour)
	if out := stock("s5", 0, 5); !out.Rules[0].Detected {
		t.Fatalf("after the rearm time: %+v", out)
	}
}

// Issue 20 item 2: a field a template needs that the event lacks is an
// error on the rule's runs (never "<no value>" in a push), and the
// event's answer says it.
func TestMissingTemplateFieldFailsTheRunVisibly(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	ev := priceChange("ev-1", 10000, 5000)
	delete(ev.Data, "product_name")
	out, err := p.client.Track(p.ctx, ev)
	if err != nil || !strings.Contains(out.Rules[0].Error, "product_name") {
		t.Fatalf("Track: %+v %v", out, err)
	}
	p.fanOut()
	if got := p.notified("price_drop"); len(got) != 0 {
		t.Fatalf("notified %v", got)
	}
	runs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if len(runs.Runs) != 1 || runs.Runs[0].State != heraldtype.RunFailed || !strings.Contains(runs.Runs[0].LastError, "product_name") {
		t.Fatalf("runs: %+v", runs)
	}
}

// Issue 20 item 4: a fan-out stopped mid-way resumes at its cursor and
// reaches no one twice; a rule deleted mid-run stops its runs.
func TestFanOutResumesAndStopsWithItsRule(t *testing.T) {
	p := newRulePipeline(t)
	var users []string
	for i := range 10 {
		users = append(users, fmt.Sprintf("u%02d", i))
	}
	p.interested("VIEW", "product:42", users...)
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8000)); err != nil {
		t.Fatal(err)
	}
	// The runner is stopped after its first batch (3 users): the run stays
	// running at its cursor.
	runs, err := p.store.RunningRuleRuns(p.ctx, 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("running: %+v %v", runs, err)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	one, err := fanout.New(fanout.Config{Store: cancelAfterBatch{p.store, cancel}, Build: p.client.buildRuleBatch,
		BatchSize: 3, Pause: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Execute(ctx, runs[0]); err == nil {
		t.Fatal("the stopped runner finished the run")
	}
	if got := p.notified("price_drop"); !slices.Equal(got, users[:3]) {
		t.Fatalf("after one batch: %v", got)
	}
	p.fanOut() // the next pick-up resumes it
	if got := p.notified("price_drop"); !slices.Equal(got, users) {
		t.Fatalf("after resuming: %v", got)
	}
	// A second event; the rule is deleted before its run: it stops.
	if _, err := p.client.Track(p.ctx, priceChange("ev-2", 8000, 6000)); err != nil {
		t.Fatal(err)
	}
	if err := p.client.DeleteRule(p.ctx, "price-drop"); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	if got := p.notified("price_drop"); len(got) != 10 {
		t.Fatalf("after the deleted rule's run: %v", got)
	}
	if runs, _ := p.store.RunningRuleRuns(p.ctx, 10); len(runs) != 0 {
		t.Fatalf("still running: %+v", runs)
	}
}

// Issue 20 item 3: an explicit audience list with a user that does not
// exist reaches the others and says who was left out.
func TestListAudienceSkipsUnknownUsers(t *testing.T) {
	p := newRulePipeline(t)
	p.user("a", "Asia/Seoul", "tok-a")
	p.user("c", "Asia/Seoul", "tok-c")
	r := Rule{Name: "ops", When: heraldtype.RuleWhen{Event: "deploy_failed"},
		Audience: heraldtype.RuleAudience{UserIDs: []string{"a", "b", "c"}},
		Notify:   heraldtype.RuleNotify{Type: "back_in_stock", Title: "{{.service}} failed"}}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, Event{Name: "deploy_failed", Data: map[string]string{"service": "api"}}); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("notified %v", got)
	}
	runs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "ops"})
	if r := runs.Runs[0]; r.State != heraldtype.RunDone || !strings.Contains(r.LastError, `"b"`) {
		t.Fatalf("run: %+v", r)
	}
}

// S3.13 exit criterion through the rule engine: the 11th rule-driven
// notification of a user's local day is blocked by the daily cap, as any
// notification's is — the fan-out goes through the same pipeline.
func TestRuleNotificationsMeetTheDailyCap(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"deal": {CountsTowardCap: &capped, Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}
		c.Rules = RuleConfig{Pause: -1}
	})
	p.user("u1", "Asia/Seoul", "tok-u1")
	p.setClock(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)) // 10:00 in Seoul
	r := Rule{Name: "deals", When: heraldtype.RuleWhen{Event: "deal_published"},
		Audience: heraldtype.RuleAudience{EventUser: true},
		Notify:   heraldtype.RuleNotify{Type: "deal", Title: "Deal {{.n}}"}}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	for i := range 11 {
		// Each deal about its own product: no two share a dedupe key.
		if _, err := p.client.Track(p.ctx, Event{ID: fmt.Sprint("d", i), Name: "deal_published", UserID: "u1",
			Subject: fmt.Sprint("product:", i), Data: map[string]string{"n": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
		p.fanOut()
		p.work()
		p.clock.Advance(time.Minute)
	}
	if n := len(p.em.MessagesTo("tok-u1")); n != 10 {
		t.Fatalf("the phone got %d, want 10", n)
	}
	h := p.history(HistoryFilter{UserID: "u1", Status: heraldtype.HistoryRateLimited})
	if len(h) != 1 || h[0].Title != "Deal 10" || h[0].Reason != "daily_cap" {
		t.Fatalf("rate limited: %+v", h)
	}
}

// rules.default_audience and rules.max_audience: a rule naming no limit
// gets the default; one naming more than the most is refused, naming
// audience.limit; a rule saved before the most was lowered is held to it.
func TestRuleAudienceLimitsAreConfigured(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{}
		c.Rules = RuleConfig{Pause: -1, DefaultAudience: 2, MaxAudience: 5}
	})
	r := priceDropRule()
	r.Audience.Limit = 0
	got, _, err := p.client.PutRule(p.ctx, r)
	if err != nil || got.Audience.Limit != 2 {
		t.Fatalf("default: %+v %v", got.Audience, err)
	}
	r.Audience.Limit = 6
	if _, _, err := p.client.PutRule(p.ctx, r); heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "audience.limit") {
		t.Fatalf("over the most: %v", err)
	}
	// The most lowered to 1 after the rule was saved with 2.
	p.interested("VIEW", "product:42", "u1", "u2", "u3")
	lower, err := NewClient(Config{Store: p.store, Types: map[string]TypeConfig{"price_drop": {}}, Rules: RuleConfig{MaxAudience: 1},
		DisableWorkers: true, Now: p.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := lower.DryRunRule(p.ctx, r.Name, priceChange("ev-1", 10000, 8000))
	if err != nil || dry.AudienceSize != 1 || !dry.AudienceCapped {
		t.Fatalf("held to the lowered most: %+v %v", dry, err)
	}
	for _, bad := range []RuleConfig{{DefaultAudience: 6, MaxAudience: 5}, {MaxAudience: 2_000_000}, {MaxAudience: -1}} {
		if _, err := NewClient(Config{Store: p.store, Rules: bad}); err == nil {
			t.Errorf("NewClient accepted %+v", bad)
		}
	}
}

// Issue 20 item 5: a dead-lettered event of a Kafka topic, replayed,
// goes to the rules of that topic — the replay knows where it came from —
// and a second replay of it does nothing again (its record answers).
func TestReplayedDeadEventReachesItsTopicsRules(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	ev := priceChange("ev-dead", 10000, 8000)
	ev.Topic = ""
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.client.RecordDeadEvent(p.ctx, heraldtype.DeadEvent{Topic: "product.inventory.v1", Partition: 0, Offset: 7,
		Kind: RecordEvents, Value: []byte("{}"), Payload: payload, Error: "the database was down", Attempts: 4})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.client.ReplayDeadEvent(p.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	p.fanOut()
	if got := p.notified("price_drop"); !slices.Equal(got, []string{"u1"}) {
		t.Fatalf("notified %v", got)
	}
	runs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "price-drop"})
	if len(runs.Runs) != 1 || runs.Runs[0].ID != "product.inventory.v1/ev-dead" {
		t.Fatalf("runs: %+v", runs.Runs)
	}
}

// Track applies a rule's latest version: the compiled rules it caches are
// keyed by the rule's last update.
func TestEditedRuleAppliesAtOnce(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	r := priceDropRule()
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8000)); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Second)
	r.Notify.Title = "{{.product_name}}: now {{.current_price}}"
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("ev-2", 8000, 6000)); err != nil {
		t.Fatal(err)
	}
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: r.Name})
	if err != nil || len(runs.Runs) != 2 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if got := runs.Runs[0].Job.Notification.Title; got != "Kettle: now 6000" {
		t.Fatalf("the edited rule's title: %q", got)
	}
	if got := runs.Runs[1].Job.Notification.Title; got != "Kettle is 20% off" {
		t.Fatalf("the first event's title: %q", got)
	}
}

// Issue 20 item 1: events of one subject applied at once are decided one
// after the other — the subject's guarded write makes the loser read again
// and decide on the winner's state — so none is lost and the detector's
// state sees every one: of 8 concurrent changes of a watched field, each
// is recorded and the subject's state ends with one of their values.
func TestConcurrentEventsOfOneSubjectAreEachApplied(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("VIEW", "product:42", "u1")
	r := Rule{Name: "any-change", When: heraldtype.RuleWhen{Event: "PRODUCT_UPDATE",
		Detect: heraldtype.Detector{Changed: []string{"label"}}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW"}}},
		Notify:   heraldtype.RuleNotify{Type: "price_drop", Title: "Now called {{.label}}"}}
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := p.client.Track(p.ctx, Event{ID: fmt.Sprint("u-", i), Name: "PRODUCT_UPDATE", Subject: "product:42",
				Data: map[string]string{"label": fmt.Sprint("label-", i)}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	subj, err := p.store.EventSubject(p.ctx, store.SourceHTTP, "product:42")
	if err != nil || subj.Seq != n {
		t.Fatalf("subject written %d times (%v), want %d", subj.Seq, err, n)
	}
	// The first applied saw no earlier name; each later one a change.
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: r.Name})
	if err != nil || len(runs.Runs) != n-1 {
		t.Fatalf("%d runs (%v), want %d", len(runs.Runs), err, n-1)
	}
}
