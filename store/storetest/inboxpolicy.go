package storetest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Tests of issue 22 on every store: the user's preferences cover the
// inbox (an in-app notification due now is decided in the trigger's
// transaction by heraldtype.Preferences.Refusal, store/rules'
// InboxRefusalSQL), and an in-app notification scheduled for later has
// no item until it is due, when Complete(store.InboxSent) writes it once.

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

func testInboxScheduled(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	due := at(time.Hour)
	later := func(u string) heraldtype.Notification {
		n := f.on(u, heraldtype.ChannelInApp)
		n.SendAt = due
		return n
	}
	n1, n2 := later("u1"), later("u2")
	n1.Guarantee = heraldtype.AtMostOnce
	now := f.on("u1", heraldtype.ChannelInApp)
	res := f.enqueue(params(n1, n2, now))
	if len(res.Inbox) != 1 || res.Inbox[0].NotificationID != now.ID || res.Notifications[0].Deliveries != 1 {
		t.Fatalf("Enqueue = %+v, want only the item due now, one delivery each", res)
	}
	d := f.byChannel(n1.ID, heraldtype.ChannelInApp)
	// at_least_once even for an at_most_once type: the item and the move
	// are one transaction, so a reaped lease wrote nothing.
	if d.State != heraldtype.StatePending || d.Provider != store.InboxProvider || d.Attempt != 0 || len(d.Attempts) != 0 ||
		d.Guarantee != heraldtype.AtLeastOnce {
		t.Fatalf("scheduled in-app delivery = %+v, want pending, at_least_once", d)
	}
	wantTime(t, "RunAt", d.RunAt, due)
	if ids, _, _ := f.listInbox("u1", heraldtype.InboxFilter{}); len(ids) != 1 || ids[0] != res.Inbox[0].ID {
		t.Fatalf("u1's inbox before send_at = %v, want only the item due now", ids)
	}
	if next, ok, err := f.s.NextRunAt(f.ctx); err != nil || !ok {
		t.Fatalf("NextRunAt = %v, %v, %v", next, ok, err)
	} else {
		wantTime(t, "NextRunAt", next, due)
	}
	if jobs := f.claim("w", at(time.Hour-time.Second), 10); len(jobs) != 0 {
		t.Fatalf("claimed %v before send_at", ids(jobs))
	}

	jobs := f.claim("w", due, 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %d at send_at, want both", len(jobs))
	}
	var j1, j2 heraldtype.Job
	for _, j := range jobs {
		if j.Notification == nil || j.Device != nil || j.Delivery.Channel != heraldtype.ChannelInApp {
			t.Fatalf("claimed job = %+v, want an in_app job with its notification", j)
		}
		if j.Delivery.NotificationID == n1.ID {
			j1 = j
		} else {
			j2 = j
		}
	}
	// u1's item is written; u2 opted out meanwhile (the policy's answer).
	written := at(time.Hour + time.Second)
	o1 := outcome(j1, store.InboxSent{}, written)
	f.complete(2, o1, outcome(j2, store.OptedOut{ErrorCode: heraldtype.CodeChannelOptedOut, Error: "opted out"}, written))
	// A duplicate or late outcome of the same lease writes nothing twice.
	f.complete(0, o1)

	items, err := f.s.InboxSince(f.ctx, "u1", res.Inbox[0].ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("u1's new items = %+v, want exactly one", items)
	}
	it := items[0]
	if it.NotificationID != n1.ID || it.UserID != "u1" || it.Title != n1.Title || it.Body != n1.Body || it.Type != n1.Type {
		t.Fatalf("item = %+v, want n1's", it)
	}
	wantTime(t, "CreatedAt", it.CreatedAt, written)
	d = f.byChannel(n1.ID, heraldtype.ChannelInApp)
	if d.State != heraldtype.StateSent || d.ProviderMessageID != strconv.FormatInt(it.ID, 10) || d.Attempt != 1 {
		t.Fatalf("delivery = %+v, want sent with the item's id %d", d, it.ID)
	}
	wantTimePtr(t, "FinishedAt", d.FinishedAt, written)
	wantOutcomes(t, d, heraldtype.OutcomeSent)
	if a := d.Attempts[0]; a.ProviderMessageID != d.ProviderMessageID {
		t.Fatalf("attempt = %+v, want the item's id", a)
	}
	if ids, _, _ := f.listInbox("u2", heraldtype.InboxFilter{}); len(ids) != 0 {
		t.Fatalf("u2's inbox = %v, want nothing: opted out at due time", ids)
	}
	if d := f.byChannel(n2.ID, heraldtype.ChannelInApp); d.State != heraldtype.StateOptedOut {
		t.Fatalf("u2's delivery = %+v, want opted_out", d)
	}
}
