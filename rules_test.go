package herald

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func priceDropRule() Rule {
	return Rule{Name: "price-drop", Source: heraldtype.RuleSource{KafkaTopic: "product.inventory.v1"},
		When: heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{PriceDropPct: 10}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW", "CLICK", "ADD_TO_CART"},
			Within: heraldtype.Duration(168 * time.Hour)}, Limit: 100000},
		Notify: heraldtype.RuleNotify{Type: "price_drop", Title: "{{.product_name}} is {{.drop_pct}}% off", Body: "Now {{.current_price}}",
			Channels: []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp}}}
}

// Issue 20 item 2: a rule is validated on save and stored; a dry run
// answers whether the detector fires, the audience (size, sample) and the
// rendered message, and sends nothing.
func TestRuleDryRun(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.Types["price_drop"] = TypeConfig{} })
	// 12 users viewed product 42 this week, one a month ago, one looked at
	// another product.
	var interests []InterestInput
	for i := range 14 {
		u := fmt.Sprintf("u%02d", i)
		if _, err := p.client.PutUser(p.ctx, u, UserInput{}); err != nil {
			t.Fatal(err)
		}
		at := p.clock.Now().Add(-time.Hour)
		subject := "product:42"
		switch i {
		case 12:
			at = p.clock.Now().Add(-30 * 24 * time.Hour)
		case 13:
			subject = "product:7"
		}
		interests = append(interests, InterestInput{UserID: u, Subject: subject, Kind: "VIEW", At: &at})
	}
	if _, err := p.client.RecordInterests(p.ctx, interests); err != nil {
		t.Fatal(err)
	}
	r, created, err := p.client.PutRule(p.ctx, priceDropRule())
	if err != nil || !created || r.CreatedAt.IsZero() {
		t.Fatalf("PutRule: %+v, %v, %v", r, created, err)
	}
	ev := Event{Name: "PRICE_CHANGE", Subject: "product:42",
		Data: map[string]string{"product_name": "Kettle", "previous_price": "10000", "current_price": "8500"}}
	out, err := p.client.DryRunRule(p.ctx, "price-drop", ev)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Matches || !out.Detected || out.AudienceSize != 12 || len(out.Sample) != DryRunSample || out.Sample[0] != "u00" ||
		out.Notification == nil || out.Notification.Title != "Kettle is 15% off" || out.Notification.Body != "Now 8500" || out.Error != "" {
		t.Fatalf("dry run: %+v %+v", out, out.Notification)
	}
	// A drop under the threshold: not detected, still rendered.
	ev.Data["current_price"] = "9500"
	if out, _ := p.client.DryRunRule(p.ctx, "price-drop", ev); out.Detected || !strings.Contains(out.Reason, "under the threshold") {
		t.Fatalf("5 %% drop: %+v", out)
	}
	// A field the title needs is missing: the error names it.
	delete(ev.Data, "product_name")
	ev.Data["current_price"] = "8000"
	if out, _ := p.client.DryRunRule(p.ctx, "price-drop", ev); out.Notification != nil || !strings.Contains(out.Error, "product_name") {
		t.Fatalf("missing field: %+v", out)
	}
	// Another event: the rule does not match.
	if out, _ := p.client.DryRunRule(p.ctx, "price-drop", Event{Name: "STOCK_CHANGE", Subject: "product:42"}); out.Matches {
		t.Fatalf("STOCK_CHANGE matched: %+v", out)
	}
	// Nothing was sent or enqueued.
	if n := p.work(); n != 0 {
		t.Fatalf("a dry run enqueued %d deliveries", n)
	}
	page, err := p.client.ListRules(p.ctx, RuleFilter{Source: "product.inventory.v1"})
	if err != nil || len(page.Rules) != 1 {
		t.Fatalf("ListRules: %+v, %v", page, err)
	}
	if err := p.client.DeleteRule(p.ctx, "price-drop"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.DryRunRule(p.ctx, "price-drop", ev); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("dry run of a deleted rule: %v", err)
	}
}

// Issue 20 item 2: what cannot work is refused on save, naming the field.
func TestRuleValidation(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.Types["price_drop"] = TypeConfig{} })
	for field, mutate := range map[string]func(r *Rule){
		"notify.type":                func(r *Rule) { r.Notify.Type = "undeclared" },
		"notify.channels":            func(r *Rule) { r.Notify.Channels = []heraldtype.Channel{"pigeon"} },
		"notify.title":               func(r *Rule) { r.Notify.Title = "{{.product_name" },
		"when.detect.price_drop_pct": func(r *Rule) { r.When.Detect.PriceDropPct = -5 },
		"audience":                   func(r *Rule) { r.Audience.Interest = nil },
		"name":                       func(r *Rule) { r.Name = "a/b" },
	} {
		r := priceDropRule()
		mutate(&r)
		_, _, err := p.client.PutRule(p.ctx, r)
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
