package rule

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"text/template"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/callout"
)

// Limits of a rule.
const (
	// DefaultAudienceLimit caps an audience that names no limit.
	DefaultAudienceLimit = 100_000
	// MaxAudienceLimit is the largest limit a rule may name.
	MaxAudienceLimit = 1_000_000
	// MaxTemplateLength bounds a title, body or data template.
	MaxTemplateLength = 4000
	// MaxChangedFields bounds the fields a Changed detector watches.
	MaxChangedFields = 20
	// MaxRearm bounds a restock detector's RearmAfter.
	MaxRearm = 7 * 24 * time.Hour
	// MaxWithin bounds an interest audience's window.
	MaxWithin = 366 * 24 * time.Hour
	// MaxAudienceUsers bounds an explicit audience list.
	MaxAudienceUsers = 1000
	// MinWebhookTimeout is the shortest timeout an audience webhook may
	// name (its longest is the Client's rules.webhook_max_timeout).
	MinWebhookTimeout = 100 * time.Millisecond
)

var (
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	fieldPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Compiled is a rule checked and ready: its templates parsed.
type Compiled struct {
	Rule  heraldtype.Rule
	title *template.Template
	body  *template.Template
	data  map[string]*template.Template
}

// Compile checks everything about r that needs no store — the event
// name, the detector, the audience, the templates — and parses the
// templates. Each refusal is invalid_argument naming its field
// (when.detect.price_drop_pct, notify.title, audience.limit, …). The
// notification's type and channels are the caller's to check, against
// its catalog. Defaults are filled in (the audience limit).
func Compile(r heraldtype.Rule) (*Compiled, error) {
	if r.When.Event == "" {
		return nil, heraldtype.FieldErrorf("when.event", "is required")
	}
	if len(r.When.Event) > 64 || !namePattern.MatchString(r.When.Event) {
		return nil, heraldtype.FieldErrorf("when.event", "must be 1-64 letters, digits, '_', '.', '-', starting with a letter or digit")
	}
	if r.Source.KafkaTopic != "" && (len(r.Source.KafkaTopic) > 249 || !namePattern.MatchString(r.Source.KafkaTopic)) {
		return nil, heraldtype.FieldErrorf("source.kafka_topic", "is not a Kafka topic name")
	}
	if err := checkDetector(r.When.Detect); err != nil {
		return nil, err
	}
	if err := checkAudience(&r.Audience); err != nil {
		return nil, err
	}
	c := &Compiled{Rule: r, data: map[string]*template.Template{}}
	var err error
	if c.title, err = parseField("notify.title", r.Notify.Title); err != nil {
		return nil, err
	}
	if c.body, err = parseField("notify.body", r.Notify.Body); err != nil {
		return nil, err
	}
	for k, v := range r.Notify.Data {
		if c.data[k], err = parseField("notify.data."+k, v); err != nil {
			return nil, err
		}
	}
	if r.Notify.Type == "" {
		return nil, heraldtype.FieldErrorf("notify.type", "is required")
	}
	return c, nil
}

func parseField(field, text string) (*template.Template, error) {
	if len(text) > MaxTemplateLength {
		return nil, heraldtype.FieldErrorf(field, "is %d bytes; the limit is %d", len(text), MaxTemplateLength)
	}
	t, err := parse(field, text)
	if err != nil {
		return nil, heraldtype.FieldErrorf(field, "does not parse: %v", err)
	}
	return t, nil
}

func checkDetector(d heraldtype.Detector) error {
	kinds := 0
	for _, set := range []bool{d.PriceDropPct != 0 || d.PriceDropAbs != 0, d.Restock != nil, len(d.Changed) > 0, d.Always} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return heraldtype.FieldErrorf("when.detect", "names more than one detector (price_drop_pct/price_drop_abs, restock, changed, always)")
	}
	switch {
	case d.PriceDropPct < 0 || d.PriceDropPct > 100 || math.IsNaN(d.PriceDropPct):
		return heraldtype.FieldErrorf("when.detect.price_drop_pct", "must be more than 0 and at most 100")
	case d.PriceDropAbs < 0 || math.IsNaN(d.PriceDropAbs) || math.IsInf(d.PriceDropAbs, 0):
		return heraldtype.FieldErrorf("when.detect.price_drop_abs", "must be more than 0")
	}
	if r := d.Restock; r != nil {
		if r.Min != nil && *r.Min < 1 {
			return heraldtype.FieldErrorf("when.detect.restock.min", "must be at least 1")
		}
		if rearm := time.Duration(r.RearmAfter); rearm < 0 || rearm > MaxRearm {
			return heraldtype.FieldErrorf("when.detect.restock.rearm_after", "must be between 0 and %s", MaxRearm)
		}
	}
	if len(d.Changed) > MaxChangedFields {
		return heraldtype.FieldErrorf("when.detect.changed", "names %d fields; the limit is %d", len(d.Changed), MaxChangedFields)
	}
	for _, n := range d.Changed {
		if !fieldPattern.MatchString(n) {
			return heraldtype.FieldErrorf("when.detect.changed", "%q is not a field name", n)
		}
	}
	for name, v := range map[string]string{"previous_price": d.Fields.PreviousPrice, "current_price": d.Fields.CurrentPrice,
		"previous_stock": d.Fields.PreviousStock, "current_stock": d.Fields.CurrentStock} {
		if v != "" && !fieldPattern.MatchString(v) {
			return heraldtype.FieldErrorf("when.detect.fields."+name, "%q is not a field name", v)
		}
	}
	return nil
}

func checkAudience(a *heraldtype.RuleAudience) error {
	kinds := 0
	for _, set := range []bool{a.Interest != nil, a.Topic != nil, len(a.UserIDs) > 0, a.EventUser, a.Source != "", a.Webhook != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return heraldtype.FieldErrorf("audience", "must name exactly one of interest, topic, user_ids, event_user, source, webhook")
	}
	switch {
	case a.Limit < 0 || a.Limit > MaxAudienceLimit:
		return heraldtype.FieldErrorf("audience.limit", "must be between 1 and %d", MaxAudienceLimit)
	case a.Limit == 0:
		a.Limit = DefaultAudienceLimit
	}
	if in := a.Interest; in != nil {
		if err := checkKinds("audience.interest.kinds", in.Kinds); err != nil {
			return err
		}
		if w := time.Duration(in.Within); w < 0 || w > MaxWithin {
			return heraldtype.FieldErrorf("audience.interest.within", "must be between 0 and %s", MaxWithin)
		}
		if b := in.AtMost; b != nil && (!fieldPattern.MatchString(b.EventField) || !fieldPattern.MatchString(b.InterestField)) {
			return heraldtype.FieldErrorf("audience.interest.at_most", "needs an event_field and an interest_field")
		}
	}
	if tp := a.Topic; tp != nil {
		if len(tp.Name) > 64 || !namePattern.MatchString(tp.Name) {
			return heraldtype.FieldErrorf("audience.topic.name", "must be 1-64 letters, digits, '_', '.', '-', starting with a letter or digit")
		}
		if err := checkKinds("audience.topic.kinds", tp.Kinds); err != nil {
			return err
		}
		if w := time.Duration(tp.Within); w < 0 || w > MaxWithin {
			return heraldtype.FieldErrorf("audience.topic.within", "must be between 0 and %s", MaxWithin)
		}
	}
	if a.Source != "" && (len(a.Source) > 64 || !namePattern.MatchString(a.Source)) {
		return heraldtype.FieldErrorf("audience.source", "must be 1-64 letters, digits, '_', '.', '-', starting with a letter or digit")
	}
	if w := a.Webhook; w != nil {
		if err := callout.CheckURL(w.URL); err != nil {
			return heraldtype.FieldErrorf("audience.webhook.url", "%v", err)
		}
		if t := w.Timeout.Std(); t != 0 && t < MinWebhookTimeout {
			return heraldtype.FieldErrorf("audience.webhook.timeout", "must be at least %v", MinWebhookTimeout)
		}
	}
	if len(a.UserIDs) > MaxAudienceUsers {
		return heraldtype.FieldErrorf("audience.user_ids", "has %d users; the limit is %d", len(a.UserIDs), MaxAudienceUsers)
	}
	if i := slices.IndexFunc(a.UserIDs, func(u string) bool { return u == "" }); i >= 0 {
		return heraldtype.FieldErrorf("audience.user_ids", "entry %d is empty", i)
	}
	return nil
}

func checkKinds(field string, kinds []string) error {
	for _, k := range kinds {
		if len(k) > 64 || !namePattern.MatchString(k) {
			return heraldtype.FieldErrorf(field, "%q is not an interest kind", k)
		}
	}
	return nil
}

// Rendered is a rule's notification for one event.
type Rendered struct {
	Title, Body string
	Data        map[string]string
}

// Render renders the notification with vars (the event's fields and the
// detector's). A field a template names that vars lacks is an error
// naming the template and the field.
func (c *Compiled) Render(vars map[string]string) (Rendered, error) {
	var r Rendered
	var err error
	if r.Title, err = render(c.title, vars); err != nil {
		return r, fmt.Errorf("notify.title: %w", err)
	}
	if r.Body, err = render(c.body, vars); err != nil {
		return r, fmt.Errorf("notify.body: %w", err)
	}
	if len(c.data) > 0 {
		r.Data = make(map[string]string, len(c.data))
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range c.data {
				if !yield(k) {
					return
				}
			}
		}) {
			if r.Data[k], err = render(c.data[k], vars); err != nil {
				return r, fmt.Errorf("notify.data.%s: %w", k, err)
			}
		}
	}
	return r, nil
}

// Vars are the template's fields: the event's, then the detector's.
func Vars(f Fields, res Result) map[string]string {
	v := make(map[string]string, len(f)+len(res.Vars))
	for k, x := range f {
		v[k] = x
	}
	for k, x := range res.Vars {
		v[k] = x
	}
	return v
}

// Admits reports whether a watcher whose interest carries data is in
// the audience of this event (InterestAudience.AtMost): its own bound
// must be at least the event's value. A watcher without the field, or an
// event without it, is admitted.
func (c *Compiled) Admits(f Fields, data map[string]string) bool {
	in := c.Rule.Audience.Interest
	if in == nil || in.AtMost == nil {
		return true
	}
	bound, ok := data[in.AtMost.InterestField]
	if !ok {
		return true
	}
	ev, ok := f[in.AtMost.EventField]
	if !ok {
		return true
	}
	b, err1 := strconv.ParseFloat(bound, 64)
	e, err2 := strconv.ParseFloat(ev, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	return e <= b
}
