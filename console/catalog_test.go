package console_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// seedCatalog declares two types and writes a rule, a campaign and a
// reminder through the Client.
func seedCatalog(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"price_drop", "digest", "cart_reminder"} {
		if _, err := e.client.PutType(ctx, name, herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.client.PutUser(ctx, "u-1", herald.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.client.PutRule(ctx, herald.Rule{Name: "price-drop",
		When:     heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{PriceDropPct: 10}},
		Audience: heraldtype.RuleAudience{UserIDs: []string{"u-1"}},
		Notify:   heraldtype.RuleNotify{Type: "price_drop", Title: "{{.product_name}} is cheaper", Body: "Now {{.current_price}}"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = e.client.PutCampaign(ctx, herald.CampaignRequest{Name: "weekly", Type: "digest", Title: "Your week",
		Schedule: heraldtype.Schedule{Cron: "0 9 * * 1"}, Audience: heraldtype.Audience{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cart-1", "cart-2"} {
		_, _, err = e.client.PutReminder(ctx, herald.ReminderRequest{Key: key, UserID: "u-1", Type: "cart_reminder", Title: "Still thinking?",
			Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestTypesPages: the list and a type's form; a refused value is named
// beside its field; a save redirects back.
func TestTypesPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	seedCatalog(t, e)
	list := e.get("/console/types").expect(t, 200)
	wellFormed(t, list.body)
	list.has(t, `<table id="types">`, `data-type="price_drop"`)
	p := e.get("/console/types/digest").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `<form id="type-form" method="post"`, `id="type-save"`)
	ok := url.Values{"csrf": {p.csrf(t)}, "channels": {"push, email"}, "priority": {"HIGH"}, "dedupe_window": {"2h"}, "guarantee": {"at_least_once"}, "quiet_hours": {"1"}}
	if r := e.post("/console/types/digest", ok).expect(t, 303); r.header.Get("Location") != "/console/types/digest?saved=1" {
		t.Fatalf("after saving: %q", r.header.Get("Location"))
	}
	got, err := e.client.GetType(context.Background(), "digest")
	if err != nil || got.Priority != heraldtype.PriorityHigh || len(got.Channels) != 2 || got.DedupeWindow != "2h0m0s" {
		t.Fatalf("saved %+v, %v", got, err)
	}
	e.get("/console/types/digest?saved=1").expect(t, 200).has(t, `id="type-saved"`)
	bad := url.Values{"csrf": {p.csrf(t)}, "channels": {"push"}, "priority": {"HIGH"}, "dedupe_window": {"soon"}}
	r := e.post("/console/types/digest", bad).expect(t, 400)
	wellFormed(t, r.body)
	r.has(t, `<p class="field-error" id="error-dedupe_window">`, `value="soon"`)
	bad = url.Values{"csrf": {p.csrf(t)}, "channels": {"pigeon"}}
	e.post("/console/types/digest", bad).expect(t, 400).has(t, `id="error-channels"`)

	// A digest type (issue 36 item 1): shown, and kept when the form saves.
	p.has(t, `id="type-digest"`, `None: each trigger is sent as it comes.`)
	if _, err := e.client.PutType(context.Background(), "comment", herald.TypeConfig{Digest: &herald.DigestConfig{
		Window: "10m", Key: "{{.post_id}}", Title: "{{.Count}} new comments"}}); err != nil {
		t.Fatal(err)
	}
	cp := e.get("/console/types/comment").expect(t, 200)
	wellFormed(t, cp.body)
	cp.has(t, `id="type-digest"`, `within 10m0s`, `<code>{{.post_id}}</code>`)
	ok = url.Values{"csrf": {cp.csrf(t)}, "channels": {"push"}, "priority": {"LOW"}, "guarantee": {"at_least_once"}}
	e.post("/console/types/comment", ok).expect(t, 303)
	if got, err := e.client.GetType(context.Background(), "comment"); err != nil || got.Digest == nil || got.Digest.Key != "{{.post_id}}" ||
		got.Priority != heraldtype.PriorityLow {
		t.Fatalf("saved from the form: %+v, %v", got, err)
	}
}

// TestRulePages: the list with its filter and next page, the JSON edit
// naming the refused field, and a dry run against a pasted event.
func TestRulePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	seedCatalog(t, e)
	list := e.get("/console/rules?event=PRICE_CHANGE").expect(t, 200)
	wellFormed(t, list.body)
	list.has(t, `data-rule="price-drop"`)
	e.get("/console/rules?event=OTHER").expect(t, 200).lacks(t, `data-rule="price-drop"`)
	p := e.get("/console/rules/price-drop").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `<form id="rule-form" method="post"`, `<form id="dry-run-form" method="post"`, `PRICE_CHANGE`, `id="rule-save"`, `<table id="rule-runs">`).lacks(t, `id="dry-run-result"`)

	dry := e.post("/console/rules/price-drop/dry-run", url.Values{"csrf": {p.csrf(t)},
		"event": {`{"name": "PRICE_CHANGE", "subject": "product:42", "data": {"product_name": "Lamp", "current_price": "9", "price": "9", "previous_price": "20"}}`}}).expect(t, 200)
	wellFormed(t, dry.body)
	dry.has(t, `id="dry-run-result"`, `data-matches="true"`)
	e.post("/console/rules/price-drop/dry-run", url.Values{"csrf": {p.csrf(t)}, "event": {`{"name": `}}).expect(t, 400).
		has(t, `id="dry-run-result"`, `<p class="field-error" id="error-event">`)

	doc := `{"when": {"event": "PRICE_CHANGE"}, "audience": {"user_ids": ["u-1"]}, "notify": {"type": "price_drop", "title": "Cheaper now"}, "disabled": true}`
	if r := e.post("/console/rules/price-drop", url.Values{"csrf": {p.csrf(t)}, "rule": {doc}}).expect(t, 303); r.header.Get("Location") != "/console/rules/price-drop?saved=1" {
		t.Fatalf("after saving: %q", r.header.Get("Location"))
	}
	if got, err := e.client.GetRule(context.Background(), "price-drop"); err != nil || !got.Disabled || got.Notify.Title != "Cheaper now" {
		t.Fatalf("saved %+v, %v", got, err)
	}
	bad := `{"when": {"event": "PRICE_CHANGE"}, "audience": {"user_ids": ["u-1"]}, "notify": {"type": "undeclared"}}`
	r := e.post("/console/rules/price-drop", url.Values{"csrf": {p.csrf(t)}, "rule": {bad}}).expect(t, 400)
	wellFormed(t, r.body)
	r.has(t, `<p class="field-error" id="error-notify.type">`, `undeclared`)
	e.post("/console/rules/price-drop", url.Values{"csrf": {p.csrf(t)}, "rule": {`{"whenn": 1}`}}).expect(t, 400).has(t, `id="error-rule"`)
	// A new rule: the list's name field opens an empty one to write.
	if r := e.get("/console/rules?name=fresh").expect(t, 303); r.header.Get("Location") != "/console/rules/fresh?new=1" {
		t.Fatalf("new rule went to %q", r.header.Get("Location"))
	}
	e.get("/console/rules/fresh?new=1").expect(t, 200).has(t, `id="rule-form"`).lacks(t, `id="dry-run-form"`)
	e.get("/console/rules/fresh").expect(t, 404)
}

// TestRemindersPage: filters in the query string, cancel one and cancel
// by filter.
func TestRemindersPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	seedCatalog(t, e)
	p := e.get("/console/reminders?user=u-1&state=active").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-reminder-key="cart-1"`, `data-reminder-key="cart-2"`, `id="cancel-reminders"`, `class="cancel-reminder"`)
	e.get("/console/reminders?state=sleeping").expect(t, 400).has(t, `id="form-error"`)
	one := e.get("/console/reminders/cart-1").expect(t, 200)
	wellFormed(t, one.body)
	one.has(t, `data-state="active"`, `id="reminder-doc"`, `backoff`, `id="cancel-reminder"`, `id="reminder-save"`)
	e.get("/console/reminders/nope").expect(t, 404)
	// Edited as the API's PUT takes it: a refused field is named beside
	// the document, which keeps what was typed; a saved one restarts its
	// schedule (issue 34 item 2).
	bad := e.post("/console/reminders/cart-1", url.Values{"csrf": {p.csrf(t)},
		"reminder": {`{"user_id": "u-1", "type": "cart_reminder", "title": "Hi", "schedule": {"cron": "61 9 * * *"}}`}}).expect(t, 400)
	wellFormed(t, bad.body)
	bad.has(t, `id="error-schedule.cron"`, `aria-invalid="true"`, `61 9 * * *`)
	e.post("/console/reminders/cart-1", url.Values{"csrf": {p.csrf(t)}, "reminder": {`{"user_id": "u-1", "nope": 1}`}}).
		expect(t, 400).has(t, `id="error-reminder"`)
	saved := e.post("/console/reminders/cart-1", url.Values{"csrf": {p.csrf(t)},
		"reminder": {`{"user_id": "u-1", "type": "cart_reminder", "title": "Your cart misses you", "schedule": {"cron": "0 9 * * *"}}`}}).expect(t, 303)
	if loc := saved.header.Get("Location"); loc != "/console/reminders/cart-1?saved=1" {
		t.Fatalf("after saving: %q", loc)
	}
	e.get("/console/reminders/cart-1?saved=1").expect(t, 200).has(t, `id="reminder-saved"`, `Your cart misses you`, `0 9 * * *`)
	if rm, err := e.client.GetReminder(context.Background(), "cart-1"); err != nil || rm.Title != "Your cart misses you" || rm.Schedule.Cron != "0 9 * * *" {
		t.Fatalf("the saved reminder: %+v, %v", rm, err)
	}
	r := e.post("/console/reminders/cart-1/cancel", url.Values{"csrf": {p.csrf(t)}, "back": {"/console/reminders?user=u-1&state=active"}}).expect(t, 303)
	if loc := r.header.Get("Location"); loc != "/console/reminders?user=u-1&state=active&cancelled=1" {
		t.Fatalf("after cancelling: %q", loc)
	}
	after := e.get("/console/reminders?user=u-1&state=active&cancelled=1").expect(t, 200)
	after.has(t, `id="reminders-cancelled"`, `data-reminder-key="cart-2"`).lacks(t, `data-reminder-key="cart-1"`)
	// An off-site back link is not followed.
	r = e.post("/console/reminders/cancel", url.Values{"csrf": {p.csrf(t)}, "user": {"u-1"}, "back": {"//evil.example/"}}).expect(t, 303)
	if loc := r.header.Get("Location"); loc != "/console/reminders?&cancelled=1" {
		t.Fatalf("after the bulk cancel: %q", loc)
	}
	e.get("/console/reminders?user=u-1&state=active").expect(t, 200).lacks(t, `data-reminder-key="cart-2"`)
	e.post("/console/reminders/cancel", url.Values{"csrf": {p.csrf(t)}}).expect(t, 400)
	// A cancelled reminder saved again is active again, as the page says.
	e.post("/console/reminders/cart-1", url.Values{"csrf": {p.csrf(t)},
		"reminder": {`{"user_id": "u-1", "type": "cart_reminder", "title": "Back", "schedule": {"cron": "0 9 * * *"}}`}}).expect(t, 303)
	e.get("/console/reminders/cart-1").expect(t, 200).has(t, `data-state="active"`)
}

// TestCampaignPages: the list, a campaign with its runs, a manual run
// and an edit naming the refused field.
func TestCampaignPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	seedCatalog(t, e)
	list := e.get("/console/campaigns").expect(t, 200)
	wellFormed(t, list.body)
	list.has(t, `data-campaign="weekly"`)
	p := e.get("/console/campaigns/weekly").expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `id="run-campaign"`, `<form id="campaign-form" method="post"`, `<table id="campaign-runs">`)
	r := e.post("/console/campaigns/weekly/run", url.Values{"csrf": {p.csrf(t)}}).expect(t, 303)
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/console/campaigns/weekly?ran=") {
		t.Fatalf("after running: %q", loc)
	}
	ran := e.get(loc).expect(t, 200)
	ran.has(t, `id="run-started"`, `data-state="running"`)
	doc := `{"schedule": {"cron": "0 10 * * 1"}, "audience": {"all": true}, "type": "digest", "title": "Your week", "paused": true}`
	e.post("/console/campaigns/weekly", url.Values{"csrf": {p.csrf(t)}, "campaign": {doc}}).expect(t, 303)
	if got, err := e.client.GetCampaign(context.Background(), "weekly"); err != nil || !got.Paused {
		t.Fatalf("saved %+v, %v", got, err)
	}
	bad := `{"schedule": {"cron": "not a cron"}, "audience": {"all": true}, "type": "digest", "title": "x"}`
	b := e.post("/console/campaigns/weekly", url.Values{"csrf": {p.csrf(t)}, "campaign": {bad}}).expect(t, 400)
	wellFormed(t, b.body)
	b.has(t, `class="field-error" id="error-schedule`)
	e.get("/console/campaigns/nope").expect(t, 404)
}

// TestListsNextPage: a list longer than a page links the next one with
// the same filters (keyset: the cursor, never a count or an offset).
func TestListsNextPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	seedCatalog(t, e)
	ctx := context.Background()
	for i := range 55 {
		_, _, err := e.client.PutReminder(ctx, herald.ReminderRequest{Key: fmt.Sprintf("r-%02d", i), UserID: "u-1", Type: "cart_reminder", Title: "t",
			Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	first := e.get("/console/reminders?type=cart_reminder").expect(t, 200)
	first.has(t, `data-reminder-key="cart-1"`).lacks(t, `data-reminder-key="r-54"`)
	m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(first.body)
	if m == nil {
		t.Fatalf("no next page link:\n%s", first.body)
	}
	next := strings.ReplaceAll(m[1], "&amp;", "&")
	if !strings.Contains(next, "type=cart_reminder") || !strings.Contains(next, "cursor=") {
		t.Fatalf("the next page %q lost the filter or the cursor", next)
	}
	second := e.get(next).expect(t, 200)
	wellFormed(t, second.body)
	second.has(t, `data-reminder-key="r-54"`).lacks(t, `data-reminder-key="cart-1"`, `rel="next"`)
}
