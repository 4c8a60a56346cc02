package rule

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tmpl"
)

var t0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// S3.2: a price drop of at least X % (default example 10 %) or at least
// an absolute amount fires; the seed's camelCase fields are read too.
func TestPriceDrop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     heraldtype.Detector
		f     Fields
		fired bool
		pct   string
	}{
		{"15 % ≥ 10 %", heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "10000", "current_price": "8500"}, true, "15"},
		{"exactly 10 %", heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "100", "current_price": "90"}, true, "10"},
		{"9.9 % < 10 %", heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "1000", "current_price": "901"}, false, "9.9"},
		{"a rise", heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "100", "current_price": "120"}, false, "0"},
		{"camelCase (the seed's Avro)", heraldtype.Detector{PriceDropPct: 10}, Fields{"previousPrice": "10000.0", "currentPrice": "8000.0"}, true, "20"},
		{"absolute", heraldtype.Detector{PriceDropAbs: 500}, Fields{"previous_price": "10000", "current_price": "9500"}, true, "5"},
		{"absolute, short", heraldtype.Detector{PriceDropAbs: 500}, Fields{"previous_price": "10000", "current_price": "9501"}, false, "5"},
		{"named fields", heraldtype.Detector{PriceDropPct: 5, Fields: heraldtype.DetectorFields{PreviousPrice: "was", CurrentPrice: "now"}},
			Fields{"was": "100", "now": "90", "previous_price": "1", "current_price": "1"}, true, "10"},
		{"previous 0", heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "0", "current_price": "0"}, false, "0"},
	} {
		res, _, err := Detect(tc.d, tc.f, t0, State{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Fired != tc.fired || res.Vars["drop_pct"] != tc.pct {
			t.Fatalf("%s: fired %v drop_pct %q (%s), want %v %q", tc.name, res.Fired, res.Vars["drop_pct"], res.Reason, tc.fired, tc.pct)
		}
	}
	_, _, err := Detect(heraldtype.Detector{PriceDropPct: 10}, Fields{"current_price": "1"}, t0, State{})
	if fieldOf(err) != "previousPrice" && fieldOf(err) != "previous_price" {
		t.Fatalf("missing previous price: %v", err)
	}
	_, _, err = Detect(heraldtype.Detector{PriceDropPct: 10}, Fields{"previous_price": "ten", "current_price": "1"}, t0, State{})
	if fieldOf(err) != "previous_price" {
		t.Fatalf("a price that is not a number: %v", err)
	}
}

func fieldOf(err error) string {
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return he.Field
	}
	return ""
}

// S3.2: stock 0 → > 0 fires once; a stock flapping 0/1 does not notify
// again until it has been 0 for rearm_after; a minimum holds back a
// restock of too few.
func TestRestockHysteresis(t *testing.T) {
	d := heraldtype.Detector{Restock: &heraldtype.RestockDetector{}}
	st := State{}
	step := func(at time.Duration, prev, cur string) bool {
		t.Helper()
		f := Fields{"current_stock": cur}
		if prev != "" {
			f["previous_stock"] = prev
		}
		res, next, err := Detect(d, f, t0.Add(at), st)
		if err != nil {
			t.Fatal(err)
		}
		st = next
		return res.Fired
	}
	if !step(0, "0", "5") {
		t.Fatal("0 → 5 did not fire")
	}
	if step(time.Minute, "5", "3") {
		t.Fatal("5 → 3 fired")
	}
	// Flapping within the hour: no re-notify.
	for i := range 5 {
		step(time.Duration(10+2*i)*time.Minute, "1", "0")
		if step(time.Duration(11+2*i)*time.Minute, "0", "1") {
			t.Fatalf("flap %d re-notified", i)
		}
	}
	// Out of stock for over an hour, then back: notify again.
	step(2*time.Hour, "1", "0")
	if !step(3*time.Hour+time.Minute, "0", "2") {
		t.Fatal("a restock after 1 h at 0 did not fire")
	}
	// Without previous_stock the state says it was at 0.
	ten := 10
	d2 := heraldtype.Detector{Restock: &heraldtype.RestockDetector{Min: &ten}}
	res, s2, _ := Detect(d2, Fields{"current_stock": "0"}, t0, State{})
	res, s2, _ = Detect(d2, Fields{"current_stock": "5"}, t0.Add(time.Minute), s2)
	if res.Fired {
		t.Fatal("5 < min 10 fired")
	}
	res, _, _ = Detect(d2, Fields{"current_stock": "12"}, t0.Add(2*time.Minute), s2)
	if !res.Fired {
		t.Fatalf("0 → 5 → 12 with min 10 did not fire: %s", res.Reason)
	}
}

func TestChangedAndAlways(t *testing.T) {
	d := heraldtype.Detector{Changed: []string{"title", "price"}}
	res, st, _ := Detect(d, Fields{"title": "A", "price": "1"}, t0, State{})
	if res.Fired {
		t.Fatal("the first event is no change")
	}
	res, st, _ = Detect(d, Fields{"title": "A", "price": "1", "other": "x"}, t0, st)
	if res.Fired {
		t.Fatal("nothing watched changed")
	}
	res, _, _ = Detect(d, Fields{"title": "B", "price": "2"}, t0, st)
	if !res.Fired || res.Vars["changed"] != "price,title" {
		t.Fatalf("changed: %+v", res)
	}
	if res, _, _ := Detect(heraldtype.Detector{}, Fields{}, t0, State{}); !res.Fired {
		t.Fatal("always did not fire")
	}
}

func validRule() heraldtype.Rule {
	return heraldtype.Rule{Name: "price-drop", Source: heraldtype.RuleSource{KafkaTopic: "product.inventory.v1"},
		When:     heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{PriceDropPct: 10}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW"}, Within: heraldtype.Duration(168 * time.Hour)}},
		Notify: heraldtype.RuleNotify{Type: "price_drop", Title: "{{.product_name}} is {{.drop_pct}}% off", Body: "Now {{.current_price}}",
			Data: map[string]string{"product": "{{.product_id}}"}}}
}

// Issue 20 item 2: bad input is refused naming the field.
func TestCompileRefusals(t *testing.T) {
	for field, mutate := range map[string]func(r *heraldtype.Rule){
		"when.event":                 func(r *heraldtype.Rule) { r.When.Event = "" },
		"source.kafka_topic":         func(r *heraldtype.Rule) { r.Source.KafkaTopic = "a topic" },
		"when.detect.price_drop_pct": func(r *heraldtype.Rule) { r.When.Detect.PriceDropPct = 150 },
		"when.detect.price_drop_abs": func(r *heraldtype.Rule) { r.When.Detect = heraldtype.Detector{PriceDropAbs: -1} },
		"when.detect":                func(r *heraldtype.Rule) { r.When.Detect.Always = true },
		"when.detect.restock.min": func(r *heraldtype.Rule) {
			r.When.Detect = heraldtype.Detector{Restock: &heraldtype.RestockDetector{Min: intp(-3)}}
		},
		"when.detect.restock.rearm_after": func(r *heraldtype.Rule) {
			r.When.Detect = heraldtype.Detector{Restock: &heraldtype.RestockDetector{RearmAfter: -1}}
		},
		"when.detect.changed":      func(r *heraldtype.Rule) { r.When.Detect = heraldtype.Detector{Changed: []string{"a b"}} },
		"audience":                 func(r *heraldtype.Rule) { r.Audience.EventUser = true },
		"audience.limit":           func(r *heraldtype.Rule) { r.Audience.Limit = 2_000_000 },
		"audience.interest.kinds":  func(r *heraldtype.Rule) { r.Audience.Interest.Kinds = []string{"a view"} },
		"audience.interest.within": func(r *heraldtype.Rule) { r.Audience.Interest.Within = -1 },
		"audience.topic.name": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Topic: &heraldtype.TopicAudience{Name: "deals of the day"}}
		},
		"audience.topic.kinds": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Topic: &heraldtype.TopicAudience{Name: "deals", Kinds: []string{""}}}
		},
		"audience.topic.within": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Topic: &heraldtype.TopicAudience{Name: "deals", Within: -1}}
		},
		"audience.source": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Source: "crm segment"}
		},
		"audience.webhook.url": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Webhook: &heraldtype.WebhookAudience{URL: "file:///etc/passwd"}}
		},
		"audience.webhook.timeout": func(r *heraldtype.Rule) {
			r.Audience = heraldtype.RuleAudience{Webhook: &heraldtype.WebhookAudience{URL: "https://crm.example/audience", Timeout: heraldtype.Duration(time.Millisecond)}}
		},
		"notify.title":        func(r *heraldtype.Rule) { r.Notify.Title = "{{.x" },
		"notify.body":         func(r *heraldtype.Rule) { r.Notify.Body = "{{end}}" },
		"notify.data.product": func(r *heraldtype.Rule) { r.Notify.Data["product"] = "{{if}}" },
		"notify.type":         func(r *heraldtype.Rule) { r.Notify.Type = "" },
	} {
		r := validRule()
		mutate(&r)
		_, err := Compile(r, tmpl.Limits{})
		if fieldOf(err) != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	// Issue 30 item 5: an explicit 0 is refused like -3, not taken for
	// the default; an absent minimum is the default.
	r := validRule()
	r.When.Detect = heraldtype.Detector{Restock: &heraldtype.RestockDetector{Min: intp(0)}}
	if _, err := Compile(r, tmpl.Limits{}); fieldOf(err) != "when.detect.restock.min" {
		t.Errorf("restock min 0: got %v", err)
	}
	r.When.Detect.Restock.Min = nil
	if _, err := Compile(r, tmpl.Limits{}); err != nil {
		t.Errorf("restock without min: %v", err)
	}
	c, err := Compile(validRule(), tmpl.Limits{})
	if err != nil || c.Rule.Audience.Limit != DefaultAudienceLimit {
		t.Fatalf("valid rule: %v, limit %d", err, c.Rule.Audience.Limit)
	}
}

// Templates render the event's fields and the detector's; a missing field
// is an error naming it, never "<no value>"; printf and the output are
// bounded.
func TestRender(t *testing.T) {
	c, err := Compile(validRule(), tmpl.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := Detect(c.Rule.When.Detect, Fields{"previous_price": "10000", "current_price": "8500"}, t0, State{})
	vars := Vars(Fields{"product_name": "Kettle", "product_id": "42", "previous_price": "10000", "current_price": "8500"}, res)
	r, err := c.Render(context.Background(), vars)
	if err != nil || r.Title != "Kettle is 15% off" || r.Body != "Now 8500" || r.Data["product"] != "42" {
		t.Fatalf("render: %+v, %v", r, err)
	}
	delete(vars, "product_name")
	_, err = c.Render(context.Background(), vars)
	if err == nil || !strings.Contains(err.Error(), "notify.title") || !strings.Contains(err.Error(), "product_name") {
		t.Fatalf("missing field: %v", err)
	}
	for _, text := range []string{`{{printf "%999999999d" 1}}`, `{{printf "%.999999f" 1.0}}`, `{{printf "%*d" 999999 1}}`} {
		r := validRule()
		r.Notify.Title = text
		c, err := Compile(r, tmpl.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Render(context.Background(), vars); err == nil {
			t.Fatalf("%s rendered", text)
		}
	}
	r2 := validRule()
	r2.Notify.Title = `{{.product_id}}`
	r2.Notify.Body = strings.Repeat("{{.big}}", 20)
	c2, _ := Compile(r2, tmpl.Limits{})
	vars["big"] = strings.Repeat("x", 1000)
	if _, err := c2.Render(context.Background(), vars); err == nil || !strings.Contains(err.Error(), "renders more than") {
		t.Fatalf("oversized render: %v", err)
	}
}

func TestAdmits(t *testing.T) {
	r := validRule()
	r.Audience.Interest.AtMost = &heraldtype.AudienceBound{EventField: "current_price", InterestField: "target_price"}
	c, err := Compile(r, tmpl.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f := Fields{"current_price": "8500"}
	for data, want := range map[string]bool{"9000": true, "8500": true, "8000": false, "": true} {
		d := map[string]string{}
		if data != "" {
			d["target_price"] = data
		}
		if got := c.Admits(f, d); got != want {
			t.Errorf("target %q: admitted %v, want %v", data, got, want)
		}
	}
}

func intp(n int) *int { return &n }

// Issue 31 item 1: a rule's templates render under one budget; a rule
// over it fails with a *RenderError naming the template and the limit,
// and a range over a literal above the step budget is refused at
// compile, naming the field.
func TestRenderBudget(t *testing.T) {
	lim := tmpl.Limits{MaxSteps: 100, MaxBytes: 4096}
	r := validRule()
	r.Notify.Title = `{{range 101}}{{end}}`
	if _, err := Compile(r, lim); heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "notify.title") {
		t.Fatalf("a range over 101 with 100 steps: %v", err)
	}
	r.Notify.Title = `{{range 60}}{{end}}`
	r.Notify.Body = `{{range 60}}{{end}}` // each fits; together they do not
	c, err := Compile(r, lim)
	if err != nil {
		t.Fatal(err)
	}
	var re *RenderError
	var over *tmpl.BudgetError
	if _, err := c.Render(context.Background(), map[string]string{}); !errors.As(err, &re) || re.Field != "notify.body" ||
		!errors.As(err, &over) || over.Limit != "steps" || !strings.HasPrefix(err.Error(), "render_failed: notify.body: ") {
		t.Fatalf("over the steps: %v", err)
	}
	r = validRule()
	r.Notify.Data = map[string]string{"x": `{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`}
	if c, err = Compile(r, lim); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"product_name": "Kettle", "drop_pct": "15", "current_price": "1", "product_id": "42"}
	if _, err := c.Render(context.Background(), vars); !errors.As(err, &over) || over.Limit != "bytes" || !strings.Contains(err.Error(), "notify.data.x") {
		t.Fatalf("over the bytes: %v", err)
	}
}

// TestRenderFunctions (issue 37): a rule's templates render through
// internal/message, so number and plural are there (in English: a rule
// renders one message for its whole audience).
func TestRenderFunctions(t *testing.T) {
	r := validRule()
	r.Notify.Title = `{{.product_name}} now {{number .current_price}}`
	c, err := Compile(r, tmpl.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := Detect(c.Rule.When.Detect, Fields{"previous_price": "10000", "current_price": "8500"}, t0, State{})
	out, err := c.Render(context.Background(), Vars(Fields{"product_name": "Kettle", "product_id": "42", "previous_price": "10000", "current_price": "8500"}, res))
	if err != nil || out.Title != "Kettle now 8,500" {
		t.Fatalf("render: %+v, %v", out, err)
	}
}
