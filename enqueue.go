package herald

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Request is a trigger: one notification for one user (UserID) or the same
// notification for up to MaxRecipients users (UserIDs). It is also the JSON
// body of POST /v1/notifications.
//
// Channels nil or empty means not given — Go does not tell the two apart —
// so both get the type's channels, push by default. Over JSON, where an
// absent field and [] differ, an explicit "channels": [] is refused with a
// 400 on channels instead of becoming push (httpapi; issue 22 item 5).
type Request struct {
	// IdempotencyKey makes the trigger safe to retry: the same key with the
	// same request returns the original notifications; the same key with a
	// different request is a conflict. The HTTP API also takes it from the
	// Idempotency-Key header.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// IdempotencyNamespace scopes IdempotencyKey to its caller (issue 23):
	// a key is looked up, replayed and taken only among triggers of the
	// same namespace, so callers sharing one Herald cannot learn of,
	// replay or block each other's keys. The HTTP API sets it to the
	// calling API key's id and never reads it from the body. Empty (the
	// default) is one namespace, also that of records written before
	// namespaces existed; a program with one caller leaves it empty.
	IdempotencyNamespace string               `json:"-"`
	UserID               string               `json:"user_id,omitempty"`
	UserIDs              []string             `json:"user_ids,omitempty"`
	Type                 string               `json:"type"`
	Title                string               `json:"title,omitempty"`
	Body                 string               `json:"body,omitempty"`
	Data                 map[string]string    `json:"data,omitempty"`
	Channels             []heraldtype.Channel `json:"channels,omitempty"`
	Priority             heraldtype.Priority  `json:"priority,omitempty"`
	// SendAt delays the first attempt; nil or past means now.
	SendAt *time.Time `json:"send_at,omitempty"`
	// DataOnly sends a data-only message the app renders itself (S1.4):
	// title and body travel in data, iOS gets a background push.
	DataOnly bool `json:"data_only,omitempty"`
	// DedupeKey de-duplicates: a second notification of the same type with
	// the same key to the same user within the type's window (default 1 h)
	// is not sent; it is recorded rate_limited with code duplicate (S1.2,
	// S3.8). For example a product id for price-drop alerts.
	DedupeKey string `json:"dedupe_key,omitempty"`
	// CancellationKey names the notifications for a later cancel
	// (Client.Cancel): every delivery of them not yet sent can be
	// cancelled by the key, for one user or for all. For example an order
	// id for a "your cart is waiting" nudge.
	CancellationKey string `json:"cancellation_key,omitempty"`
}

// Result is what a trigger produced.
type Result struct {
	// Notifications, one per recipient, in the order of the request.
	Notifications []EnqueuedNotification `json:"notifications"`
	// Replayed is true when the idempotency key matched an earlier trigger:
	// nothing new was written and these are the original notifications.
	Replayed bool `json:"replayed"`
}

// EnqueuedNotification is one notification of a Result.
type EnqueuedNotification struct {
	ID         string `json:"id"`
	UserID     string `json:"user_id"`
	Deliveries int    `json:"deliveries"`
	// Digest is the id of the digest this trigger joined, when its type
	// is a digest: it is an item of that digest (its id names the item),
	// sent with the others as one notification when the digest closes.
	Digest string `json:"digest,omitempty"`
}

// reservedDataKeys are data keys Herald or FCM own: messageId carries the
// delivery's idempotency key (S0.5); FCM rejects "from" and the google./gcm.
// prefixes.
var reservedDataKeys = []string{"messageId", "from", "message_type", "collapse_key", "notification"}

// Enqueue validates r and records its notifications and deliveries in one
// transaction; when it returns without error they are durable and the
// workers have been woken (S4.1). Errors are *heraldtype.Error with a
// stable code.
func (c *Client) Enqueue(ctx context.Context, r Request) (out Result, err error) {
	if c.tracer != nil {
		var span trace.Span
		ctx, span = c.startEnqueue(ctx, "herald.enqueue", &r)
		defer func() { endEnqueue(span, out, err) }()
	}
	p, err := c.prepare(ctx, &r)
	if err != nil {
		return Result{}, err
	}
	if c.tracer != nil {
		stampTrace(ctx, &p)
	}
	res, err := c.store.Enqueue(ctx, p)
	if err != nil {
		return Result{}, err
	}
	return c.enqueued(r.Type, res, true), nil
}

// EnqueueTx is Enqueue inside the caller's own database transaction, the
// transactional outbox of S4.1: the notification exists if and only if tx
// commits, together with the business change that caused it. tx is a
// *sql.Tx on SQLite (begun on the store's database); a pgx.Tx or a *sql.Tx
// (pgx stdlib) on PostgreSQL. Herald never commits or rolls it back.
//
// Workers cannot be woken before the commit, so on SQLite the delivery
// starts at the next poll (1 s by default); on PostgreSQL the commit
// itself wakes every instance (NOTIFY).
func (c *Client) EnqueueTx(ctx context.Context, tx any, r Request) (out Result, err error) {
	if tx == nil {
		return Result{}, heraldtype.Errorf(heraldtype.EINVALID, "EnqueueTx needs an open transaction")
	}
	if c.tracer != nil {
		var span trace.Span
		ctx, span = c.startEnqueue(ctx, "herald.enqueue_tx", &r)
		defer func() { endEnqueue(span, out, err) }()
	}
	p, err := c.prepare(ctx, &r)
	if err != nil {
		return Result{}, err
	}
	if c.tracer != nil {
		stampTrace(ctx, &p)
	}
	res, err := c.store.EnqueueTx(ctx, tx, p)
	if err != nil {
		return Result{}, err
	}
	return c.enqueued(r.Type, res, false), nil
}

// prepare validates r and builds the store's parameters. The type's
// declared channels and priority fill in what the request leaves out,
// before the request is fingerprinted, so a retry hashes the same unless
// the type's defaults changed in between.
func (c *Client) prepare(ctx context.Context, r *Request) (store.EnqueueParams, error) {
	now := c.now().UTC()
	if err := validDedupeKey(r.DedupeKey); err != nil {
		return store.EnqueueParams{}, err
	}
	if err := validCancellationKey(r.CancellationKey); err != nil {
		return store.EnqueueParams{}, err
	}
	guarantee, critical := heraldtype.AtLeastOnce, false
	var digestOf *heraldtype.Digest
	var escalate []heraldtype.EscalationStep
	if validTypeName(r.Type) == nil {
		t, err := c.types.Type(ctx, r.Type)
		if err != nil {
			return store.EnqueueParams{}, err
		}
		if len(r.Channels) == 0 {
			r.Channels = slices.Clone(t.Channels)
		}
		if r.Priority == "" {
			r.Priority = t.Priority
		}
		guarantee, critical = t.Guarantee, t.Critical
		digestOf = t.Digest
		escalate = t.Escalate
	}
	// A trigger without a title or a body, of a type with templates, is
	// rendered from them (templaterender.go).
	var templates *heraldtype.TemplateVersion
	if r.Title == "" && r.Body == "" && !r.DataOnly && validTypeName(r.Type) == nil {
		var err error
		if templates, err = c.latestTemplates(ctx, r.Type); err != nil {
			return store.EnqueueParams{}, err
		}
	}
	users, err := c.normalize(r, now, templates != nil)
	if err != nil {
		return store.EnqueueParams{}, err
	}
	hash, err := requestHash(r)
	if err != nil {
		return store.EnqueueParams{}, err
	}
	mode := heraldtype.PayloadAlert
	if r.DataOnly {
		mode = heraldtype.PayloadData
	}
	var sendAt time.Time
	if r.SendAt != nil {
		sendAt = r.SendAt.UTC()
	}
	p := store.EnqueueParams{
		IdempotencyKey:       r.IdempotencyKey,
		IdempotencyNamespace: r.IdempotencyNamespace,
		RequestHash:          hash,
		MaxAttempts:          c.cfg.MaxAttempts,
		PushProviders:        c.cfg.PushRouting,
		ChannelProviders:     c.cfg.ChannelRouting,
		Now:                  now,
		Notifications:        make([]heraldtype.Notification, len(users)),
	}
	for i, u := range users {
		p.Notifications[i] = heraldtype.Notification{
			ID: newID(now), UserID: u, Type: r.Type, Title: r.Title, Body: r.Body,
			Data: r.Data, Channels: r.Channels, Priority: r.Priority, PayloadMode: mode,
			Guarantee: guarantee, IdempotencyKey: r.IdempotencyKey, SendAt: sendAt, CreatedAt: now,
			DedupeKey: r.DedupeKey, CancellationKey: r.CancellationKey, Critical: critical,
		}
	}
	if templates != nil {
		if err := c.renderAtEnqueue(ctx, templates, p.Notifications); err != nil {
			return store.EnqueueParams{}, err
		}
	}
	if err := c.validatePayload(&p.Notifications[0], r.Channels); err != nil {
		return store.EnqueueParams{}, err
	}
	if p.Digest, err = c.digestParams(ctx, r, digestOf, critical, users, now); err != nil {
		return store.EnqueueParams{}, err
	}
	// Every notification written gets the type's escalation steps (issue
	// 36 item 3); a digest's items get none, and neither does the
	// digest's notification.
	p.Escalate = escalate
	// After the providers' own limits, so a push payload FCM cannot carry
	// stays payload_too_large.
	if err := c.checkSize(r, len(users)); err != nil {
		return store.EnqueueParams{}, err
	}
	return p, nil
}

// enqueued counts a written trigger and, when it is committed, wakes the
// workers.
func (c *Client) enqueued(typ string, res store.EnqueueResult, committed bool) Result {
	out := Result{Replayed: res.Replayed, Notifications: make([]EnqueuedNotification, len(res.Notifications))}
	deliveries := 0
	for i, n := range res.Notifications {
		out.Notifications[i] = EnqueuedNotification(n)
		deliveries += n.Deliveries
	}
	if !res.Replayed {
		c.metrics.Accepted.WithLabelValues(c.metrics.Type(typ)).Add(float64(len(res.Notifications)))
		if committed && deliveries > 0 && c.worker != nil {
			c.worker.Notify()
		}
		if committed {
			for _, it := range res.Inbox {
				c.hub.Publish(it.UserID)
			}
		}
	}
	return out
}

// normalize validates r, fills defaults in place and returns the
// recipients. A templated request (its type's templates render it) needs
// no title or body.
func (c *Client) normalize(r *Request, now time.Time, templated bool) ([]string, error) {
	if len(r.IdempotencyKey) > MaxKeyLength {
		return nil, heraldtype.FieldErrorf("idempotency_key", "must be at most %d bytes", MaxKeyLength)
	}
	if err := validText("idempotency_key", r.IdempotencyKey, MaxKeyLength); err != nil {
		return nil, err
	}
	if len(r.IdempotencyNamespace) > MaxKeyLength {
		return nil, heraldtype.FieldErrorf("idempotency_namespace", "must be at most %d bytes", MaxKeyLength)
	}
	if err := validText("idempotency_namespace", r.IdempotencyNamespace, MaxKeyLength); err != nil {
		return nil, err
	}
	users, err := recipients(r)
	if err != nil {
		return nil, err
	}
	if r.Type == "" {
		return nil, heraldtype.FieldErrorf("type", "is required")
	}
	if len(r.Type) > MaxTypeLength || !typePattern.MatchString(r.Type) {
		return nil, heraldtype.FieldErrorf("type", "must be 1-%d characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit", MaxTypeLength)
	}
	if err := validText("title", r.Title, MaxTitleLength); err != nil {
		return nil, err
	}
	if err := validText("body", r.Body, MaxBodyLength); err != nil {
		return nil, err
	}
	if r.Title == "" && r.Body == "" && !r.DataOnly && !templated {
		return nil, heraldtype.FieldErrorf("title", "an alert needs a title or a body (or set data_only)")
	}
	if err := validData(r.Data, r.DataOnly); err != nil {
		return nil, err
	}
	if len(r.Channels) == 0 {
		r.Channels = []heraldtype.Channel{heraldtype.ChannelPush}
	}
	seen := map[heraldtype.Channel]bool{}
	for _, ch := range r.Channels {
		if seen[ch] {
			return nil, heraldtype.FieldErrorf("channels", "%q is listed twice", ch)
		}
		seen[ch] = true
		switch ch {
		case heraldtype.ChannelPush:
			if len(c.cfg.PushRouting) == 0 {
				return nil, heraldtype.FieldErrorf("channels", "push is not available: no push provider is configured")
			}
		case heraldtype.ChannelSMS, heraldtype.ChannelEmail:
			if _, ok := c.cfg.ChannelRouting[ch]; !ok {
				return nil, heraldtype.FieldErrorf("channels", "%s is not available: no provider for it is configured", ch)
			}
		case heraldtype.ChannelInApp:
			// The inbox is Herald's own: always available.
		default:
			return nil, heraldtype.FieldErrorf("channels", "unknown channel %q (known: push, sms, email, in_app)", ch)
		}
	}
	if r.Priority == "" {
		r.Priority = heraldtype.PriorityNormal
	}
	r.Priority = heraldtype.Priority(strings.ToUpper(string(r.Priority)))
	if !r.Priority.Valid() {
		return nil, heraldtype.FieldErrorf("priority", "must be LOW, NORMAL or HIGH")
	}
	if r.SendAt != nil {
		// A past send_at means "now"; it is kept as given so that a retried
		// request hashes the same as the original.
		if r.SendAt.After(now.Add(MaxSendAhead)) {
			return nil, heraldtype.FieldErrorf("send_at", "must be within %d days", int(MaxSendAhead.Hours()/24))
		}
	}
	return users, nil
}

func recipients(r *Request) ([]string, error) {
	switch {
	case r.UserID != "" && len(r.UserIDs) > 0:
		return nil, heraldtype.FieldErrorf("user_ids", "give user_id or user_ids, not both")
	case r.UserID != "":
		if err := validID("user_id", r.UserID); err != nil {
			return nil, err
		}
		return []string{r.UserID}, nil
	case len(r.UserIDs) == 0:
		return nil, heraldtype.FieldErrorf("user_id", "is required (or user_ids)")
	case len(r.UserIDs) > MaxRecipients:
		return nil, heraldtype.FieldErrorf("user_ids", "has %d entries; the limit is %d", len(r.UserIDs), MaxRecipients)
	}
	seen := make(map[string]bool, len(r.UserIDs))
	for _, u := range r.UserIDs {
		if err := validID("user_ids", u); err != nil {
			return nil, err
		}
		if seen[u] {
			return nil, heraldtype.FieldErrorf("user_ids", "%q is listed twice", u)
		}
		seen[u] = true
	}
	return slices.Clone(r.UserIDs), nil
}

func validData(data map[string]string, dataOnly bool) error {
	if len(data) > MaxDataEntries {
		return heraldtype.FieldErrorf("data", "has %d entries; the limit is %d", len(data), MaxDataEntries)
	}
	for k, v := range data {
		if k == "" || len(k) > MaxDataKeyLen {
			return heraldtype.FieldErrorf("data", "keys must be 1-%d bytes", MaxDataKeyLen)
		}
		if slices.Contains(reservedDataKeys, k) || strings.HasPrefix(k, "google.") || strings.HasPrefix(k, "gcm.") {
			return heraldtype.FieldErrorf("data", "key %q is reserved", k)
		}
		if dataOnly && (k == "title" || k == "body") {
			return heraldtype.FieldErrorf("data", "key %q is reserved in a data-only message (it carries the title and body)", k)
		}
		if err := validText("data", k+v, 1<<20); err != nil {
			return err
		}
	}
	return nil
}

// checkSize bounds what one trigger writes (Limits): its data on every
// channel, and its content multiplied by its recipients. Validated text is
// measured in bytes, as it is stored.
func (c *Client) checkSize(r *Request, recipients int) error {
	data := 0
	for k, v := range r.Data {
		data += len(k) + len(v)
	}
	if max := c.cfg.Limits.MaxDataBytes; data > max {
		return heraldtype.FieldErrorf("data", "is %d bytes; it exceeds max_data_bytes (%d)", data, max)
	}
	content := len(r.Title) + len(r.Body) + data
	if max := c.cfg.Limits.MaxTriggerBytes; content > 0 && recipients > max/content {
		field := "user_ids"
		if r.UserID != "" {
			field = "user_id"
		}
		return heraldtype.FieldErrorf(field, "%d recipients × %d bytes of title, body and data exceeds max_trigger_bytes (%d); send fewer recipients per trigger",
			recipients, content, max)
	}
	return nil
}

// validatePayload asks every provider the notification's channels may use
// whether it can carry n. All notifications of one trigger share their
// content, so checking one is enough.
func (c *Client) validatePayload(n *heraldtype.Notification, channels []heraldtype.Channel) error {
	var names []string
	for _, ch := range channels {
		switch ch {
		case heraldtype.ChannelPush:
			for _, name := range c.cfg.PushRouting {
				names = append(names, name)
			}
		case heraldtype.ChannelSMS, heraldtype.ChannelEmail:
			names = append(names, c.cfg.ChannelRouting[ch])
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if v, ok := c.cfg.Providers[name].(NotificationValidator); ok {
			if err := v.ValidateNotification(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// requestHash fingerprints a normalised request for idempotency: the same
// key with a different fingerprint is a conflict. encoding/json sorts map
// keys, so the encoding is canonical.
func requestHash(r *Request) (string, error) {
	cp := *r
	cp.IdempotencyKey, cp.IdempotencyNamespace = "", ""
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", heraldtype.Errorf(heraldtype.EINVALID, "request cannot be encoded: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
