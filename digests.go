package herald

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/digest"
	"github.com/heraldhq/herald/internal/message"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/store"
)

// DigestConfig is a type's digest (TypeConfig.Digest): its triggers for
// one user and one key within Window become one notification rendered
// from Title and Body over the items (docs/digests.md).
type DigestConfig struct {
	// Window is how long a digest collects after its first trigger, as a
	// Go duration ("10m"), 1s to 7 days. Required.
	Window string `json:"window" koanf:"window"`
	// Key is a template over the trigger's data that names the digest a
	// trigger joins ({{.post_id}}); empty: one digest per user and type.
	Key string `json:"key,omitempty" koanf:"key"`
	// MaxItems sends a digest as soon as it holds this many triggers.
	// Default (and at most) limits.max_digest_items.
	MaxItems int `json:"max_items,omitempty" koanf:"max_items"`
	// First is "collect" (default: the first trigger waits with the rest)
	// or "immediate" (the first is sent at once; the digest collects the
	// rest of the window).
	First string `json:"first,omitempty" koanf:"first"`
	// Title and Body are the templates of the digest's notification; they
	// see .Count, .Items (each .Title, .Body, .Data, .CreatedAt), .Key and
	// the first trigger's .Title, .Body and .Data. One of them is required.
	Title string `json:"title,omitempty" koanf:"title"`
	Body  string `json:"body,omitempty" koanf:"body"`
}

// resolve validates the digest of type name.
func (dc *DigestConfig) resolve(lim Limits, tl tmpl.Limits) (*heraldtype.Digest, error) {
	if dc == nil {
		return nil, nil
	}
	d := &heraldtype.Digest{Key: dc.Key, MaxItems: dc.MaxItems, First: dc.First, Title: dc.Title, Body: dc.Body}
	if dc.Window != "" {
		w, err := time.ParseDuration(dc.Window)
		if err != nil {
			return nil, heraldtype.FieldErrorf("digest.window", "%q is not a duration such as 10m", dc.Window)
		}
		d.Window = w
	}
	if err := digest.Normalize(d, lim.MaxDigestItems, tl); err != nil {
		return nil, err
	}
	return d, nil
}

// digestView is a type's digest as the API shows it.
func digestView(d *heraldtype.Digest) *DigestConfig {
	if d == nil {
		return nil
	}
	return &DigestConfig{Window: d.Window.String(), Key: d.Key, MaxItems: d.MaxItems, First: d.First, Title: d.Title, Body: d.Body}
}

// DigestWorkerConfig tunes the digest worker every instance runs; zero
// values take the defaults documented on each field.
type DigestWorkerConfig struct {
	// PollInterval is how often an idle worker looks for digests whose
	// window ended. Default 1 s.
	PollInterval time.Duration
	// BatchSize is how many due digests one claim takes. Default 100.
	BatchSize int
	// Lease is how long a worker holds the digests it claimed: one that
	// dies before sending leaves them to another after it. Default 30 s.
	Lease time.Duration
	// Disabled runs no digest worker on this instance (the others send).
	Disabled bool
}

// digestParams are the digest parameters of a trigger to users: none for
// a critical type (it bypasses digests) or a trigger scheduled for later
// (send_at, which a digest would move). A recipient who chose a digest
// schedule for the type (issue 36 item 2; TypePreference.Digest) joins
// their scheduled digest, closed at the schedule's next time in their time
// zone; the others join the type's digest when it declares one, and are
// plain notifications when it does not. The preferences are read here,
// once per trigger, with one query for all its recipients.
func (c *Client) digestParams(ctx context.Context, r *Request, d *heraldtype.Digest, critical bool, users []string,
	now time.Time) (*store.DigestParams, error) {
	if critical || (r.SendAt != nil && r.SendAt.After(now)) {
		return nil, nil
	}
	scheduled, err := c.digestSchedules(ctx, r.Type, users, now)
	if err != nil {
		return nil, err
	}
	if d == nil {
		if len(scheduled) == 0 {
			return nil, nil
		}
		return &store.DigestParams{MaxItems: c.cfg.Limits.MaxDigestItems, Scheduled: scheduled, ScheduledOnly: true,
			NewID: func() string { return newID(now) }}, nil
	}
	key, err := digest.Key(ctx, r.Type, *d, r.Data, c.templateLimits())
	if err != nil {
		return nil, err
	}
	return &store.DigestParams{Key: key, Window: d.Window, MaxItems: d.MaxItems, Scheduled: scheduled,
		Immediate: d.First == heraldtype.DigestFirstImmediate, NewID: func() string { return newID(now) }}, nil
}

// digestSchedules maps the users who chose a digest schedule for typ to
// the schedule's next time after now in their zone. A type no user
// scheduled (scheduledTypes) reads nothing; for one some user did, the
// recipients' preferences are read in one query. A schedule that cannot be
// evaluated (a zone the server's tz database lost) is logged and passed
// over: the trigger is not refused for it.
func (c *Client) digestSchedules(ctx context.Context, typ string, users []string, now time.Time) (map[string]time.Time, error) {
	if some, err := c.scheduledTypes.has(ctx, typ); err != nil || !some {
		return nil, err
	}
	prefs, err := c.store.GetPreferencesMany(ctx, users)
	if err != nil {
		return nil, err
	}
	var out map[string]time.Time
	for user, p := range prefs {
		s := p.Types[typ].Digest
		if s == nil {
			continue
		}
		at, err := digest.NextScheduled(*s, p.Timezone, now)
		if err != nil {
			c.log.Warn("herald: a user's digest schedule cannot be evaluated; the trigger is not digested for them",
				"user_id", user, "type", typ, "err", err)
			continue
		}
		if out == nil {
			out = map[string]time.Time{}
		}
		out[user] = at
	}
	return out, nil
}

// scheduledTypeTTL bounds how long a digest schedule set on another
// instance, for a type no user had scheduled before, goes unseen by this
// instance's triggers (as types themselves: policy.Catalog).
const scheduledTypeTTL = 2 * time.Second

// scheduledTypes caches the store's DigestScheduleTypes, so that a trigger
// of a type no user chose a digest schedule for reads no preferences
// (issue 36 item 2). It is read again scheduledTypeTTL after the last
// read; a preference write on this instance adds its types at once (add).
// The types only grow between reads, as the store's list does.
type scheduledTypes struct {
	load func(ctx context.Context) ([]string, error)

	mu      sync.Mutex
	types   map[string]struct{}
	expires time.Time
}

// has reports whether some user may have a digest schedule for typ.
func (s *scheduledTypes) has(ctx context.Context, typ string) (bool, error) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.types == nil || !now.Before(s.expires) {
		// Under the lock: triggers arriving meanwhile wait for this one
		// read rather than each making its own.
		list, err := s.load(ctx)
		if err != nil {
			return false, err
		}
		s.types = make(map[string]struct{}, len(list))
		for _, t := range list {
			s.types[t] = struct{}{}
		}
		s.expires = now.Add(scheduledTypeTTL)
	}
	_, ok := s.types[typ]
	return ok, nil
}

// add records types a preference write on this instance just scheduled.
func (s *scheduledTypes) add(types []string) {
	if len(types) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.types == nil {
		return // the first read will list them
	}
	for _, t := range types {
		s.types[t] = struct{}{}
	}
}

// newDigests builds this instance's digest worker, unless it runs no
// workers.
func (c *Client) newDigests(cfg Config) error {
	if cfg.DisableWorkers || cfg.Digests.Disabled {
		return nil
	}
	w, err := digest.New(digest.Config{Store: cfg.Store, Build: c.buildDigest, Owner: cfg.Owner,
		PollInterval: cfg.Digests.PollInterval, BatchSize: cfg.Digests.BatchSize, Lease: cfg.Digests.Lease,
		Now: c.now, Logger: c.Logger(ComponentDigests),
		Fired:   c.wakeAfterFire,
		Outcome: func(outcome string) { c.metrics.Digests.WithLabelValues(outcome).Inc() }})
	if err != nil {
		return fmt.Errorf("herald: Digests: %w", err)
	}
	c.digests = w
	return nil
}

// wakeAfterFire is the digest and escalation workers' Fired: the
// notification a fire committed is due at once, so this instance's
// delivery worker is woken and its inbox items are published.
func (c *Client) wakeAfterFire(res store.EnqueueResult) {
	if c.worker != nil {
		c.worker.Notify()
	}
	for _, it := range res.Inbox {
		c.hub.Publish(it.UserID)
	}
}

// buildDigest makes a claimed digest's notification: the type's digest
// templates rendered over its items, to the channels and with the
// priority of its first item, its source naming the digest and its count,
// its idempotency key digest:{id} (so a fire repeated after a crash finds
// the first one's notification).
func (c *Client) buildDigest(ctx context.Context, cd store.ClaimedDigest) (*store.EnqueueParams, error) {
	if len(cd.Entries) == 0 {
		return nil, nil
	}
	t, err := c.types.Type(ctx, cd.Type)
	if err != nil {
		return nil, err
	}
	title, body, err := c.renderDigest(ctx, cd.UserID, t.Digest, digest.NewView(cd))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var re *renderStoreError
		if errors.As(err, &re) {
			return nil, re.err
		}
		if limit, ok := tmpl.OverBudget(err); ok {
			c.metrics.TemplateOverBudget.WithLabelValues("digest", limit).Inc()
		}
		return nil, &digest.Failure{Reason: "render_failed: " + err.Error()}
	}
	first := cd.Entries[0]
	now := c.now().UTC()
	channels := first.Channels
	if len(channels) == 0 {
		channels = t.Channels
	}
	key := store.DigestIdempotencyKey(cd.ID)
	sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(len(cd.Entries))))
	n := heraldtype.Notification{ID: newID(now), UserID: cd.UserID, Type: cd.Type, Title: title, Body: body,
		Data: first.Data, Channels: channels, Priority: cmp.Or(first.Priority, t.Priority, heraldtype.PriorityNormal),
		PayloadMode: heraldtype.PayloadAlert, Guarantee: t.Guarantee, IdempotencyKey: key, CreatedAt: now,
		Source: &heraldtype.Source{Kind: heraldtype.SourceDigest, ID: cd.ID, Name: cd.Key, Count: len(cd.Entries)}}
	return &store.EnqueueParams{IdempotencyKey: key, IdempotencyNamespace: store.DigestNamespace,
		RequestHash: hex.EncodeToString(sum[:]), Notifications: []heraldtype.Notification{n},
		MaxAttempts: c.cfg.MaxAttempts, PushProviders: c.cfg.PushRouting, ChannelProviders: c.cfg.ChannelRouting, Now: now}, nil
}

// renderDigest renders a digest's message with the type's digest
// templates, or, for a type that declares none (a digest a user's
// schedule made, issue 36 item 2), digest.DefaultMessage.
func (c *Client) renderDigest(ctx context.Context, userID string, d *heraldtype.Digest, v digest.View) (string, string, error) {
	if d == nil {
		title, body := digest.DefaultMessage(v, MaxTitleLength, MaxBodyLength)
		return title, body, nil
	}
	// The digest's templates format numbers, plurals and dates for its
	// user (issue 37): their locale and zone.
	var r message.Recipient
	u, err := c.store.GetUser(ctx, userID)
	switch {
	case err == nil:
		r = message.Recipient{Locale: u.Locale, Zone: userZone(u.Timezone)}
	case heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND:
		return "", "", &renderStoreError{err}
	}
	return digest.Render(ctx, *d, v, r, c.templateLimits(), MaxTitleLength, MaxBodyLength)
}

// Digest is one digest with its items (GET /v1/digests/{id}).
type Digest struct {
	heraldtype.DigestInfo
	// Entries are the triggers it holds, in order.
	Entries []heraldtype.DigestItem `json:"entries"`
}

// GetDigest returns one digest: whose, its key, its state, its window,
// its notification once sent, and the triggers it holds.
func (c *Client) GetDigest(ctx context.Context, id string) (Digest, error) {
	if err := validID("id", id); err != nil {
		return Digest{}, err
	}
	info, err := c.store.GetDigest(ctx, id)
	if err != nil {
		return Digest{}, err
	}
	items, err := c.store.ListDigestItems(ctx, id)
	if err != nil {
		return Digest{}, err
	}
	d := Digest{DigestInfo: info, Entries: make([]heraldtype.DigestItem, len(items))}
	for i, it := range items {
		d.Entries[i] = it.View()
	}
	return d, nil
}

// DigestFilter selects a page of digests (ListDigests).
type DigestFilter = heraldtype.DigestFilter

// DigestPage is a page of digests, newest first.
type DigestPage = heraldtype.DigestPage

// ListDigests returns a page of digests, newest first: by user, type and
// state (open, closed, sent, failed), each without its items (GetDigest
// has them).
func (c *Client) ListDigests(ctx context.Context, f DigestFilter) (DigestPage, error) {
	if f.UserID != "" {
		if err := validID("user_id", f.UserID); err != nil {
			return DigestPage{}, err
		}
	}
	if f.Type != "" {
		if err := validTypeName(f.Type); err != nil {
			return DigestPage{}, err
		}
	}
	ds, next, err := c.store.ListDigests(ctx, f)
	if err != nil {
		return DigestPage{}, err
	}
	if ds == nil {
		ds = []heraldtype.DigestInfo{}
	}
	return DigestPage{Digests: ds, NextCursor: next}, nil
}

// runDigestsOnce runs one synchronous digest worker cycle (tests with an
// injected clock).
func (c *Client) runDigestsOnce(ctx context.Context) (int, error) {
	if c.digests == nil {
		return 0, errors.New("herald: the digest worker is disabled")
	}
	return c.digests.RunOnce(ctx)
}

// renderStoreError is a digest's render that could not read its user: the
// store's fault, not the template's, so the digest is tried again rather
// than failed.
type renderStoreError struct{ err error }

func (e *renderStoreError) Error() string { return e.err.Error() }
func (e *renderStoreError) Unwrap() error { return e.err }
