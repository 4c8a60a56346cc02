// Package policy decides, at send time, whether one claimed delivery may be
// sent: the delivery policy of S1.1–S1.3, S3.8 and S3.11. It runs in the
// dispatcher, per delivery, in this order:
//
//  1. preferences — the type turned off, the channel not allowed for the
//     type, or the channel opted out: opted_out (heraldtype.Preferences
//     .Refusal, the rule the inbox write at enqueue applies too). A
//     critical type bypasses the user's opt-outs on every channel: it is
//     what the user is guaranteed to see (S4.5, issue 22).
//  2. quiet hours — inside the user's window (in the user's time zone) a
//     non-critical delivery of a type with quiet hours is deferred until
//     the window ends, then runs through the whole policy again.
//  3. de-duplication — a notification with a dedupe key takes a
//     first-writer-wins lock on user × type × key for the type's window;
//     a second notification inside the window is rate_limited/duplicate.
//  4. daily cap — a capped, non-critical notification is counted toward
//     the user's local calendar day; beyond the cap it is
//     rate_limited/daily_cap. A type is capped when it says so; one that
//     says nothing caps what rules and campaigns produce, not triggers
//     (heraldtype.NotificationType.CountsTowardCapFor).
//
// A test-send (heraldtype.SourceTest: an operator trying a type's
// templates on one named user) takes step 1 only, like a critical type
// but without its bypass of the opt-outs: it is sent now, whatever the
// user's quiet hours, and neither takes a dedupe lock nor counts toward
// the cap.
//
// The order puts the checks that consume nothing first: an opted-out or
// deferred delivery must not take a dedupe lock or a slot of the day's cap
// it will not use (a notification deferred overnight counts toward the day
// it is sent on). De-duplication precedes the cap so that a duplicate never
// spends a cap slot.
//
// An in_app delivery (the inbox item of a notification scheduled for
// later, written when it is due) takes step 1 only: the inbox interrupts
// nobody, so quiet hours do not defer it, and it neither takes a dedupe
// lock nor spends a slot of the cap — as an in-app item written at enqueue
// never did.
//
// Steps 3 and 4 are atomic operations of a Limiter (the SQL store or
// Redis), idempotent per notification: every delivery of one notification
// (one per device and channel) gets the same answer, and a delivery retried
// after a failure is not blocked by its own lock or counted twice.
//
// The worker runs Prefetch once per claimed batch: it reads the batch's
// preferences in one call and, with a BatchLimiter, counts the batch's
// daily caps in one call — in the batch's order, after the batch's dedupe
// locks — which Check then answers from. The counts are those CountDaily
// would make one by one.
package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Error codes of the decisions, recorded as the delivery's last_error_code.
const (
	CodeTypeDisabled    = heraldtype.CodeTypeDisabled
	CodeChannelDisabled = heraldtype.CodeChannelDisabled
	CodeChannelOptedOut = heraldtype.CodeChannelOptedOut
	CodeDuplicate       = "duplicate"
	CodeDailyCap        = "daily_cap"
	CodeQuietHours      = heraldtype.CodeQuietHours
	// CodePolicyError: the policy could not be evaluated (its store
	// failed), so the delivery was not sent (S1.3).
	CodePolicyError = "policy_error"
)

// Defaults of the policy.
const (
	// DefaultDailyCap is the seed's daily limit per user (S3.8: the 11th
	// is blocked).
	DefaultDailyCap = 10
	// DefaultDedupeWindow is the seed's duplicate window (S3.8: 1 h).
	DefaultDedupeWindow = time.Hour
	// MaxDailyCap bounds a configured or preferred cap.
	MaxDailyCap = 10000
)

// Limiter holds the atomic parts of the policy. Both implementations (the
// SQL stores and Redis) pass the shared suite in policy/policytest.
type Limiter interface {
	// AcquireDedupe takes the lock key for owner (a notification id) until
	// now+window if it is free or expired: first writer wins. ok is true
	// when owner holds the lock, also when it already did, so every
	// delivery of one notification gets the same answer.
	AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, now time.Time) (ok bool, err error)
	// CountDaily atomically: if owner is already counted for userID's day
	// (the user's local date, YYYY-MM-DD), ok; else if fewer than limit
	// owners are counted, count owner, ok; else not ok. The count may be
	// forgotten after expireAt.
	CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (ok bool, err error)
}

// BatchLimiter is a Limiter that also counts many owners in one call: the
// SQL stores (one round trip) and Redis (one pipeline). The Engine finds
// it by type assertion and counts a claimed batch's daily caps with it in
// Prefetch (issue 39 item 3: one transaction per capped push was a fifth
// of Herald's CPU under the rule engine's load).
type BatchLimiter interface {
	Limiter
	// CountDailyBatch is CountDaily for each item in order, in one call:
	// a later item sees what an earlier one counted, so of two new owners
	// of a user's day at the cap's edge the first is counted and the
	// second refused. ok[i] answers items[i]. The items of one user and
	// day carry one limit (heraldtype.CheckDailyCounts).
	CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) (ok []bool, err error)
}

// DedupeBatchLimiter is a Limiter that also takes many dedupe locks in
// one call: the SQL stores (one statement) and Redis (one pipeline). The
// Engine finds it by type assertion and takes a claimed batch's locks
// with it in Prefetch (issue 39 item 3: a round trip per pushed delivery
// was 14 % of Herald's CPU under the rule engine's load).
type DedupeBatchLimiter interface {
	Limiter
	// AcquireDedupeBatch is AcquireDedupe for each item in order, at now,
	// in one call: ok[i] answers items[i]. Items may share a key: the
	// first takes it (if free or expired), and a later one of the same
	// key is ok when its owner is the one holding it.
	AcquireDedupeBatch(ctx context.Context, items []heraldtype.DedupeLock, now time.Time) (ok []bool, err error)
}

// Verdict is what the policy says about one delivery.
type Verdict uint8

const (
	// Allow: send it.
	Allow Verdict = iota
	// Defer: return it to the queue until Decision.Until (quiet hours),
	// without counting an attempt.
	Defer
	// Block: end it in Decision.State (opted_out or rate_limited).
	Block
)

// Decision is the policy's answer for one delivery.
type Decision struct {
	Verdict Verdict
	// State is opted_out or rate_limited when Verdict is Block.
	State heraldtype.DeliveryState
	// Code and Reason explain a Defer or Block.
	Code   string
	Reason string
	// Until is when a deferred delivery is due again.
	Until time.Time
}

// Source is where the policy reads a user's preferences.
type Source interface {
	// GetPreferences returns the user's preferences with the user's time
	// zone.
	GetPreferences(ctx context.Context, userID string) (heraldtype.Preferences, error)
	// GetPreferencesMany reads many users' preferences at once; a user
	// that does not exist is absent.
	GetPreferencesMany(ctx context.Context, userIDs []string) (map[string]heraldtype.Preferences, error)
}

// Prefetched is what Engine.Prefetch read and decided for one claimed
// batch, for Check; nil holds nothing.
type Prefetched struct {
	// Preferences of the batch's users, read in one round trip. They are
	// as fresh as the claim (milliseconds before the send), so an opt-out
	// saved before the claim applies. A user absent is read by Check.
	Preferences map[string]heraldtype.Preferences
	// decided holds, by delivery id, the decisions of the deliveries whose
	// daily cap the batch counted (BatchLimiter).
	decided map[int64]Decision
}

// preferences returns userID's prefetched preferences.
func (p *Prefetched) preferences(userID string) (heraldtype.Preferences, bool) {
	if p == nil {
		return heraldtype.Preferences{}, false
	}
	prefs, ok := p.Preferences[userID]
	return prefs, ok
}

// decision returns the decision the batch took for delivery id.
func (p *Prefetched) decision(id int64) (Decision, bool) {
	if p == nil {
		return Decision{}, false
	}
	d, ok := p.decided[id]
	return d, ok
}

// Config configures an Engine.
type Config struct {
	// Types resolves a notification type. Required.
	Types *Catalog
	// Source reads preferences. Required.
	Source Source
	// Limiter takes dedupe locks and counts daily caps. Required.
	Limiter Limiter
	// DailyCap is the cap of a user without one in their preferences.
	// Default DefaultDailyCap.
	DailyCap int
}

// Engine evaluates the policy. It is safe for concurrent use.
type Engine struct {
	cfg   Config
	zones sync.Map // time zone name → *time.Location
}

// New validates cfg and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Types == nil || cfg.Source == nil || cfg.Limiter == nil {
		return nil, errors.New("policy: Config.Types, Config.Source and Config.Limiter are required")
	}
	if cfg.DailyCap == 0 {
		cfg.DailyCap = DefaultDailyCap
	}
	if cfg.DailyCap < 1 || cfg.DailyCap > MaxDailyCap {
		return nil, fmt.Errorf("policy: Config.DailyCap %d must be between 1 and %d", cfg.DailyCap, MaxDailyCap)
	}
	return &Engine{cfg: cfg}, nil
}

// Check decides whether job may be sent at now, with the preferences in
// pre when it holds the user's (Prefetch) and read from the Source
// otherwise; a delivery whose cap pre counted gets the decision taken
// then. An error means the policy could not be evaluated: the caller must
// not send (fail-closed, S1.3).
func (e *Engine) Check(ctx context.Context, job *heraldtype.Job, now time.Time, pre *Prefetched) (Decision, error) {
	if d, ok := pre.decision(job.Delivery.ID); ok {
		return d, nil
	}
	n := job.Notification
	if n == nil {
		return Decision{}, errors.New("policy: the job has no notification")
	}
	prefs, ok := pre.preferences(n.UserID)
	if !ok {
		var err error
		if prefs, err = e.cfg.Source.GetPreferences(ctx, n.UserID); err != nil {
			return Decision{}, fmt.Errorf("policy: preferences of user %q: %w", n.UserID, err)
		}
	}
	s, d, done, err := e.screen(ctx, job, prefs, now)
	if err != nil || done {
		return d, err
	}
	if n.DedupeKey != "" && !n.Source.IsTest() {
		if d, ok, err := e.dedupe(ctx, &s, now); err != nil || !ok {
			return d, err
		}
	}
	if c, capped := e.dailyCount(&s, now); capped {
		ok, err := e.cfg.Limiter.CountDaily(ctx, c.UserID, c.Day, c.Owner, c.Limit, c.ExpireAt)
		if err != nil {
			return Decision{}, fmt.Errorf("policy: daily cap: %w", err)
		}
		if !ok {
			return capReached(c, s.loc), nil
		}
	}
	return Decision{Verdict: Allow}, nil
}

// subject is what the steps of the policy know about one delivery once
// its type and its user's preferences and time zone are resolved.
type subject struct {
	n     *heraldtype.Notification
	t     heraldtype.NotificationType
	prefs heraldtype.Preferences
	loc   *time.Location
}

// screen runs the steps that consume nothing — the type, the preferences,
// quiet hours — and reports whether they decided (done, with d). An in_app
// delivery is decided by its preferences alone.
func (e *Engine) screen(ctx context.Context, job *heraldtype.Job, prefs heraldtype.Preferences, now time.Time) (s subject, d Decision, done bool, err error) {
	n := job.Notification
	t, err := e.cfg.Types.Type(ctx, n.Type)
	if err != nil {
		return s, Decision{}, true, fmt.Errorf("policy: type %q: %w", n.Type, err)
	}
	if d, done := Preferences(t, prefs, job.Delivery.Channel); done || job.Delivery.Channel == heraldtype.ChannelInApp {
		return s, d, true, nil
	}
	loc, err := e.location(prefs.Timezone)
	if err != nil {
		return s, Decision{}, true, err
	}
	if t.QuietHours && !t.Critical && !n.Source.IsTest() && prefs.QuietHours != nil {
		w, err := ParseQuietHours(*prefs.QuietHours)
		if err != nil {
			return s, Decision{}, true, fmt.Errorf("policy: quiet hours of user %q: %w", n.UserID, err)
		}
		if until, in := w.Until(now, loc); in {
			return s, Decision{Verdict: Defer, Code: CodeQuietHours, Until: until,
				Reason: fmt.Sprintf("quiet hours %s-%s (%s)", w.Start, w.End, loc)}, true, nil
		}
	}
	return subject{n: n, t: t, prefs: prefs, loc: loc}, Decision{}, false, nil
}

// dedupe is step 3 for s, whose notification has a dedupe key: ok when
// it holds the lock, else the duplicate decision.
func (e *Engine) dedupe(ctx context.Context, s *subject, now time.Time) (Decision, bool, error) {
	l := dedupeLock(s)
	ok, err := e.cfg.Limiter.AcquireDedupe(ctx, l.Key, l.Owner, l.Window, now)
	if err != nil {
		return Decision{}, false, fmt.Errorf("policy: de-duplication: %w", err)
	}
	if !ok {
		return duplicate(s), false, nil
	}
	return Decision{}, true, nil
}

// dedupeLock is the dedupe lock s's notification takes.
func dedupeLock(s *subject) heraldtype.DedupeLock {
	n := s.n
	window := s.t.DedupeWindow
	if window <= 0 {
		window = DefaultDedupeWindow
	}
	return heraldtype.DedupeLock{Key: DedupeKey(n.UserID, n.Type, n.DedupeKey), Owner: n.ID, Window: window}
}

// duplicate is the decision on s when another notification holds its
// dedupe lock.
func duplicate(s *subject) Decision {
	l := dedupeLock(s)
	return Decision{Verdict: Block, State: heraldtype.StateRateLimited, Code: CodeDuplicate,
		Reason: fmt.Sprintf("a %s notification with dedupe key %q was already sent within %s", s.n.Type, s.n.DedupeKey, l.Window)}
}

// dailyCount is the count of step 4 for s at now, and whether the cap
// applies to it at all.
func (e *Engine) dailyCount(s *subject, now time.Time) (heraldtype.DailyCount, bool) {
	if !s.t.CountsTowardCapFor(s.n.Source) {
		return heraldtype.DailyCount{}, false
	}
	limit := e.cfg.DailyCap
	if s.prefs.DailyCap > 0 {
		limit = s.prefs.DailyCap
	}
	day, midnight := LocalDay(now, s.loc)
	// The count outlives the day by an hour, so instances whose clocks
	// differ slightly still see it.
	return heraldtype.DailyCount{UserID: s.n.UserID, Day: day, Owner: s.n.ID, Limit: limit,
		ExpireAt: midnight.Add(time.Hour)}, true
}

// capReached is the decision on a delivery the count c refused.
func capReached(c heraldtype.DailyCount, loc *time.Location) Decision {
	return Decision{Verdict: Block, State: heraldtype.StateRateLimited, Code: CodeDailyCap,
		Reason: fmt.Sprintf("the daily cap of %d notifications on %s (%s) is reached", c.Limit, c.Day, loc)}
}

// Preferences is step 1 of the policy, pure: it reports the opt-out
// decision and true when the user's preferences refuse a delivery of type
// t on channel ch (heraldtype.Preferences.Refusal). A critical type is
// never refused (issue 22).
func Preferences(t heraldtype.NotificationType, p heraldtype.Preferences, ch heraldtype.Channel) (Decision, bool) {
	if ch == "" {
		ch = heraldtype.ChannelPush
	}
	if t.Critical {
		return Decision{}, false
	}
	code := p.Refusal(t.Name, ch)
	if code == "" {
		return Decision{}, false
	}
	return Decision{Verdict: Block, State: heraldtype.StateOptedOut, Code: code,
		Reason: heraldtype.RefusalReason(code, t.Name, ch)}, true
}

// DedupeKey is the Limiter key of user × type × dedupe key. The unit
// separator cannot occur in a user id, a type or a validated dedupe key,
// so two triples never share a key.
func DedupeKey(userID, typ, key string) string {
	return userID + "\x1f" + typ + "\x1f" + key
}

// location loads (and caches) a time zone; an empty name is UTC.
func (e *Engine) location(name string) (*time.Location, error) {
	if v, ok := e.zones.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("policy: time zone %q: %w", name, err)
	}
	e.zones.Store(name, loc)
	return loc, nil
}
