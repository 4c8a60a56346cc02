package herald

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/fanout"
)

// dealsRule sends a deal to the audience a.
func dealsRule(a heraldtype.RuleAudience) Rule {
	return Rule{Name: "deals", When: heraldtype.RuleWhen{Event: "DEAL"}, Audience: a,
		Notify: heraldtype.RuleNotify{Type: "back_in_stock", Title: "{{.title}}"}}
}

func deal(id, subject string) Event {
	return Event{ID: id, Name: "DEAL", Subject: subject, Data: map[string]string{"title": "Kettles 20% off"}}
}

// Issue 20 item 3: a topic audience reaches exactly the topic's
// subscribers (an interest in "topic:deals"), whatever the event is
// about — not the users interested in the event's subject, not another
// topic's subscribers, not a kind the rule does not name.
func TestAudienceTopicReachesExactlyTheSubscribers(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("SUBSCRIBE", "topic:deals", "s1", "s2", "s3", "s4")
	p.interested("SUBSCRIBE", "topic:news", "n1")
	p.interested("VIEW", "topic:deals", "viewer")
	p.interested("VIEW", "product:42", "v1")
	r := dealsRule(heraldtype.RuleAudience{Topic: &heraldtype.TopicAudience{Name: "deals", Kinds: []string{"SUBSCRIBE"}}})
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	dry, err := p.client.DryRunRule(p.ctx, "deals", deal("", ""))
	if err != nil || dry.AudienceSize != 4 || !slices.Equal(dry.Sample, []string{"s1", "s2", "s3", "s4"}) {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := p.client.Track(p.ctx, deal("d-1", "product:42")); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, []string{"s1", "s2", "s3", "s4"}) {
		t.Fatalf("notified %v", got)
	}
	// An event about no subject reaches them too (the 1 h de-duplication
	// is per subject, so a second deal is its own notification).
	if _, err := p.client.Track(p.ctx, deal("d-2", "")); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "deals"})
	if err != nil || len(runs.Runs) != 2 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	for _, run := range runs.Runs {
		if run.State != heraldtype.RunDone || run.Recipients != 4 || run.Job.Audience.Subject != "topic:deals" {
			t.Fatalf("run: %+v", run)
		}
	}
}

// newAudiencePipeline is newRulePipeline with more configuration.
func newAudiencePipeline(t *testing.T, mod func(*Config)) *pipeline {
	t.Helper()
	return newPolicyPipeline(t, func(c *Config) {
		c.Types["back_in_stock"] = TypeConfig{}
		c.Rules = RuleConfig{Pause: -1, BatchSize: 3}
		c.Callout.Allow = loopbackNets // the tests' webhooks (issue 31 item 2)
		mod(c)
	})
}

// page is the page of ids after after, at most limit, of the sorted ids.
func page(ids []string, after string, limit int) []string {
	i, _ := slices.BinarySearch(ids, after)
	if i < len(ids) && ids[i] == after {
		i++
	}
	return slices.Clone(ids[i:min(i+limit, len(ids))])
}

func users(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%02d", prefix, i))
	}
	return out
}

// Issue 20 item 3: a Go audience source registered on the Config is paged
// in order, batch after batch, with the rule and the event; a cut between
// two batches resumes at the run's cursor; an id it names that is not a
// user is left out.
func TestAudienceSourcePagesInOrderAndResumes(t *testing.T) {
	segment := append(users("u", 10), "u05-ghost")
	slices.Sort(segment)
	var mu sync.Mutex
	var asked []AudienceQuery
	crm := AudienceSourceFunc(func(_ context.Context, q AudienceQuery) ([]string, error) {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return page(segment, q.After, q.Limit), nil
	})
	p := newAudiencePipeline(t, func(c *Config) { c.AudienceSources = map[string]AudienceSource{"crm-segment": crm} })
	for _, u := range users("u", 10) {
		p.user(u, "Asia/Seoul", "tok-"+u)
	}
	if _, _, err := p.client.PutRule(p.ctx, dealsRule(heraldtype.RuleAudience{Source: "nope"})); heraldtype.ErrorCode(err) != heraldtype.EINVALID ||
		!strings.Contains(err.Error(), "audience.source") {
		t.Fatalf("an unknown source: %v", err)
	}
	if _, _, err := p.client.PutRule(p.ctx, dealsRule(heraldtype.RuleAudience{Source: "crm-segment"})); err != nil {
		t.Fatal(err)
	}
	if dry, err := p.client.DryRunRule(p.ctx, "deals", deal("", "")); err != nil || dry.AudienceSize != 11 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	asked = nil
	if _, err := p.client.Track(p.ctx, deal("d-1", "product:42")); err != nil {
		t.Fatal(err)
	}
	runs, err := p.store.RunningRuleRuns(p.ctx, 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("running: %+v %v", runs, err)
	}
	// A runner stopped after its first batch: the run stays at its cursor.
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	one, err := fanout.New(fanout.Config{Store: cancelAfterBatch{p.store, cancel}, Build: p.client.buildRuleBatch,
		Audiences: p.client.audiences, BatchSize: 3, Pause: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Execute(ctx, runs[0]); err == nil {
		t.Fatal("the stopped runner finished the run")
	}
	if got := p.notified("back_in_stock"); !slices.Equal(got, users("u", 3)) {
		t.Fatalf("after one batch: %v", got)
	}
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, users("u", 10)) {
		t.Fatalf("after resuming: %v", got)
	}
	var afters []string
	for _, q := range asked {
		afters = append(afters, q.After)
		if q.Rule != "deals" || q.EventID != "d-1" || q.Event != "DEAL" || q.Subject != "product:42" ||
			q.Data["title"] != "Kettles 20% off" || q.Limit != 3 {
			t.Fatalf("query: %+v", q)
		}
	}
	if want := []string{"", "u02", "u05", "u07", "u09"}; !slices.Equal(afters, want) {
		t.Fatalf("pages after %q, want %q", afters, want)
	}
	rs, _ := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "deals"})
	if r := rs.Runs[0]; r.State != heraldtype.RunDone || r.Recipients != 11 || r.Enqueued != 10 || !strings.Contains(r.LastError, "u05-ghost") {
		t.Fatalf("run: %+v", r)
	}
}

// audienceWebhook is an operator's audience endpoint over ids; it fails
// with a 500 while failing is set and it is asked for a page after the
// first.
type audienceWebhook struct {
	ids     []string
	failing atomic.Bool
	mu      sync.Mutex
	asked   []AudienceQuery
}

func (h *audienceWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var q AudienceQuery
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&q) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.asked = append(h.asked, q)
	h.mu.Unlock()
	if h.failing.Load() && q.After != "" {
		http.Error(w, "segment service down", http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string][]string{"users": page(h.ids, q.After, q.Limit)})
}

// Issue 20 item 3: an HTTP audience webhook is called per batch with the
// rule, the event and the cursor, and its users are reached across pages;
// while it fails the run stays running at its cursor, says why once it
// keeps failing, and resumes when it answers again — reaching no one twice.
func TestAudienceWebhookPagesFailsAndResumes(t *testing.T) {
	hook := &audienceWebhook{ids: users("w", 7)}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	p := newAudiencePipeline(t, func(c *Config) { c.Rules.AudienceRetry = time.Hour })
	for _, u := range hook.ids {
		p.user(u, "Asia/Seoul", "tok-"+u)
	}
	r := dealsRule(heraldtype.RuleAudience{Webhook: &heraldtype.WebhookAudience{URL: srv.URL + "/audience", Timeout: heraldtype.Duration(2 * time.Second)}})
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	if dry, err := p.client.DryRunRule(p.ctx, "deals", deal("", "")); err != nil || dry.AudienceSize != 7 || dry.Sample[6] != "w06" {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	hook.failing.Store(true)
	if dry, err := p.client.DryRunRule(p.ctx, "deals", deal("", "")); err != nil || !strings.Contains(dry.Error, "status 500") {
		t.Fatalf("dry run of a failing webhook: %+v %v", dry, err)
	}
	if _, err := p.client.Track(p.ctx, deal("d-1", "product:42")); err != nil {
		t.Fatal(err)
	}
	run := func() heraldtype.RuleRun {
		t.Helper()
		rs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "deals"})
		if err != nil || len(rs.Runs) != 1 {
			t.Fatalf("runs: %+v %v", rs, err)
		}
		return rs.Runs[0]
	}
	for try := 1; try <= 3; try++ {
		if err := p.client.ruleRunner.Tick(p.ctx); err == nil || !strings.Contains(err.Error(), "status 500") {
			t.Fatalf("try %d: %v", try, err)
		}
		r := run()
		if r.State != heraldtype.RunRunning || r.Cursor != "w02" || (r.LastError != "") != (try == 3) {
			t.Fatalf("after try %d: %+v", try, r)
		}
	}
	if !strings.Contains(run().LastError, "audience webhook") {
		t.Fatalf("last error: %q", run().LastError)
	}
	hook.failing.Store(false)
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, hook.ids) {
		t.Fatalf("notified %v", got)
	}
	if r := run(); r.State != heraldtype.RunDone || r.Recipients != 7 {
		t.Fatalf("run: %+v", r)
	}
	for _, q := range hook.asked {
		if q.Rule != "deals" || q.Data["title"] != "Kettles 20% off" || q.Limit < 1 {
			t.Fatalf("query: %+v", q)
		}
	}
}

// Issue 20 item 3: what of an audience depends on the Client is refused
// on save naming its field; a bad configuration fails NewClient.
func TestAudienceValidation(t *testing.T) {
	p := newAudiencePipeline(t, func(c *Config) { c.Rules.WebhookMaxTimeout = 10 * time.Second })
	for field, a := range map[string]heraldtype.RuleAudience{
		"audience.source":          {Source: "crm-segment"},
		"audience.webhook.url":     {Webhook: &heraldtype.WebhookAudience{URL: "ftp://crm.example/"}},
		"audience.webhook.timeout": {Webhook: &heraldtype.WebhookAudience{URL: "https://crm.example/", Timeout: heraldtype.Duration(time.Minute)}},
		"audience.topic.name":      {Topic: &heraldtype.TopicAudience{}},
		"audience":                 {Source: "crm-segment", Topic: &heraldtype.TopicAudience{Name: "deals"}},
	} {
		_, _, err := p.client.PutRule(p.ctx, dealsRule(a))
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	for name, mod := range map[string]func(*Config){
		"source name": func(c *Config) { c.AudienceSources = map[string]AudienceSource{"a b": AudienceSourceFunc(nil)} },
		"nil source":  func(c *Config) { c.AudienceSources = map[string]AudienceSource{"crm": nil} },
		"timeouts":    func(c *Config) { c.Rules.WebhookTimeout, c.Rules.WebhookMaxTimeout = time.Minute, time.Second },
		"answer":      func(c *Config) { c.Rules.WebhookMaxAnswer = 1 << 40 },
	} {
		cfg := Config{Store: p.store}
		mod(&cfg)
		if _, err := NewClient(cfg); err == nil {
			t.Errorf("%s: NewClient accepted it", name)
		}
	}
}
