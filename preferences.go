package herald

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/digest"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
)

// Preferences are a user's delivery preferences (S3.11), the body and
// answer of GET/PUT /v1/users/{id}/preferences:
//
//	{"types": {"promo": {"disabled": true}, "order": {"channels": ["email"]}},
//	 "opted_out_channels": ["sms"],
//	 "quiet_hours": {"start": "22:00", "end": "08:00"},
//	 "daily_cap": 5}
//
// A type's "digest" ({"every": "day", "at": "18:00"} or {"every": "week",
// "on": "monday", "at": "09:00"}) turns it into a scheduled digest for the
// user, in the user's time zone (issue 36 item 2; docs/digests.md); a
// critical type is never digested.
//
// Quiet hours are in the user's time zone (the user's timezone field,
// echoed read-only); a start after the end spans midnight. daily_cap 0
// keeps the configured cap. Per-device push opt-in (S0.1) stays on the
// device. in_app is opted out like any channel, for every type or per
// type, and a type turned off is off in the inbox too (issue 22); a
// critical type bypasses every opt-out (the record a user is guaranteed
// to see, S4.5).
type Preferences = heraldtype.Preferences

// TypePreference is a user's choice for one type: off, or only some
// channels.
type TypePreference = heraldtype.TypePreference

// QuietHours is a daily window "HH:MM"–"HH:MM" in the user's time zone.
type QuietHours = heraldtype.QuietHours

// PutPreferences replaces a user's preferences. The user must exist.
func (c *Client) PutPreferences(ctx context.Context, userID string, p Preferences) (Preferences, error) {
	if err := validID("id", userID); err != nil {
		return Preferences{}, err
	}
	p.UserID = userID
	if max := c.cfg.Limits.MaxPreferenceTypes; len(p.Types) > max {
		return Preferences{}, heraldtype.FieldErrorf("types", "lists %d types; it exceeds max_preference_types (%d)", len(p.Types), max)
	}
	for name, tp := range p.Types {
		if err := validTypeName(name); err != nil {
			return Preferences{}, err
		}
		if tp.Digest != nil {
			if err := digest.CheckSchedule("types."+name+".digest", *tp.Digest); err != nil {
				return Preferences{}, err
			}
		}
	}
	if err := policy.ValidatePreferences(&p); err != nil {
		return Preferences{}, err
	}
	// Read, record what the write turns back on (resubscribe.go), write
	// guarded by what was read: a write landing in between (a one-click
	// unsubscribe) is read again, never lost.
	in := p
	for try := 1; ; try++ {
		was, err := c.store.GetPreferences(ctx, userID)
		if err != nil {
			return Preferences{}, err
		}
		now := c.now().UTC()
		p = in
		recordResubscriptions(was, &p, now, c.cfg.Limits.MaxPreferenceTypes)
		out, swapped, err := c.store.SwapPreferences(ctx, p, was.UpdatedAt, now)
		if err != nil || swapped {
			if swapped {
				c.scheduledTypes.add(store.ScheduledDigestTypes(p))
			}
			return out, err
		}
		if try == maxRecordTries {
			return Preferences{}, heraldtype.Errorf(heraldtype.EUNAVAILABLE,
				"the preferences of user %q kept changing under %d tries; send them again", userID, maxRecordTries)
		}
		if err := decideAgain(ctx, try); err != nil {
			return Preferences{}, err
		}
	}
}

// GetPreferences returns a user's preferences (empty ones if the user set
// none); not_found if the user does not exist.
func (c *Client) GetPreferences(ctx context.Context, userID string) (Preferences, error) {
	if err := validID("id", userID); err != nil {
		return Preferences{}, err
	}
	return c.store.GetPreferences(ctx, userID)
}
