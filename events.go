package herald

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/rule"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/store"
)

// Event is a business event: the body of POST /v1/events. Today an event
// stops the reminders waiting for it (a reminder's stop.on_event); the
// event rules of S3 extend the same endpoint.
type Event struct {
	// ID identifies the event for de-duplication (optional).
	ID string `json:"id,omitempty"`
	// Name is what happened ("checkout_completed").
	Name string `json:"name"`
	// UserID is whom it happened to.
	UserID string `json:"user_id,omitempty"`
	// Subject is what it happened to ("product:42"), optional.
	Subject string `json:"subject,omitempty"`
	// Data carries the event's fields; a reminder's stop.match compares
	// them.
	Data map[string]string `json:"data,omitempty"`
	// OccurredAt defaults to now.
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	// Version orders the events of one subject (S3.1): an event whose
	// version is not above the last one seen for its subject is stale and
	// is dropped. Zero: the event is not ordered (never stale). A product
	// system's event timestamp (epoch milliseconds) serves.
	Version int64 `json:"version,omitempty"`
	// CancellationKey, when set, cancels the notifications triggered with
	// it — UserID's when the event names a user, every user's otherwise —
	// as Client.Cancel does, before Track returns (issue 36 item 4): the
	// order shipped, so its pending "your cart is waiting" is not sent.
	// A rule's dry run ignores it.
	CancellationKey string `json:"cancellation_key,omitempty"`
	// Topic is the Kafka topic the event was read from, set by kafkaapi;
	// "" for POST /v1/events. A rule whose source names a topic applies
	// to that topic's events only; a rule without one to the others.
	Topic string `json:"-"`
	// Namespace is whose ID is: POST /v1/events sets the calling API
	// key's id, so another key's event of the same id is an event of its
	// own — neither a redelivery of yours nor one that blocks yours (issue
	// 31 item 5). A topic's events, and a Go caller's that names none,
	// share the namespace "".
	Namespace string `json:"-"`
}

// EventDataFromJSON reads an event's data as it travels in JSON (POST
// /v1/events, a Kafka events topic): each value may be any JSON scalar — a
// product system's prices are numbers — kept as its text: a string's
// value, a number's or a boolean's literal as written (8500, 99.5, true).
// Objects, arrays and null are refused, naming the field.
func EventDataFromJSON(raw map[string]json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0:
			return nil, heraldtype.FieldErrorf("data."+k, "is empty")
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, heraldtype.FieldErrorf("data."+k, "%v", err)
			}
			out[k] = s
		case v[0] == '{' || v[0] == '[':
			return nil, heraldtype.FieldErrorf("data."+k, "must be a string, number or boolean")
		case v[0] == 'n':
			return nil, heraldtype.FieldErrorf("data."+k, "must not be null")
		default:
			out[k] = string(v)
		}
	}
	return out, nil
}

// TrackResult is what an event did.
type TrackResult struct {
	// EventID is the event's id (generated when the event named none).
	EventID string `json:"event_id"`
	// StoppedReminders counts the reminders the event stopped.
	StoppedReminders int `json:"stopped_reminders"`
	// CancelledDeliveries counts the deliveries the event's
	// CancellationKey cancelled.
	CancelledDeliveries int `json:"cancelled_deliveries,omitempty"`
	// CancelledDigestItems counts the triggers waiting in digests that the
	// event's CancellationKey took out of them.
	CancelledDigestItems int `json:"cancelled_digest_items,omitempty"`
	// Replayed: the event had been applied before (a redelivery); what it
	// did then is answered and nothing is done again.
	Replayed bool `json:"replayed,omitempty"`
	// Stale: the event's version is not above the last one seen for its
	// subject; no rule acted on it (S3.1).
	Stale bool `json:"stale,omitempty"`
	// Rules is what each rule for the event decided: the first
	// RuleConfig.RecordedDecisions of them, by rule name (RulesTruncated
	// then says there were more). The answer and the event's stored
	// record are this bounded summary (issue 31 item 4).
	Rules          []RuleOutcome `json:"rules,omitempty"`
	RulesTruncated bool          `json:"rules_truncated,omitempty"`
	// Counts counts the decisions of every rule, also those Rules leaves
	// out; nil when no rule judged the event.
	Counts *DecisionCounts `json:"counts,omitempty"`
}

// RuleOutcome is one rule's decision on an event.
type RuleOutcome struct {
	Rule string `json:"rule"`
	// Detected: the detector fired; Reason says why or why not.
	Detected bool   `json:"detected"`
	Reason   string `json:"reason,omitempty"`
	// Run is the id of the fan-out the rule started (GET
	// /v1/rules/{name}/runs), when it detected and has an audience.
	Run string `json:"run,omitempty"`
	// Error is what stopped the rule: a field the detector or a template
	// needs that the event lacks, a rendered message the pipeline refuses.
	// A message that could not be rendered (a missing field, a template
	// over its budget) says "render_failed: " first.
	Error string `json:"error,omitempty"`

	// renderFailed is, for the metrics, why the message could not be
	// rendered: the budget's limit that stopped it (steps, bytes), or
	// "other".
	renderFailed string
}

// maxRecordTries bounds how often a guarded read-decide-write (an event
// on its subject, an unsubscribe on the preferences) decides again when
// another write landed between its read and its write. Each round one of
// the writers racing for the row wins, so the bound is how many may race
// at once; between tries the loser waits a little (decideAgain).
const maxRecordTries = 32

// decideAgain waits before the next try of a guarded write: a few
// milliseconds, growing with the tries and jittered, so writers racing
// for one row do not meet again at once. It returns ctx's error if ctx
// ends first.
func decideAgain(ctx context.Context, try int) error {
	d := time.Duration(1+rand.IntN(min(try, 10))) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Track applies an event (POST /v1/events, and each Kafka event record).
//
// It stops, synchronously, every active reminder of the event's user
// whose stop.on_event is the event's name and whose stop.match fields all
// equal the event's data (issue 19 item 3): once Track returns, none of
// them sends again.
//
// And it runs the rule engine (issue 20, S3.1–S3.5): each enabled rule of
// the event's source (its Kafka topic, or the API) and name judges the
// event with its detector, given what the detector remembered of the
// event's subject; a rule that fires renders its notification and starts
// a fan-out to its audience, worked by the rule runner. The event's
// record, the subject's new detector state and version, and the fan-outs
// commit in one transaction: a redelivered event (same source and id)
// finds its record and does nothing again (Replayed), and an event whose
// version is not above its subject's last is dropped as stale.
func (c *Client) Track(ctx context.Context, e Event) (TrackResult, error) {
	if err := c.checkEvent(&e); err != nil {
		return TrackResult{}, err
	}
	now := c.now().UTC()
	source := store.SourceHTTP
	if e.Topic != "" {
		source = e.Topic
	}
	generated := e.ID == ""
	if generated {
		e.ID = newID(now)
	}
	hash, err := eventHash(e)
	if err != nil {
		return TrackResult{}, err
	}
	key := store.EventKey{Source: source, Namespace: e.Namespace, ID: e.ID}
	// The rules, the record (a redelivery is answered from it) and the
	// subject are read together, in one round trip on PostgreSQL; the
	// subject so read is the first try's (decide reads it again after a
	// conflict). The rules are read with every event, never cached, so
	// an edit or a disable applies to the next event on every instance.
	q := store.EventQuery{Key: key, Subject: e.Subject,
		Rules: RuleFilter{Source: source, Event: e.Name, Enabled: true, Limit: store.MaxRulePage}}
	if generated {
		q.Key.ID = "" // a new id names no recorded event
	}
	q.Interests = c.interestsAhead(source, e, now)
	st, err := c.store.EventState(ctx, q)
	if err != nil {
		return TrackResult{}, err
	}
	rs, err := c.rulesFor(ctx, q.Rules, st.Rules, st.RulesNext)
	if err != nil {
		return TrackResult{}, err
	}
	aud := c.audiences
	if len(q.Interests) > 0 {
		aud.Interests = audience.ReadAhead(aud.Interests, q.Interests, st.Interested)
	}
	if len(rs) > 0 && st.Found {
		return c.replayedEvent(key, st.Recorded, hash)
	}
	subj := &st.Subject
	out := TrackResult{EventID: e.ID}
	if e.UserID != "" {
		n, err := c.store.StopReminders(ctx, store.ReminderSelector{UserID: e.UserID, Event: e.Name, Data: e.Data},
			heraldtype.StopEvent, now)
		if err != nil {
			return TrackResult{}, err
		}
		if n > 0 {
			c.metrics.RemindersStopped.WithLabelValues(heraldtype.StopEvent).Add(float64(n))
		}
		out.StoppedReminders = n
	}
	if e.CancellationKey != "" {
		res, err := c.Cancel(ctx, CancelRequest{CancellationKey: e.CancellationKey, UserID: e.UserID, By: "event " + e.Name})
		if err != nil {
			return TrackResult{}, err
		}
		out.CancelledDeliveries = res.cancelledNow()
		out.CancelledDigestItems = len(res.DigestItems)
	}
	if len(rs) == 0 {
		c.ruleGuesses.put(source, e.Name, nil)
		c.metrics.Events.WithLabelValues("no_rule").Inc()
		return out, nil
	}
	inline := true
	for try := 1; ; try++ {
		res, rec, err := c.decide(ctx, rs, source, e, now, out, subj)
		subj = nil
		if err != nil {
			return TrackResult{}, err
		}
		rec.RequestHash = hash
		if tp := tracing.TraceParent(ctx); tp != "" {
			// The runs' batches, written later by the leader's rule
			// runner, join the trace that applied the event (issue 34
			// item 5).
			for i := range rec.Runs {
				rec.Runs[i].TraceParent = tp
			}
		}
		if try > 1 {
			// Decided again: the audience is read again too.
			aud = c.audiences
		}
		if inline {
			if err := c.inlineBatches(ctx, &rec, aud); err != nil {
				return TrackResult{}, err
			}
		}
		done, err := c.store.RecordEvent(ctx, rec)
		switch {
		case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND && len(rec.Inline) > 0:
			// A listed user does not exist (or was deleted since the
			// audience was read): nothing was written, and the runner,
			// which leaves such users out one at a time, takes the runs.
			inline = false
			try--
			continue
		case err != nil:
			return TrackResult{}, err
		case done.Replayed:
			return c.replayedEvent(key, store.RecordedEvent{Outcome: done.Outcome, RequestHash: done.RequestHash}, hash)
		case done.Conflict && try < maxRecordTries:
			// Another event of the subject was applied meanwhile: decide
			// again on its state.
			if err := decideAgain(ctx, try); err != nil {
				return TrackResult{}, err
			}
			continue
		case done.Conflict:
			return TrackResult{}, heraldtype.Errorf(heraldtype.EUNAVAILABLE,
				"event %q: its subject %q kept changing under %d tries; send it again", e.ID, e.Subject, maxRecordTries)
		}
		c.tracked(res, rec)
		c.inlined(rec, done)
		c.ruleGuesses.inlined(source, e.Name, rs, rec)
		return summary(res, c.cfg.Rules.RecordedDecisions), nil
	}
}

// checkEvent validates an event as Track takes it.
func (c *Client) checkEvent(e *Event) error {
	if err := validEventName("name", e.Name); err != nil {
		return err
	}
	if e.ID != "" {
		if err := validID("id", e.ID); err != nil {
			return err
		}
	}
	if e.Subject != "" {
		if err := validText("subject", e.Subject, MaxIDLength); err != nil {
			return err
		}
	}
	if e.UserID != "" {
		if err := validID("user_id", e.UserID); err != nil {
			return err
		}
	}
	if e.Version < 0 {
		return heraldtype.FieldErrorf("version", "must not be negative")
	}
	if err := validCancellationKey(e.CancellationKey); err != nil {
		return err
	}
	if e.Namespace != "" {
		// No '/': a run's id joins source, namespace and id with it.
		if err := validID("namespace", e.Namespace); err != nil {
			return err
		}
	}
	return validData(e.Data, false)
}

// rulesFor compiles the rules of a page read already (first, with next
// its cursor) and of the pages of f after it.
func (c *Client) rulesFor(ctx context.Context, f RuleFilter, first []Rule, next string) ([]*rule.Compiled, error) {
	var out []*rule.Compiled
	rs := first
	for {
		for _, r := range rs {
			cr, err := c.compiledRules.get(r, c.templateLimits())
			if err != nil {
				// Stored before a check that now refuses it: it acts on
				// nothing until it is saved again, and says so.
				c.log.Warn("rules: a stored rule no longer compiles; it is skipped", "rule", r.Name, "err", err)
				continue
			}
			// A saved rule's series carry its name (issue 30 item 3): the
			// label set grows with the rules, bounded like every label.
			c.metrics.DeclareRules(r.Name)
			out = append(out, cr)
		}
		if next == "" {
			return out, nil
		}
		f.Cursor = next
		var err error
		if rs, next, err = c.store.ListRules(ctx, f); err != nil {
			return nil, err
		}
	}
}

// decide reads the event's subject (unless read already: read) and lets
// each rule judge the event: it returns the outcome and the record that
// writes it.
func (c *Client) decide(ctx context.Context, rs []*rule.Compiled, source string, e Event, now time.Time, out TrackResult,
	read *store.EventSubject) (TrackResult, store.EventRecord, error) {
	rec := store.EventRecord{Source: source, Namespace: e.Namespace, ID: e.ID, Name: e.Name, Subject: e.Subject,
		UserID: e.UserID, Version: e.Version, Now: now}
	states := map[string]rule.State{}
	if e.Subject != "" {
		var subj store.EventSubject
		if read != nil {
			subj = *read
		} else {
			var err error
			if subj, err = c.store.EventSubject(ctx, source, e.Subject); err != nil {
				return out, rec, err
			}
		}
		if len(subj.State) > 0 {
			if err := json.Unmarshal(subj.State, &states); err != nil {
				return out, rec, fmt.Errorf("herald: subject %q: its detector state does not decode: %w", e.Subject, err)
			}
		}
		rec.Seq = subj.Seq
		out.Stale = e.Version > 0 && subj.Seq > 0 && e.Version <= subj.Version
	}
	if !out.Stale {
		at := now
		if e.OccurredAt != nil {
			at = e.OccurredAt.UTC()
		}
		fields := eventFields(e)
		for _, cr := range rs {
			o, run := c.judge(ctx, cr, source, e, fields, at, now, states)
			out.Rules = append(out.Rules, o)
			if run != nil {
				rec.Runs = append(rec.Runs, *run)
			}
		}
		if err := ctx.Err(); err != nil {
			return out, rec, err // a render cut short is not the rule's failure
		}
		if e.Subject != "" {
			b, err := json.Marshal(states)
			if err != nil {
				return out, rec, err
			}
			rec.Write, rec.State = true, b
		}
	}
	var err error
	rec.Outcome, err = json.Marshal(summary(out, c.cfg.Rules.RecordedDecisions))
	return out, rec, err
}

// judge is one rule's decision on an event: its detector's (updating the
// subject's state in states), and, when it fires, the run that fans its
// rendered notification out. A run that cannot send (a template needs a
// field the event lacks, the rendered message is refused) is recorded
// failed with the reason, so the rule's runs show it.
func (c *Client) judge(ctx context.Context, cr *rule.Compiled, source string, e Event, fields rule.Fields,
	at, now time.Time, states map[string]rule.State) (RuleOutcome, *heraldtype.RuleRun) {
	r := cr.Rule
	o := RuleOutcome{Rule: r.Name}
	res, next, err := rule.Detect(r.When.Detect, fields, at, states[r.Name])
	if err != nil {
		// The rule cannot judge the event (a field it needs is missing or
		// not a number): a failed run says so in the rule's runs, where an
		// operator looks whichever transport brought the event (issue 30
		// item 3); it reaches no one.
		o.Error, o.Run = err.Error(), store.RuleRunID(source, e.Namespace, e.ID)
		return o, &heraldtype.RuleRun{Rule: r.Name, ID: o.Run, Source: source, EventID: e.ID,
			Event: e.Name, Subject: e.Subject, LastError: "the event could not be judged: " + o.Error}
	}
	states[r.Name] = next
	o.Detected, o.Reason = res.Fired, res.Reason
	if !res.Fired {
		return o, nil
	}
	a, ok := c.jobAudience(cr, e, fields, now)
	if !ok {
		o.Reason += "; the audience is empty (" + a.Subject + ")"
		return o, nil
	}
	run := &heraldtype.RuleRun{Rule: r.Name, ID: store.RuleRunID(source, e.Namespace, e.ID), Source: source, EventID: e.ID,
		Event: e.Name, Subject: e.Subject, Job: heraldtype.RuleJob{Audience: a}}
	o.Run = run.ID
	msg, err := c.ruleMessage(ctx, cr, fields, res)
	run.Job.Notification = msg
	run.Job.Notification.DedupeKey = e.Subject
	if err != nil {
		o.Error, run.LastError = err.Error(), err.Error()
		o.renderFailed = renderFailure(err)
		if o.renderFailed != "" {
			// A replay of the event's dead event renders the message
			// again with what the detector found now (renderretry.go):
			// by then the subject's state has moved on.
			run.Job.DetectorVars = res.Vars
		}
	}
	return o, run
}

// renderFailure says why err is a message that could not be rendered
// (the budget's limit that stopped it, or "other"), or "" when it is not
// a render's failure.
func renderFailure(err error) string {
	var re *rule.RenderError
	if !errors.As(err, &re) {
		return ""
	}
	if limit, ok := tmpl.OverBudget(err); ok {
		return limit
	}
	return "other"
}

// jobAudience resolves a rule's audience for an event; ok is false when
// it is empty by definition (an interest audience and an event about no
// subject, an event-user audience and an event of no user), and then
// a.Subject says why.
func (c *Client) jobAudience(cr *rule.Compiled, e Event, f rule.Fields, now time.Time) (a heraldtype.JobAudience, ok bool) {
	ra := cr.Rule.Audience
	// A rule saved before rules.max_audience was lowered is held to it.
	a.Limit = min(ra.Limit, c.cfg.Rules.MaxAudience)
	switch {
	case ra.EventUser:
		if e.UserID == "" {
			return heraldtype.JobAudience{Subject: "the event names no user"}, false
		}
		a.UserIDs = []string{e.UserID}
	case len(ra.UserIDs) > 0:
		a.UserIDs = ra.UserIDs
	case ra.Topic != nil:
		// A topic's subscribers: an interest in the topic's own subject,
		// whatever the event is about.
		a.Subject, a.Kinds = heraldtype.TopicSubject(ra.Topic.Name), ra.Topic.Kinds
		if w := time.Duration(ra.Topic.Within); w > 0 {
			a.Since = now.Add(-w)
		}
	case ra.Source != "" || ra.Webhook != nil:
		// The deployment's own audience, asked for this event's users.
		a.Source = ra.Source
		if w := ra.Webhook; w != nil {
			a.Webhook = &heraldtype.JobWebhook{URL: w.URL, Timeout: w.Timeout, Secret: w.Secret}
		}
		a.Event = &heraldtype.JobEvent{ID: e.ID, Name: e.Name, Subject: e.Subject, UserID: e.UserID, Data: e.Data}
	case e.Subject == "":
		return heraldtype.JobAudience{Subject: "the event is about no subject"}, false
	default:
		a.Subject, a.Kinds = e.Subject, ra.Interest.Kinds
		if w := time.Duration(ra.Interest.Within); w > 0 {
			a.Since = now.Add(-w)
		}
		if b := ra.Interest.AtMost; b != nil {
			if v, err := strconv.ParseFloat(f[b.EventField], 64); err == nil {
				a.AtMost = &heraldtype.JobBound{InterestField: b.InterestField, Value: v}
			}
		}
	}
	return a, true
}

// ruleMessage renders a rule's notification for an event and checks it
// as a trigger of it would be checked.
func (c *Client) ruleMessage(ctx context.Context, cr *rule.Compiled, fields rule.Fields, res rule.Result) (heraldtype.RuleMessage, error) {
	n := cr.Rule.Notify
	msg := heraldtype.RuleMessage{Type: n.Type, Channels: n.Channels, Priority: n.Priority}
	rendered, err := cr.Render(ctx, rule.Vars(fields, res))
	if err != nil {
		return msg, err
	}
	msg.Title, msg.Body, msg.Data = rendered.Title, rendered.Body, rendered.Data
	trig := Request{UserID: "rule-check", Type: msg.Type, Title: msg.Title, Body: msg.Body, Data: msg.Data,
		Channels: msg.Channels, Priority: msg.Priority}
	if _, err := c.prepare(ctx, &trig); err != nil {
		return msg, fmt.Errorf("the rendered notification is refused: %w", err)
	}
	msg.Channels = trig.Channels
	return msg, nil
}

// tracked counts what an applied event did and wakes the rule runner.
func (c *Client) tracked(out TrackResult, rec store.EventRecord) {
	if out.Stale {
		c.metrics.Events.WithLabelValues("stale").Inc()
		return
	}
	c.metrics.Events.WithLabelValues("applied").Inc()
	for _, o := range out.Rules {
		outcome := "not_detected"
		switch {
		case o.renderFailed != "":
			outcome = "render_failed"
			if o.renderFailed != "other" {
				c.metrics.TemplateOverBudget.WithLabelValues("rule", o.renderFailed).Inc()
			}
		case o.Error != "":
			outcome = "error"
		case o.Detected:
			outcome = "detected"
		}
		c.metrics.RuleDecisions.WithLabelValues(c.metrics.Rule(o.Rule), outcome).Inc()
		if o.Error != "" {
			c.log.Warn("rules: a rule could not act on an event", "rule", o.Rule, "source", rec.Source,
				"event", rec.ID, "name", rec.Name, "subject", rec.Subject, "err", o.Error)
		}
	}
	started, runner := 0, false
	for _, run := range rec.Runs {
		if run.LastError == "" {
			started++
			_, inline := rec.Inline[run.Rule]
			runner = runner || !inline
		}
	}
	if started > 0 {
		c.metrics.RuleRuns.WithLabelValues("started").Add(float64(started))
	}
	if runner && c.ruleRunner != nil {
		// Runs written with their batch (ruleinline.go) are done: the
		// runner is woken only for those it works.
		c.ruleRunner.Wake()
	}
}

// validEventName: event names follow the type names' pattern.
func validEventName(field, name string) error {
	if name == "" {
		return heraldtype.FieldErrorf(field, "is required")
	}
	// Upper case too: product systems name their events PRICE_CHANGE
	// (seed 003); names compare exactly.
	if len(name) > MaxTypeLength || !eventNamePattern.MatchString(name) {
		return heraldtype.FieldErrorf(field, "must be 1-%d characters of letters, digits, '_', '.', '-', starting with a letter or digit", MaxTypeLength)
	}
	return nil
}
