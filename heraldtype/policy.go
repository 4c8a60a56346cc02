package heraldtype

import (
	"slices"
	"time"
)

// NotificationType is a declared notification type (S1.1–S1.3, S3.8): how
// its notifications default and which delivery policy applies to them.
// internal/policy documents what each field does at send time.
type NotificationType struct {
	Name string `json:"name"`
	// Channels are used when a trigger names none; empty means push.
	Channels []Channel `json:"channels,omitempty"`
	// Priority is used when a trigger names none; empty means NORMAL.
	Priority Priority `json:"priority,omitempty"`
	// DedupeWindow is how long a dedupe key blocks a repeat (S3.8).
	DedupeWindow time.Duration `json:"dedupe_window"`
	// QuietHours defers the type's deliveries inside the user's quiet
	// hours.
	QuietHours bool `json:"quiet_hours"`
	// CountsTowardCap, when set, says whether the type's notifications
	// count toward the user's daily cap (and are blocked once it is
	// reached). Unset, those that rules and campaigns produce count and
	// direct triggers' do not (CountsTowardCapFor; issue 30 item 5, S3.8).
	CountsTowardCap *bool     `json:"counts_toward_cap,omitempty"`
	Guarantee       Guarantee `json:"guarantee"`
	// Critical (account, security, reservation notices: what the user is
	// guaranteed to see, S4.5) bypasses the user's opt-outs on every
	// channel, the inbox included, quiet hours and the daily cap; never
	// de-duplication (issue 22).
	Critical bool `json:"critical"`
	// Transactional e-mails (a receipt, a password reset: mail the user
	// asked for by acting) carry no one-click unsubscribe link (RFC 8058,
	// issue 21 item 3); every other type's e-mails do. A critical type is
	// treated as transactional: its opt-outs do not apply.
	Transactional bool `json:"transactional,omitempty"`
	// EmailTracking (opt-in, issue 35 item 2) gives the type's HTML
	// e-mails an open pixel and click-tracked links, each a signed,
	// expiring link through Herald that records a receipt (opened,
	// clicked) on the delivery's timeline. Off by default, whatever the
	// type's guarantee or whether it is critical or transactional.
	EmailTracking bool `json:"email_tracking,omitempty"`
	// Digest, when set, gathers the type's triggers into digests (issue
	// 36 item 1); a critical type never digests.
	Digest *Digest `json:"digest,omitempty"`
	// Escalate, when set, sends the type's notifications again on other
	// channels, step by step, unless a receipt comes first (issue 36
	// item 3).
	Escalate  []EscalationStep `json:"escalate,omitempty"`
	UpdatedAt time.Time        `json:"updated_at,omitzero"`
}

// CountsTowardCapFor reports whether a notification of type t produced by
// src (nil: a direct trigger) counts toward the user's daily cap. A
// critical type never does; a type that says so decides; otherwise what
// rules and campaigns send to audiences counts — the seed's cap is about
// them (S3.8: the 11th is blocked) — and a trigger, which Herald cannot
// tell from a password reset, does not. A test-send never counts: it is
// the operator's, not the user's traffic.
func (t NotificationType) CountsTowardCapFor(src *Source) bool {
	switch {
	case t.Critical, src.IsTest():
		return false
	case t.CountsTowardCap != nil:
		return *t.CountsTowardCap
	}
	return src != nil && (src.Kind == SourceRule || src.Kind == SourceCampaign)
}

// Preferences are one user's delivery preferences (S3.11).
type Preferences struct {
	UserID string `json:"user_id"`
	// Types maps a notification type to the user's choice for it; a type
	// not listed is on, on every channel.
	Types map[string]TypePreference `json:"types,omitempty"`
	// OptedOutChannels are channels the user refuses for every type.
	OptedOutChannels []Channel `json:"opted_out_channels,omitempty"`
	// QuietHours, when set, is a daily window in the user's time zone.
	QuietHours *QuietHours `json:"quiet_hours,omitempty"`
	// DailyCap overrides the configured daily cap; 0 keeps it.
	DailyCap int `json:"daily_cap,omitempty"`
	// ChannelsResubscribedAt records, per channel, when the user last
	// took it off OptedOutChannels; a record Herald keeps, not a setting
	// (what a PUT sends here is ignored). An unsubscribe link sent before
	// it no longer works for that channel.
	ChannelsResubscribedAt map[Channel]time.Time `json:"channels_resubscribed_at,omitempty"`
	UpdatedAt              time.Time             `json:"updated_at,omitzero"`
	// Timezone is the user's IANA time zone, read from the user (it is not
	// stored with the preferences).
	Timezone string `json:"timezone,omitempty"`
}

// The codes a delivery the user's preferences refuse ends opted_out with
// (Preferences.Refusal), at send time and, for the inbox, at enqueue.
const (
	CodeTypeDisabled    = "type_disabled"
	CodeChannelDisabled = "channel_disabled"
	CodeChannelOptedOut = "channel_opted_out"
)

// Refusal is the preference rule (S3.11), the one both the delivery policy
// at send time and the in-app inbox at enqueue apply (issue 22): the code
// of the user's refusal of a notification of type typ on channel ch, ""
// if the preferences allow it. A type turned off is off everywhere, the
// inbox included; a type's channel list, when set, is the only channels it
// may use; an opted-out channel is refused for every type. A critical type
// bypasses all three — the caller decides that (it knows the type).
// store/rules.InboxRefusalSQL is this rule over the stored document.
func (p Preferences) Refusal(typ string, ch Channel) string {
	if tp, ok := p.Types[typ]; ok {
		if tp.Disabled {
			return CodeTypeDisabled
		}
		if len(tp.Channels) > 0 && !slices.Contains(tp.Channels, ch) {
			return CodeChannelDisabled
		}
	}
	if slices.Contains(p.OptedOutChannels, ch) {
		return CodeChannelOptedOut
	}
	return ""
}

// RefusalReason is the message of a Refusal code for type typ on channel
// ch: what the operator reads on the opted-out delivery.
func RefusalReason(code, typ string, ch Channel) string {
	switch code {
	case CodeTypeDisabled:
		return "the user turned " + typ + " notifications off"
	case CodeChannelDisabled:
		return "the user does not allow " + string(ch) + " for " + typ + " notifications"
	case CodeChannelOptedOut:
		return "the user opted out of " + string(ch)
	}
	return ""
}

// TypePreference is a user's choice for one notification type.
type TypePreference struct {
	// Disabled turns the type off for the user.
	Disabled bool `json:"disabled,omitempty"`
	// Channels, when not empty, are the only channels the type may use.
	Channels []Channel `json:"channels,omitempty"`
	// Digest, when set, turns the type into a scheduled digest for the
	// user (issue 36 item 2): its triggers collect until the next
	// scheduled time. A critical type is never digested.
	Digest *DigestSchedule `json:"digest,omitempty"`
	// UnsubscribedAt is when the user last turned the type off on a
	// channel with a one-click unsubscribe link (RFC 8058); a record, not
	// a setting.
	UnsubscribedAt *time.Time `json:"unsubscribed_at,omitempty"`
	// ResubscribedAt records, per channel, when the user last turned the
	// type on again there after it was off; a record Herald keeps, not a
	// setting (what a PUT sends here is ignored). An unsubscribe link for
	// the type and channel sent before it no longer works.
	ResubscribedAt map[Channel]time.Time `json:"resubscribed_at,omitempty"`
}

// QuietHours is a daily window, "HH:MM" local times; Start after End
// spans midnight (22:00–08:00).
type QuietHours struct {
	Start string `json:"start"`
	End   string `json:"end"`
}
