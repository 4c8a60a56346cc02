package herald

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 22 through the Client: the user's preferences cover the in-app
// inbox, and a scheduled in-app notification appears when it is due.

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

// Item 8: a scheduled in-app notification is not in the inbox (nor on
// its stream) before send_at; at send_at it appears exactly once and the
// stream is signalled; one the user opted out of meanwhile never appears.
func TestInboxScheduledAppearsWhenDue(t *testing.T) {
	p := newPolicyPipeline(t, nil)
	p.user("u1", "Asia/Seoul", "tok-1")
	p.user("u2", "Asia/Seoul", "tok-2")
	sendAt := p.clock.Now().Add(24 * time.Hour)
	inApp := []heraldtype.Channel{heraldtype.ChannelInApp}
	r1 := p.enqueue(Request{UserID: "u1", Type: "reminder", Title: "Tomorrow", Channels: inApp, SendAt: &sendAt})
	r2 := p.enqueue(Request{UserID: "u2", Type: "reminder", Title: "Tomorrow", Channels: inApp, SendAt: &sendAt})
	sub := p.client.hub.Subscribe("u1")
	defer p.client.hub.Unsubscribe(sub)

	p.work()
	p.clock.Advance(24*time.Hour - time.Second)
	p.work()
	if ids := p.inboxOf("u1"); len(ids) != 0 {
		t.Fatalf("inbox before send_at = %v, want empty", ids)
	}
	if d := p.inAppOf(r1.Notifications[0].ID); d.State != heraldtype.StatePending {
		t.Fatalf("in_app before send_at = %s, want pending", d.State)
	}
	select {
	case <-sub.C:
		t.Fatal("the stream was signalled before send_at")
	default:
	}
	if _, err := p.client.PutPreferences(p.ctx, "u2", Preferences{
		OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}

	p.clock.Advance(time.Second)
	p.work()
	ids := p.inboxOf("u1")
	if len(ids) != 1 {
		t.Fatalf("inbox at send_at = %v, want exactly one item", ids)
	}
	select {
	case <-sub.C:
	default:
		t.Fatal("the stream was not signalled when the item was written")
	}
	d := p.inAppOf(r1.Notifications[0].ID)
	if d.State != heraldtype.StateSent || d.ProviderMessageID == "" {
		t.Fatalf("in_app at send_at = %+v, want sent", d)
	}
	if d := p.inAppOf(r2.Notifications[0].ID); d.State != heraldtype.StateOptedOut || d.LastErrorCode != "channel_opted_out" {
		t.Fatalf("opted out before send_at: %s/%s, want opted_out/channel_opted_out", d.State, d.LastErrorCode)
	}
	p.clock.Advance(time.Hour)
	p.work()
	if again := p.inboxOf("u1"); len(again) != 1 || again[0] != ids[0] {
		t.Fatalf("inbox later = %v, want the one item %v", again, ids)
	}
	if ids := p.inboxOf("u2"); len(ids) != 0 {
		t.Fatalf("u2's inbox = %v, want empty", ids)
	}
}
