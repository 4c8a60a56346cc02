package herald

import (
	"maps"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// An unsubscribe link stops working once its user has turned the type
// back on for its channel after the link was sent (issue 31 item 6):
// clicking an old e-mail's link — or a mail scanner posting it — must not
// undo the user's later choice. PutPreferences records each such
// re-subscription on the preferences (ResubscribedAt per type and channel,
// ChannelsResubscribedAt for a channel taken off OptedOutChannels), and
// the unsubscribe routes refuse a link issued before the record.

// typeOn reports whether p's choice for typ lets ch through, the global
// opt-outs aside.
func typeOn(p Preferences, typ string, ch heraldtype.Channel) bool {
	tp, ok := p.Types[typ]
	switch {
	case !ok:
		return true
	case tp.Disabled:
		return false
	case len(tp.Channels) > 0:
		return slices.Contains(tp.Channels, ch)
	}
	return true
}

// recordResubscriptions sets p's re-subscription records: was's carried
// over (what the caller sent is ignored), and now for every type and
// channel p turns on that was off in was. A type whose entry p dropped
// keeps an entry holding only its records while p has fewer than keep
// entries (max_preference_types): past that its records are let go, and
// its older links work again.
func recordResubscriptions(was Preferences, p *Preferences, now time.Time, keep int) {
	types := make(map[string]TypePreference, len(p.Types))
	for typ, tp := range p.Types {
		tp.ResubscribedAt = nil
		types[typ] = tp
	}
	note := func(typ string, ch heraldtype.Channel, at time.Time) {
		tp := types[typ]
		if old, ok := tp.ResubscribedAt[ch]; ok && !at.After(old) {
			return
		}
		if tp.ResubscribedAt == nil {
			tp.ResubscribedAt = map[heraldtype.Channel]time.Time{}
		}
		tp.ResubscribedAt[ch] = at
		types[typ] = tp
	}
	for typ, tp := range was.Types {
		for ch, at := range tp.ResubscribedAt {
			if _, listed := types[typ]; listed || len(types) < keep {
				note(typ, ch, at)
			}
		}
		for _, ch := range preferenceChannels {
			if !typeOn(was, typ, ch) && typeOn(*p, typ, ch) {
				note(typ, ch, now)
			}
		}
	}
	p.Types = types
	if len(p.Types) == 0 {
		p.Types = nil
	}
	p.ChannelsResubscribedAt = maps.Clone(was.ChannelsResubscribedAt)
	for _, ch := range was.OptedOutChannels {
		if !slices.Contains(p.OptedOutChannels, ch) {
			if p.ChannelsResubscribedAt == nil {
				p.ChannelsResubscribedAt = map[heraldtype.Channel]time.Time{}
			}
			p.ChannelsResubscribedAt[ch] = now
		}
	}
}

// resubscribedAfter reports whether p records that typ was turned on
// again for ch after t.
func resubscribedAfter(p Preferences, typ string, ch heraldtype.Channel, t time.Time) bool {
	if at, ok := p.ChannelsResubscribedAt[ch]; ok && at.After(t) {
		return true
	}
	at, ok := p.Types[typ].ResubscribedAt[ch]
	return ok && at.After(t)
}
