package storetest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Tests of issue 22 on every store: the user's preferences cover the
// inbox (an in-app notification due now is decided in the trigger's
// transaction by heraldtype.Preferences.Refusal, store/rules'
// InboxRefusalSQL).

// prefs stores the user's preferences.
func (f *fixture) prefs(p heraldtype.Preferences) {
	f.t.Helper()
	if _, err := f.s.PutPreferences(f.ctx, p, base()); err != nil {
		f.t.Fatalf("PutPreferences(%s): %v", p.UserID, err)
	}
}

func testInboxPreferences(t *testing.T, newStore NewStore) {
	t.Parallel()
	types := func(m map[string]heraldtype.TypePreference) heraldtype.Preferences {
		return heraldtype.Preferences{Types: m}
	}
	only := func(chs ...heraldtype.Channel) heraldtype.TypePreference {
		return heraldtype.TypePreference{Channels: chs}
	}
	off := heraldtype.TypePreference{Disabled: true}
	inApp, push := heraldtype.ChannelInApp, heraldtype.ChannelPush
	cases := []struct {
		name     string
		prefs    *heraldtype.Preferences // nil: none stored
		typ      string
		critical bool
	}{
		{"no preferences", nil, "promo", false},
		{"empty preferences", &heraldtype.Preferences{}, "promo", false},
		{"type off", ptr(types(map[string]heraldtype.TypePreference{"promo": off})), "promo", false},
		{"another type off", ptr(types(map[string]heraldtype.TypePreference{"news": off})), "promo", false},
		{"type on push only", ptr(types(map[string]heraldtype.TypePreference{"promo": only(push)})), "promo", false},
		{"type on in_app and push", ptr(types(map[string]heraldtype.TypePreference{"promo": only(push, inApp)})), "promo", false},
		{"in_app opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{push, inApp}}, "promo", false},
		{"push opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{push}}, "promo", false},
		{"type off and in_app opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{inApp},
			Types: map[string]heraldtype.TypePreference{"promo": off}}, "promo", false},
		{"push only and in_app opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{inApp},
			Types: map[string]heraldtype.TypePreference{"promo": only(push)}}, "promo", false},
		{"listed on, in_app opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{inApp},
			Types: map[string]heraldtype.TypePreference{"promo": only(inApp)}}, "promo", false},
		{"a dotted type off", ptr(types(map[string]heraldtype.TypePreference{"order.shipped": off, "order": only(push)})),
			"order.shipped", false},
		{"a dotted type's prefix off", ptr(types(map[string]heraldtype.TypePreference{"order": off})), "order.shipped", false},
		{"critical, type off", ptr(types(map[string]heraldtype.TypePreference{"alarm": off})), "alarm", true},
		{"critical, in_app opted out", &heraldtype.Preferences{OptedOutChannels: []heraldtype.Channel{inApp}}, "alarm", true},
	}
	f := newFixture(t, newStore)
	var ns []heraldtype.Notification
	for i, c := range cases {
		u := fmt.Sprintf("p%02d", i)
		f.user(u)
		if c.prefs != nil {
			p := *c.prefs
			p.UserID = u
			f.prefs(p)
		}
		n := f.on(u, heraldtype.ChannelInApp)
		n.Type, n.Critical = c.typ, c.critical
		ns = append(ns, n)
	}
	// One trigger of them all: the rule is decided per recipient.
	res := f.enqueue(params(ns...))
	items := map[string]heraldtype.InboxItem{}
	for _, it := range res.Inbox {
		items[it.NotificationID] = it
	}
	for i, c := range cases {
		var p heraldtype.Preferences
		if c.prefs != nil {
			p = *c.prefs
		}
		want := p.Refusal(c.typ, heraldtype.ChannelInApp)
		if c.critical {
			want = ""
		}
		n := ns[i]
		if res.Notifications[i].Deliveries != 1 {
			t.Errorf("%s: %d deliveries, want 1", c.name, res.Notifications[i].Deliveries)
		}
		d := f.byChannel(n.ID, heraldtype.ChannelInApp)
		ids, _, _ := f.listInbox(n.UserID, heraldtype.InboxFilter{})
		if want == "" {
			it, ok := items[n.ID]
			if !ok || d.State != heraldtype.StateSent || d.ProviderMessageID != strconv.FormatInt(it.ID, 10) ||
				len(ids) != 1 || ids[0] != it.ID {
				t.Errorf("%s: delivery %+v, items %v; want sent with its inbox item", c.name, d, ids)
			}
			continue
		}
		if _, ok := items[n.ID]; ok || len(ids) != 0 {
			t.Errorf("%s: an inbox item was written (%v); the preferences refuse it (%s)", c.name, ids, want)
		}
		if d.State != heraldtype.StateOptedOut || d.LastErrorCode != want ||
			d.LastError != heraldtype.RefusalReason(want, c.typ, heraldtype.ChannelInApp) || d.Attempt != 0 ||
			d.Provider != store.InboxProvider {
			t.Errorf("%s: delivery %+v, want opted_out with %s", c.name, d, want)
			continue
		}
		wantTimePtr(t, "FinishedAt", d.FinishedAt, base())
		wantOutcomes(t, d, heraldtype.OutcomeOptedOut)
		if a := d.Attempts[0]; a.ErrorCode != want || a.Error != d.LastError {
			t.Errorf("%s: attempt %+v, want error code %s", c.name, a, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
