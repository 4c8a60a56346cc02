package herald

import (
	"context"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/tmpl"
)

// TypeConfig declares a notification type: in the configuration file
// (types:) and as the body of PUT /v1/types/{type}. Zero values take the
// defaults documented on each field; a type nobody declared gets all of
// them (unknown types are accepted).
type TypeConfig struct {
	// Channels a trigger of this type uses when it names none. Default
	// push.
	Channels []heraldtype.Channel `json:"channels,omitempty"`
	// Priority when a trigger names none. Default NORMAL.
	Priority heraldtype.Priority `json:"priority,omitempty"`
	// DedupeWindow is how long a trigger's dedupe_key blocks another
	// notification of this type with the same key to the same user, as a
	// Go duration ("1h", "30m"). Default 1h (S3.8).
	DedupeWindow string `json:"dedupe_window,omitempty"`
	// QuietHours defers the type's deliveries inside a user's quiet hours.
	// Default true.
	QuietHours *bool `json:"quiet_hours,omitempty"`
	// CountsTowardCap counts the type toward the user's daily cap and
	// blocks it beyond (true), or never (false). Unset (the default), the
	// notifications that rules and campaigns produce count and those of
	// triggers do not: Herald cannot tell a triggered marketing nudge from
	// a password reset, but a fan-out to an audience is what the cap is
	// for (issue 30 item 5).
	CountsTowardCap *bool `json:"counts_toward_cap,omitempty"`
	// Guarantee is at_least_once (default) or at_most_once.
	Guarantee heraldtype.Guarantee `json:"guarantee,omitempty"`
	// Critical (account, security, reservation notices: what the user is
	// guaranteed to see, S4.5) bypasses the user's opt-outs on every
	// channel, the inbox included, quiet hours and the daily cap — never
	// de-duplication (issue 22).
	Critical bool `json:"critical,omitempty"`
	// Transactional (a receipt, a password reset) e-mails carry no
	// one-click unsubscribe link; every other type's do (RFC 8058).
	// Default false.
	Transactional bool `json:"transactional,omitempty"`
	// EmailTracking gives the type's HTML e-mails an open pixel and
	// click-tracked links (EmailTrackingConfig), each recorded on the
	// delivery's timeline as an opened or clicked receipt. Opt-in: default
	// false, for every type, critical and transactional ones included; it
	// needs the server's tracking secret.
	EmailTracking bool `json:"email_tracking,omitempty"`
	// Digest gathers the type's triggers for one user and key within a
	// window into one notification (DigestConfig). A critical type never
	// digests; a trigger scheduled for later (send_at) is not digested.
	Digest *DigestConfig `json:"digest,omitempty"`
	// Escalate sends the type's notifications again on other channels,
	// step by step, when nobody reacted in time (EscalationStepConfig).
	// At most limits.max_escalation_steps steps.
	Escalate []EscalationStepConfig `json:"escalate,omitempty"`
}

// NotificationType is a type's effective configuration
// (GET /v1/types/{type}).
type NotificationType struct {
	Name         string               `json:"name"`
	Channels     []heraldtype.Channel `json:"channels"`
	Priority     heraldtype.Priority  `json:"priority"`
	DedupeWindow string               `json:"dedupe_window"`
	QuietHours   bool                 `json:"quiet_hours"`
	// CountsTowardCap is true or false as declared, and null when the type
	// does not say: then rules' and campaigns' notifications count toward
	// the daily cap and triggers' do not.
	CountsTowardCap *bool                `json:"counts_toward_cap"`
	Guarantee       heraldtype.Guarantee `json:"guarantee"`
	Critical        bool                 `json:"critical"`
	Transactional   bool                 `json:"transactional"`
	EmailTracking   bool                 `json:"email_tracking"`
	// Digest is the type's digest, null when it has none.
	Digest *DigestConfig `json:"digest"`
	// Escalate is the type's escalation, empty when it has none.
	Escalate []EscalationStepConfig `json:"escalate"`
	// Source says where the configuration comes from: "api" (PUT
	// /v1/types), "config" (the configuration file) or "default" (not
	// declared).
	Source    string    `json:"source"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Type sources.
const (
	TypeSourceAPI     = "api"
	TypeSourceConfig  = "config"
	TypeSourceDefault = "default"
)

// resolve validates tc and returns the type it declares.
func (tc TypeConfig) resolve(name string, lim Limits, tl tmpl.Limits) (heraldtype.NotificationType, error) {
	t := heraldtype.NotificationType{Name: name, Channels: tc.Channels, Priority: tc.Priority, QuietHours: true,
		CountsTowardCap: tc.CountsTowardCap, Guarantee: tc.Guarantee, Critical: tc.Critical,
		Transactional: tc.Transactional, EmailTracking: tc.EmailTracking}
	if tc.QuietHours != nil {
		t.QuietHours = *tc.QuietHours
	}
	if tc.DedupeWindow != "" {
		d, err := time.ParseDuration(tc.DedupeWindow)
		if err != nil {
			return t, heraldtype.FieldErrorf("dedupe_window", "%q is not a duration such as 1h or 30m", tc.DedupeWindow)
		}
		t.DedupeWindow = d
	}
	d, err := tc.Digest.resolve(lim, tl)
	if err != nil {
		return t, err
	}
	t.Digest = d
	if t.Escalate, err = resolveEscalation(tc.Escalate, lim); err != nil {
		return t, err
	}
	t.Priority = heraldtype.Priority(strings.ToUpper(string(t.Priority)))
	if err := policy.NormalizeType(&t); err != nil {
		return t, err
	}
	return t, nil
}

func validTypeName(name string) error {
	if name == "" || len(name) > MaxTypeLength || !typePattern.MatchString(name) {
		return heraldtype.FieldErrorf("type", "must be 1-%d characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit", MaxTypeLength)
	}
	return nil
}

// PutType declares (or redeclares) a notification type in the store; it
// takes precedence over the configuration file's declaration of the same
// name, on every instance. A channel the type defaults to must be
// available when a trigger uses it.
func (c *Client) PutType(ctx context.Context, name string, tc TypeConfig) (NotificationType, error) {
	if err := validTypeName(name); err != nil {
		return NotificationType{}, err
	}
	t, err := tc.resolve(name, c.cfg.Limits, c.templateLimits())
	if err != nil {
		return NotificationType{}, err
	}
	if err := c.checkEmailTracking(t); err != nil {
		return NotificationType{}, err
	}
	t, err = c.store.PutType(ctx, t, c.now().UTC())
	if err != nil {
		return NotificationType{}, err
	}
	c.types.Forget(name)
	c.metrics.DeclareTypes(name)
	return typeView(t, TypeSourceAPI), nil
}

// GetType returns a type's effective configuration; an undeclared type
// answers with the defaults (source "default").
func (c *Client) GetType(ctx context.Context, name string) (NotificationType, error) {
	if err := validTypeName(name); err != nil {
		return NotificationType{}, err
	}
	t, err := c.store.GetType(ctx, name)
	if err == nil {
		return typeView(t, TypeSourceAPI), nil
	}
	if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		return NotificationType{}, err
	}
	t, err = c.types.Declared(ctx, name)
	if err == nil {
		return typeView(t, TypeSourceConfig), nil
	}
	if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		return NotificationType{}, err
	}
	return typeView(policy.DefaultType(name), TypeSourceDefault), nil
}

// ListTypes returns every declared type (through the API or the
// configuration file) ordered by name.
func (c *Client) ListTypes(ctx context.Context) ([]NotificationType, error) {
	stored, err := c.store.ListTypes(ctx)
	if err != nil {
		return nil, err
	}
	fromAPI := make(map[string]bool, len(stored))
	for _, t := range stored {
		fromAPI[t.Name] = true
	}
	all, err := c.types.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]NotificationType, len(all))
	for i, t := range all {
		src := TypeSourceConfig
		if fromAPI[t.Name] {
			src = TypeSourceAPI
		}
		out[i] = typeView(t, src)
	}
	return out, nil
}

func typeView(t heraldtype.NotificationType, source string) NotificationType {
	ch := t.Channels
	if len(ch) == 0 {
		ch = []heraldtype.Channel{heraldtype.ChannelPush}
	}
	return NotificationType{Name: t.Name, Channels: ch, Priority: t.Priority, DedupeWindow: t.DedupeWindow.String(),
		QuietHours: t.QuietHours, CountsTowardCap: t.CountsTowardCap, Guarantee: t.Guarantee, Critical: t.Critical,
		Transactional: t.Transactional, EmailTracking: t.EmailTracking, Digest: digestView(t.Digest),
		Escalate: escalationView(t.Escalate), Source: source,
		UpdatedAt: t.UpdatedAt}
}
