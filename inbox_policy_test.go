package herald

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 22 through the Client: the user's preferences cover the in-app
// inbox.

// inboxOf lists the user's inbox item ids, newest first.
func (p *pipeline) inboxOf(userID string) []int64 {
	p.t.Helper()
	page, err := p.client.ListInbox(p.ctx, userID, InboxFilter{})
	if err != nil {
		p.t.Fatal(err)
	}
	out := []int64{}
	for _, it := range page.Items {
		out = append(out, it.ID)
	}
	return out
}

// inAppOf is the notification's in_app delivery.
func (p *pipeline) inAppOf(id string) heraldtype.Delivery {
	p.t.Helper()
	for _, d := range p.status(id).Deliveries {
		if d.Channel == heraldtype.ChannelInApp {
			return d
		}
	}
	p.t.Fatalf("notification %s has no in_app delivery", id)
	return heraldtype.Delivery{}
}

// Item 2: a type that is off is off everywhere, the inbox included;
// in_app can be opted out like any channel; a critical type bypasses
// every opt-out, the inbox's included.
func TestInboxFollowsPreferences(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"security": {Critical: true}}
	})
	p.user("u1", "Asia/Seoul", "tok-1")
	both := []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelInApp}
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{
		"promo": {Disabled: true}, "order": {Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}}); err != nil {
		t.Fatal(err)
	}
	for typ, code := range map[string]string{"promo": "type_disabled", "order": "channel_disabled"} {
		res := p.enqueue(Request{UserID: "u1", Type: typ, Title: "x", Channels: both})
		p.work()
		if d := p.inAppOf(res.Notifications[0].ID); d.State != heraldtype.StateOptedOut || d.LastErrorCode != code {
			t.Fatalf("%s: in_app %s/%s, want opted_out/%s", typ, d.State, d.LastErrorCode, code)
		}
	}
	if ids := p.inboxOf("u1"); len(ids) != 0 {
		t.Fatalf("inbox = %v; the preferences refuse both", ids)
	}
	if h := p.history(HistoryFilter{UserID: "u1", Type: "promo"}); len(h) != 1 || h[0].Status != heraldtype.HistoryOptedOut ||
		h[0].Reason != "type_disabled" {
		t.Fatalf("history of the type turned off = %+v, want USER_OPTED_OUT/type_disabled", h)
	}

	// in_app opted out for every type, through the preferences API.
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{
		OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp, heraldtype.ChannelPush}}); err != nil {
		t.Fatalf("opting out of in_app: %v", err)
	}
	res := p.enqueue(Request{UserID: "u1", Type: "news", Title: "x", Channels: both})
	p.work()
	if d := p.inAppOf(res.Notifications[0].ID); d.State != heraldtype.StateOptedOut || d.LastErrorCode != "channel_opted_out" {
		t.Fatalf("in_app opted out: %s/%s", d.State, d.LastErrorCode)
	}
	if ids := p.inboxOf("u1"); len(ids) != 0 {
		t.Fatalf("inbox = %v, want empty", ids)
	}

	// A critical type reaches the inbox and the phone all the same.
	res = p.enqueue(Request{UserID: "u1", Type: "security", Title: "New sign-in", Channels: both})
	p.work()
	if d := p.inAppOf(res.Notifications[0].ID); d.State != heraldtype.StateSent {
		t.Fatalf("critical in_app: %s/%s, want sent", d.State, d.LastErrorCode)
	}
	if ids := p.inboxOf("u1"); len(ids) != 1 {
		t.Fatalf("inbox = %v, want the critical item", ids)
	}
	// The phone: order (push allowed for it) and the critical one.
	if n := len(p.em.MessagesTo("tok-1")); n != 2 {
		t.Fatalf("the phone got %d messages, want 2", n)
	}
}
