package herald

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/explain"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// ExplainRequest asks why a user did or did not get a notification.
type ExplainRequest = heraldtype.ExplainRequest

// Explanation is the answer: a verdict, a sentence and the findings
// behind it, each drawn from the records.
type Explanation = heraldtype.Explanation

// Bounds of what Explain reads besides the notification itself: the
// notifications it looks through for the one a duplicate repeated and for
// those counted toward a daily cap. They keep an answer to a few indexed
// reads on a big history.
const (
	explainDuplicateScan = 20
	explainCapScan       = 50
	explainRunScan       = 20
	explainTriggerScan   = 50
)

// Explain answers "why didn't this user get it?" for one of the user's
// notifications, or for the newest of a type since r.Since: sent, still
// pending, deferred by quiet hours until when, opted out by which
// preference, a duplicate of which notification, over the daily cap with
// the notifications that counted, no device or an invalidated one (since
// when, why), no address or a suppressed one, the provider's failure —
// each from the records (issue 34 item 2). Asked about a rule's run or an
// event, it answers with the notification the run (the first of the
// event's runs that wrote one) wrote for the user, or why none: outside
// the audience, not reached yet, the run failed, no rule detected the
// event (each rule's reason), the event was stale. The reasoning is
// internal/explain's; this gathers the records.
func (c *Client) Explain(ctx context.Context, r ExplainRequest) (Explanation, error) {
	if err := c.validExplain(r); err != nil {
		return Explanation{}, err
	}
	user, err := c.store.GetUser(ctx, r.UserID)
	if err != nil {
		return Explanation{}, err
	}
	rec := explain.Records{UserID: r.UserID, Type: r.Type, Since: r.Since, Location: time.UTC}
	if loc, err := time.LoadLocation(user.Timezone); err == nil {
		rec.Location = loc
	}
	if rec.Devices, err = c.store.ListDevices(ctx, r.UserID); err != nil {
		return Explanation{}, err
	}
	id := r.NotificationID
	if id == "" && r.Rule == "" && r.Event != "" {
		runs, err := c.explainEvent(ctx, r, &rec)
		if err != nil {
			return Explanation{}, err
		}
		for i := range runs {
			if id, err = c.ruleRunNotification(ctx, r.UserID, runs[i]); err != nil {
				return Explanation{}, err
			}
			if id != "" {
				rec.Run = &runs[i]
				break
			}
		}
		if id == "" {
			if len(runs) > 0 {
				rec.Run, rec.Runs = &runs[0], runs
			}
			return explain.Explain(rec), nil
		}
	}
	if id == "" && r.Rule != "" {
		run, err := c.store.RuleRun(ctx, r.Rule, r.RuleRun)
		if err != nil {
			return Explanation{}, err
		}
		rec.Run = &run
		if id, err = c.ruleRunNotification(ctx, r.UserID, run); err != nil {
			return Explanation{}, err
		}
		if id == "" {
			return explain.Explain(rec), nil
		}
	}
	if id == "" && r.IdempotencyKey != "" {
		if id, err = c.triggerNotification(ctx, r); err != nil {
			return Explanation{}, err
		}
		if id == "" {
			return Explanation{}, heraldtype.Errorf(heraldtype.ENOTFOUND,
				"no notification of user %q with idempotency key %q among their newest %d", r.UserID, r.IdempotencyKey, explainTriggerScan)
		}
	}
	if id == "" {
		page, _, err := c.store.ListHistory(ctx, heraldtype.HistoryFilter{UserID: r.UserID, Type: r.Type, From: r.Since, Limit: 1}, 0)
		if err != nil {
			return Explanation{}, err
		}
		if len(page) == 0 {
			if rec.Preferences, err = c.store.GetPreferences(ctx, r.UserID); err != nil {
				return Explanation{}, err
			}
			if rec.TypeConfig, err = c.types.Type(ctx, r.Type); err != nil {
				return Explanation{}, err
			}
			return explain.Explain(rec), nil
		}
		id = page[0].NotificationID
	}
	n, err := c.store.GetNotification(ctx, id)
	if err != nil {
		return Explanation{}, err
	}
	if n.UserID != r.UserID {
		// Another user's notification is not this user's to explain; it
		// is answered as not found, like a path naming the wrong user.
		return Explanation{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "user %q has no notification %q", r.UserID, id)
	}
	if r.Type != "" && n.Type != r.Type {
		return Explanation{}, heraldtype.FieldErrorf("type", "notification %q is of type %q, not %q", id, n.Type, r.Type)
	}
	if rec.Deliveries, err = c.store.ListNotificationDeliveries(ctx, id); err != nil {
		return Explanation{}, err
	}
	rec.Notification = &n
	rec.Status, _, _ = rules.DeliveriesStatus(n.Channels, rec.Deliveries)
	if rec.TypeConfig, err = c.types.Type(ctx, n.Type); err != nil {
		return Explanation{}, err
	}
	for i := range rec.Deliveries {
		d := &rec.Deliveries[i]
		if d.State != heraldtype.StateRateLimited {
			continue
		}
		switch {
		case d.LastErrorCode == policy.CodeDuplicate && rec.Duplicate == nil:
			if rec.Duplicate, err = c.explainDuplicate(ctx, &n, d, rec.TypeConfig); err != nil {
				return Explanation{}, err
			}
		case d.LastErrorCode == policy.CodeDailyCap && rec.Cap == nil:
			if rec.Cap, err = c.explainCap(ctx, &n, d, rec.Location); err != nil {
				return Explanation{}, err
			}
		}
	}
	return explain.Explain(rec), nil
}

func (c *Client) validExplain(r ExplainRequest) error {
	if err := validID("user_id", r.UserID); err != nil {
		return err
	}
	if (r.Rule == "") != (r.RuleRun == "") {
		if r.Rule == "" {
			return heraldtype.FieldErrorf("rule", "is required with rule_run: name the rule whose run to explain")
		}
		return heraldtype.FieldErrorf("rule_run", "is required with rule: name the run (GET /v1/rules/{name}/runs)")
	}
	if r.Event == "" && (r.EventSource != "" || r.EventNamespace != "") {
		return heraldtype.FieldErrorf("event", "is required with event_source or event_namespace: name the event's id")
	}
	if r.NotificationID == "" && r.Type == "" && r.Rule == "" && r.IdempotencyKey == "" && r.Event == "" {
		return heraldtype.FieldErrorf("type", "is required without a notification id, an idempotency key, a rule run or an event: name the type (or the notification) to explain")
	}
	if r.Event != "" {
		if err := validID("event", r.Event); err != nil {
			return err
		}
		if r.EventSource != "" {
			// 249 characters: the longest name Kafka gives a topic.
			if err := validText("event_source", r.EventSource, 249); err != nil {
				return err
			}
		}
		if r.EventNamespace != "" {
			if err := validID("event_namespace", r.EventNamespace); err != nil {
				return err
			}
		}
	}
	if err := validText("idempotency_key", r.IdempotencyKey, MaxKeyLength); err != nil {
		return err
	}
	if r.Rule != "" {
		if err := validID("rule", r.Rule); err != nil {
			return err
		}
		if err := validText("rule_run", r.RuleRun, 512); err != nil {
			return err
		}
	}
	if r.NotificationID != "" {
		if err := validID("notification_id", r.NotificationID); err != nil {
			return err
		}
	}
	if r.Type != "" {
		if err := validTypeName(r.Type); err != nil {
			return err
		}
	}
	if !r.Since.IsZero() && r.Since.After(c.now()) {
		return heraldtype.FieldErrorf("since", "must not be in the future")
	}
	return nil
}

// explainEvent reads the recorded event r names into rec.Event and
// returns the rule runs it started, in decision order. An event no rule
// considered was never recorded, and a record is kept for
// rules.event_retention: either is not found, saying so.
func (c *Client) explainEvent(ctx context.Context, r ExplainRequest, rec *explain.Records) ([]heraldtype.RuleRun, error) {
	k := store.EventKey{Source: r.EventSource, Namespace: r.EventNamespace, ID: r.Event}
	if k.Source == "" {
		k.Source = store.SourceHTTP
	}
	got, ok, err := c.store.RecordedEvent(ctx, k)
	if err != nil {
		return nil, err
	}
	if !ok {
		kept := "for rules.event_retention"
		if d := c.cfg.Rules.EventRetention; d > 0 {
			kept += " (" + d.String() + ")"
		}
		from := "posted to the API"
		if r.EventSource != "" {
			from = "from topic " + r.EventSource
		}
		if r.EventNamespace != "" {
			from += " under key " + r.EventNamespace
		}
		return nil, heraldtype.Errorf(heraldtype.ENOTFOUND,
			"no event %q %s is recorded: Herald records only the events some rule considered, and keeps them %s", r.Event, from, kept)
	}
	var out TrackResult
	if err := json.Unmarshal(got.Outcome, &out); err != nil {
		return nil, fmt.Errorf("herald: event %q: its recorded outcome does not decode: %w", r.Event, err)
	}
	ev := &explain.Event{ID: r.Event, Source: k.Source, Namespace: k.Namespace, Stale: out.Stale, Truncated: out.RulesTruncated,
		Judged: len(out.Rules)}
	if out.Counts != nil {
		ev.Judged = out.Counts.Rules
	}
	var runs []heraldtype.RuleRun
	for _, o := range out.Rules {
		ev.Decisions = append(ev.Decisions, explain.Decision{Rule: o.Rule, Detected: o.Detected, Reason: o.Reason, Run: o.Run, Error: o.Error})
		if o.Run == "" {
			continue
		}
		run, err := c.store.RuleRun(ctx, o.Rule, o.Run)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	rec.Event = ev
	return runs, nil
}

// ruleRunNotification finds the notification run wrote for the user: one
// of the user's notifications of the run's type created since the run,
// whose source is the run. Empty when there is none (in a bounded scan).
func (c *Client) ruleRunNotification(ctx context.Context, userID string, run heraldtype.RuleRun) (string, error) {
	page, _, err := c.store.ListHistory(ctx, heraldtype.HistoryFilter{UserID: userID, Type: run.Job.Notification.Type,
		From: run.CreatedAt.Add(-time.Second), Limit: explainRunScan}, 0)
	if err != nil {
		return "", err
	}
	for i := len(page) - 1; i >= 0; i-- {
		n, err := c.store.GetNotification(ctx, page[i].NotificationID)
		if err != nil {
			return "", err
		}
		if s := n.Source; s != nil && s.Kind == heraldtype.SourceRule && s.Name == run.Rule && s.Occurrence == run.ID {
			return n.ID, nil
		}
	}
	return "", nil
}

// triggerNotification finds the user's newest notification a trigger with
// r.IdempotencyKey created, among the user's newest notifications (of
// r.Type, since r.Since): the key is kept on each notification, not
// indexed for a user, so the scan is bounded. A notification does not
// record whose key namespace it came from; the newest match is taken.
func (c *Client) triggerNotification(ctx context.Context, r ExplainRequest) (string, error) {
	page, _, err := c.store.ListHistory(ctx, heraldtype.HistoryFilter{UserID: r.UserID, Type: r.Type, From: r.Since, Limit: explainTriggerScan}, 0)
	if err != nil {
		return "", err
	}
	for _, e := range page {
		n, err := c.store.GetNotification(ctx, e.NotificationID)
		if err != nil {
			return "", err
		}
		if n.IdempotencyKey == r.IdempotencyKey {
			return n.ID, nil
		}
	}
	return "", nil
}

// explainDuplicate finds the notification whose dedupe lock blocked n: the
// newest of the user's notifications of n's type with n's dedupe key,
// created before d was decided and sent (or otherwise past the policy) on
// a channel the lock applies to. Nil when the records no longer show it.
func (c *Client) explainDuplicate(ctx context.Context, n *heraldtype.Notification, d *heraldtype.Delivery, t heraldtype.NotificationType) (*explain.Duplicate, error) {
	window := t.DedupeWindow
	if window <= 0 {
		window = policy.DefaultDedupeWindow
	}
	dup := &explain.Duplicate{Window: window}
	decided := d.UpdatedAt
	if d.FinishedAt != nil {
		decided = *d.FinishedAt
	}
	if n.DedupeKey == "" {
		return dup, nil
	}
	page, _, err := c.store.ListHistory(ctx, heraldtype.HistoryFilter{UserID: n.UserID, Type: n.Type,
		From: decided.Add(-window - 24*time.Hour), To: decided.Add(time.Millisecond), Limit: explainDuplicateScan}, 0)
	if err != nil {
		return nil, err
	}
	for _, e := range page {
		if e.NotificationID == n.ID || e.Deliveries[heraldtype.StateSent] == 0 {
			continue
		}
		o, err := c.store.GetNotification(ctx, e.NotificationID)
		if err != nil {
			return nil, err
		}
		if o.DedupeKey != n.DedupeKey {
			continue
		}
		ds, err := c.store.ListNotificationDeliveries(ctx, o.ID)
		if err != nil {
			return nil, err
		}
		for _, od := range ds {
			if od.State == heraldtype.StateSent && od.Channel != heraldtype.ChannelInApp && od.FinishedAt != nil &&
				!od.FinishedAt.After(decided) && decided.Sub(*od.FinishedAt) <= window {
				dup.Of, dup.SentAt = o.ID, *od.FinishedAt
				return dup, nil
			}
		}
	}
	return dup, nil
}

// explainCap gathers the daily cap n ran into: the user's local day when
// d was decided, the cap that applied, and the notifications that counted
// toward it — those of the user sent (or failed after passing the policy)
// on a channel the cap governs that day, whose type counts toward the cap
// for what produced them.
func (c *Client) explainCap(ctx context.Context, n *heraldtype.Notification, d *heraldtype.Delivery, loc *time.Location) (*explain.Cap, error) {
	decided := d.UpdatedAt
	if d.FinishedAt != nil {
		decided = *d.FinishedAt
	}
	day, end := policy.LocalDay(decided, loc)
	start := end.AddDate(0, 0, -1)
	if s, err := time.ParseInLocation(time.DateOnly, day, loc); err == nil {
		start = s.UTC()
	}
	prefs, err := c.store.GetPreferences(ctx, n.UserID)
	if err != nil {
		return nil, err
	}
	limit := c.cfg.DailyCap
	if limit <= 0 {
		limit = policy.DefaultDailyCap
	}
	if prefs.DailyCap > 0 {
		limit = prefs.DailyCap
	}
	cp := &explain.Cap{Day: day, Limit: limit, Counted: []string{}}
	// A notification created the day before and sent on this one (deferred
	// overnight) counts toward this day: the scan starts a day earlier.
	page, _, err := c.store.ListHistory(ctx, heraldtype.HistoryFilter{UserID: n.UserID, From: start.Add(-24 * time.Hour), To: end, Limit: explainCapScan}, 0)
	if err != nil {
		return nil, err
	}
	for i := len(page) - 1; i >= 0; i-- {
		e := page[i]
		if e.NotificationID == n.ID || e.Deliveries[heraldtype.StateSent]+e.Deliveries[heraldtype.StateDead]+e.Deliveries[heraldtype.StateUnknown] == 0 {
			continue
		}
		o, err := c.store.GetNotification(ctx, e.NotificationID)
		if err != nil {
			return nil, err
		}
		t, err := c.types.Type(ctx, o.Type)
		if err != nil {
			return nil, err
		}
		if !t.CountsTowardCapFor(o.Source) {
			continue
		}
		ds, err := c.store.ListNotificationDeliveries(ctx, o.ID)
		if err != nil {
			return nil, err
		}
		for _, od := range ds {
			if od.Channel != heraldtype.ChannelInApp && od.FinishedAt != nil && !od.FinishedAt.Before(start) && od.FinishedAt.Before(end) &&
				(od.State == heraldtype.StateSent || od.State == heraldtype.StateDead || od.State == heraldtype.StateUnknown) {
				cp.Counted = append(cp.Counted, o.ID)
				break
			}
		}
	}
	return cp, nil
}
