package herald

import (
	"context"
	"strings"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/unsubscribe"
	"github.com/heraldhq/herald/provider/smtp"
)

var testUnsubscribeSecret = []byte("0123456789abcdef0123456789abcdef")

// newMailPipeline is a pipeline whose e-mail goes to an SMTP emulator,
// with one-click unsubscribe on and three types: promo (marketing),
// receipt (transactional) and alert (critical).
func newMailPipeline(t *testing.T) (*pipeline, *smtpemu.Emulator) {
	t.Helper()
	se, err := smtpemu.New(smtpemu.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := se.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { se.Close() })
	host, port := se.HostPort()
	mail, err := smtp.New(smtp.Config{Host: host, Port: port, TLS: smtp.TLSNone, From: "Acme <noreply@acme.test>"})
	if err != nil {
		t.Fatal(err)
	}
	email := []heraldtype.Channel{heraldtype.ChannelEmail}
	p := newPipeline(t, func(c *Config) {
		c.Providers["smtp"] = mail
		c.Types = map[string]TypeConfig{"promo": {Channels: email}, "receipt": {Channels: email, Transactional: true},
			"alert": {Channels: email, Critical: true}}
		c.Unsubscribe = UnsubscribeConfig{Secret: testUnsubscribeSecret, BaseURL: "https://herald.test/", Mailto: "unsub@acme.test"}
	})
	for _, u := range []string{"u1", "u2"} {
		if _, err := p.client.PutUser(p.ctx, u, UserInput{Email: u + "@example.test"}); err != nil {
			t.Fatal(err)
		}
	}
	return p, se
}

// mailOf sends one e-mail of type typ to user and returns what the
// emulator received, or nil if nothing was sent.
func mailOf(p *pipeline, se *smtpemu.Emulator, user, typ string) (*smtpemu.Received, heraldtype.Delivery) {
	p.t.Helper()
	before := len(se.MessagesTo(user + "@example.test"))
	id := p.enqueue(Request{UserID: user, Type: typ, Title: typ, Body: "hello"}).Notifications[0].ID
	p.work()
	d := p.only(id)
	got := se.MessagesTo(user + "@example.test")
	if len(got) == before {
		return nil, d
	}
	return &got[len(got)-1], d
}

// TestListUnsubscribeHeaderByType: a marketing e-mail carries the RFC 8058
// headers with a signed link to Herald and the mailto; a transactional or
// critical one carries none.
func TestListUnsubscribeHeaderByType(t *testing.T) {
	t.Parallel()
	p, se := newMailPipeline(t)
	m, _ := mailOf(p, se, "u1", "promo")
	if m == nil {
		t.Fatal("promo not sent")
	}
	lu := m.Headers["List-Unsubscribe"]
	if len(lu) != 1 || !strings.HasPrefix(lu[0], "<https://herald.test/v1/unsubscribe/u2.") ||
		!strings.Contains(lu[0], ">, <mailto:unsub@acme.test?subject=unsubscribe%20u2.") {
		t.Errorf("List-Unsubscribe %q", lu)
	}
	if post := m.Headers["List-Unsubscribe-Post"]; len(post) != 1 || post[0] != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", post)
	}
	for _, typ := range []string{"receipt", "alert"} {
		m, _ := mailOf(p, se, "u1", typ)
		if m == nil {
			t.Fatalf("%s not sent", typ)
		}
		if h := m.Headers["List-Unsubscribe"]; h != nil {
			t.Errorf("%s carries List-Unsubscribe %q", typ, h)
		}
		if h := m.Headers["List-Unsubscribe-Post"]; h != nil {
			t.Errorf("%s carries List-Unsubscribe-Post %q", typ, h)
		}
	}
}

// tokenOf takes the token out of a mail's List-Unsubscribe header.
func tokenOf(t *testing.T, m *smtpemu.Received) string {
	t.Helper()
	h := m.Headers["List-Unsubscribe"][0]
	_, rest, _ := strings.Cut(h, "/v1/unsubscribe/")
	tok, _, ok := strings.Cut(rest, ">")
	if !ok {
		t.Fatalf("no token in %q", h)
	}
	return tok
}

// TestUnsubscribeTurnsTheTypeOffOnEmail: checking a link changes nothing;
// using it turns the type off on e-mail for that user only, idempotently,
// and the next e-mail of the type ends opted out; other types still go.
func TestUnsubscribeTurnsTheTypeOffOnEmail(t *testing.T) {
	t.Parallel()
	p, se := newMailPipeline(t)
	m, carrier := mailOf(p, se, "u1", "promo")
	tok := tokenOf(t, m)

	u, err := p.client.CheckUnsubscribe(p.ctx, tok)
	if err != nil || u != (Unsubscription{UserID: "u1", Type: "promo", Channel: heraldtype.ChannelEmail}) {
		t.Fatalf("CheckUnsubscribe = %+v, %v", u, err)
	}
	if prefs, _ := p.client.GetPreferences(p.ctx, "u1"); len(prefs.Types) != 0 {
		t.Fatalf("a check changed the preferences: %+v", prefs)
	}
	if m, _ := mailOf(p, se, "u1", "promo"); m == nil {
		t.Fatal("a check stopped the type")
	}

	for range 2 { // idempotent
		if u, err := p.client.Unsubscribe(p.ctx, tok); err != nil || !u.Unsubscribed || u.UserID != "u1" || u.Type != "promo" {
			t.Fatalf("Unsubscribe = %+v, %v", u, err)
		}
	}
	prefs, err := p.client.GetPreferences(p.ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	tp := prefs.Types["promo"]
	if tp.Disabled || tp.UnsubscribedAt == nil || strings.Join(channelNames(tp.Channels), ",") != "push,sms,in_app" {
		t.Errorf("promo preference %+v", tp)
	}
	m, d := mailOf(p, se, "u1", "promo")
	if m != nil || d.State != heraldtype.StateOptedOut {
		t.Errorf("promo after unsubscribe: mail %v, delivery %s %s", m != nil, d.State, d.LastErrorCode)
	}
	hist, err := p.client.ListHistory(p.ctx, HistoryFilter{UserID: "u1", Type: "promo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist.Notifications {
		if e.NotificationID == d.NotificationID && (e.Status != heraldtype.HistoryOptedOut || e.Reason != heraldtype.CodeChannelDisabled) {
			t.Errorf("history of the refused promo: %s %s", e.Status, e.Reason)
		}
	}
	if m, _ := mailOf(p, se, "u1", "receipt"); m == nil {
		t.Error("the receipt stopped too")
	}
	if m, _ := mailOf(p, se, "u2", "promo"); m == nil {
		t.Error("u2's promo stopped")
	}
	if u, err := p.client.CheckUnsubscribe(p.ctx, tok); err != nil || !u.Unsubscribed {
		t.Errorf("CheckUnsubscribe after = %+v, %v", u, err)
	}
	// The e-mail that carried the link shows the unsubscribe on its
	// timeline, once for the two posts; its state is unchanged.
	got, err := p.store.GetDelivery(p.ctx, carrier.ID)
	if err != nil {
		t.Fatal(err)
	}
	reports := 0
	for _, a := range got.Attempts {
		if a.Outcome == heraldtype.OutcomeProviderReport && a.ErrorCode == UnsubscribedStatus {
			reports++
		}
	}
	if reports != 1 || got.State != heraldtype.StateSent {
		t.Errorf("the carrying e-mail: %d unsubscribe entries, state %s; want 1, sent: %+v", reports, got.State, got.Attempts)
	}
}

func channelNames(chs []heraldtype.Channel) []string {
	out := make([]string, len(chs))
	for i, c := range chs {
		out[i] = string(c)
	}
	return out
}

// TestUnsubscribeRefusesForgedTokens: another user's claims under a real
// signature, another secret's token and garbage are refused with stable
// codes, and nothing changes.
func TestUnsubscribeRefusesForgedTokens(t *testing.T) {
	t.Parallel()
	p, se := newMailPipeline(t)
	m, _ := mailOf(p, se, "u1", "promo")
	tok := tokenOf(t, m)
	v, payload, _ := strings.Cut(tok, ".")
	_, mac, _ := strings.Cut(payload, ".")
	mine, _ := unsubscribe.NewSigner(testUnsubscribeSecret)
	u2 := strings.Split(mine.Token(unsubscribe.Claims{UserID: "u2", Type: "promo", Channel: heraldtype.ChannelEmail}), ".")[1]
	other, _ := unsubscribe.NewSigner([]byte(strings.Repeat("z", 32)))
	for name, bad := range map[string]string{
		"u2's claims, u1's signature": v + "." + u2 + "." + mac,
		"another secret":              other.Token(unsubscribe.Claims{UserID: "u2", Type: "promo", Channel: heraldtype.ChannelEmail}),
	} {
		if _, err := p.client.Unsubscribe(p.ctx, bad); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Errorf("%s: %v, want not_found", name, err)
		}
	}
	for _, bad := range []string{"", "x", "u1.!!.!!", tok + "x.y"} {
		if _, err := p.client.Unsubscribe(p.ctx, bad); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("%q: %v, want invalid_argument", bad, err)
		}
	}
	for _, u := range []string{"u1", "u2"} {
		if prefs, _ := p.client.GetPreferences(p.ctx, u); len(prefs.Types) != 0 {
			t.Errorf("%s's preferences changed: %+v", u, prefs)
		}
	}
}

// Issue 31 item 6: once the user turns the type back on for e-mail — in
// the type's entry, by dropping the entry, or by taking e-mail off the
// global opt-outs — every link sent before stops working (checked or
// posted, not_found), while a link sent after the re-subscription works;
// a PUT cannot forge or erase the records, and a change that turns
// nothing back on retires no link.
func TestUnsubscribeLinkRetiredByResubscription(t *testing.T) {
	t.Parallel()
	p, se := newMailPipeline(t)
	m, _ := mailOf(p, se, "u1", "promo")
	old := tokenOf(t, m)
	p.clock.Advance(time.Second)
	if _, err := p.client.Unsubscribe(p.ctx, old); err != nil {
		t.Fatal(err)
	}
	// A change that turns nothing back on (the daily cap) retires nothing.
	prefs, _ := p.client.GetPreferences(p.ctx, "u1")
	prefs.DailyCap = 50
	p.clock.Advance(time.Second)
	if _, err := p.client.PutPreferences(p.ctx, "u1", prefs); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Unsubscribe(p.ctx, old); err != nil {
		t.Fatalf("a daily-cap change retired the link: %v", err)
	}
	// The user turns promo back on by dropping its entry.
	p.clock.Advance(time.Second)
	prefs.Types = nil
	prefs.ChannelsResubscribedAt = map[heraldtype.Channel]time.Time{heraldtype.ChannelSMS: p.clock.Now()} // ignored
	saved, err := p.client.PutPreferences(p.ctx, "u1", prefs)
	if err != nil {
		t.Fatal(err)
	}
	if at := saved.Types["promo"].ResubscribedAt[heraldtype.ChannelEmail]; !at.Equal(p.clock.Now().Truncate(time.Microsecond)) ||
		len(saved.ChannelsResubscribedAt) != 0 || !channelOn(saved, "promo", heraldtype.ChannelEmail) {
		t.Fatalf("saved %+v", saved)
	}
	for name, call := range map[string]func(context.Context, string) (Unsubscription, error){
		"check": p.client.CheckUnsubscribe, "post": p.client.Unsubscribe} {
		if _, err := call(p.ctx, old); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND || !strings.Contains(err.Error(), "turned back on") {
			t.Errorf("%s of the old link: %v", name, err)
		}
	}
	if got, _ := p.client.GetPreferences(p.ctx, "u1"); !channelOn(got, "promo", heraldtype.ChannelEmail) {
		t.Fatal("the old link turned promo off again")
	}
	// A PUT that sends its own records does not erase Herald's.
	p.clock.Advance(time.Second)
	prefs.Types = map[string]TypePreference{"promo": {ResubscribedAt: map[heraldtype.Channel]time.Time{}}}
	if saved, err = p.client.PutPreferences(p.ctx, "u1", prefs); err != nil || saved.Types["promo"].ResubscribedAt[heraldtype.ChannelEmail].IsZero() {
		t.Fatalf("records erased: %+v %v", saved, err)
	}
	// A link sent after the re-subscription works.
	p.clock.Advance(time.Second)
	m, d := mailOf(p, se, "u1", "promo")
	if m == nil {
		t.Fatalf("not sent: %+v", d)
	}
	if _, err := p.client.Unsubscribe(p.ctx, tokenOf(t, m)); err != nil {
		t.Fatalf("a new link: %v", err)
	}
	// Opting out of e-mail altogether and back in retires that link too.
	newer := tokenOf(t, m)
	prefs.Types = nil
	prefs.OptedOutChannels = []heraldtype.Channel{heraldtype.ChannelEmail}
	p.clock.Advance(time.Second)
	if _, err := p.client.PutPreferences(p.ctx, "u1", prefs); err != nil {
		t.Fatal(err)
	}
	prefs.OptedOutChannels = nil
	p.clock.Advance(time.Second)
	if saved, err = p.client.PutPreferences(p.ctx, "u1", prefs); err != nil || saved.ChannelsResubscribedAt[heraldtype.ChannelEmail].IsZero() {
		t.Fatalf("opt back in: %+v %v", saved, err)
	}
	if _, err := p.client.Unsubscribe(p.ctx, newer); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Errorf("a link sent before the opt-in: %v", err)
	}
}
