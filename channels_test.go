package herald

// Every channel end to end: one notification across push (Android through
// FCM, iOS through APNs, web through Web Push), SMS, email and the in-app
// inbox, each reaching the right emulator exactly once (issue 5, S3.6,
// S4.5).

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/apns"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/provider/twilio"
	"github.com/heraldhq/herald/provider/webpush"
	"github.com/heraldhq/herald/store/sqlite"
)

type channelRig struct {
	*pipeline
	apns    *apnsemu.Emulator
	webpush *webpushemu.Emulator
	twilio  *twilioemu.Emulator
	smtp    *smtpemu.Emulator
}

func newChannelRig(t *testing.T) *channelRig {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	start := func(name string, s interface {
		Start(string) (string, error)
		Close() error
	}) {
		if _, err := s.Start("127.0.0.1:0"); err != nil {
			t.Fatalf("%s emulator: %v", name, err)
		}
		t.Cleanup(func() { s.Close() })
	}
	fe := fcmemu.New(fcmemu.Config{})
	start("fcm", fe)
	ae, err := apnsemu.New(apnsemu.Config{Topics: []string{"app.herald.test"}})
	if err != nil {
		t.Fatal(err)
	}
	start("apns", ae)
	we := webpushemu.New(webpushemu.Config{})
	start("webpush", we)
	te := twilioemu.New(twilioemu.Config{})
	start("twilio", te)
	se, err := smtpemu.New(smtpemu.Config{})
	if err != nil {
		t.Fatal(err)
	}
	start("smtp", se)

	must := func(p Provider, err error) Provider {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p8, keyID, err := ae.NewProviderKey(apnsemu.DefaultTeamID)
	if err != nil {
		t.Fatal(err)
	}
	acfg := apns.Config{KeyP8: p8, KeyID: keyID, TeamID: apnsemu.DefaultTeamID, Topic: "app.herald.test", Endpoint: ae.URL(), RootCAs: ae.CertPool()}
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	host, port := se.HostPort()
	providers := map[string]Provider{
		"fcm":  must(fcm.New(fcm.Config{CredentialsJSON: fe.ServiceAccountJSON("p"), Endpoint: fe.URL()})),
		"apns": must(apns.New(acfg)),
		"webpush": must(webpush.New(webpush.Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@herald.test",
			AllowInsecureEndpoints: true, AllowPrivateEndpoints: true})),
		"twilio": must(twilio.New(twilio.Config{AccountSID: te.AccountSID(), AuthToken: te.AuthToken(), From: "+15005550006", BaseURL: te.URL()})),
		"smtp":   must(smtp.New(smtp.Config{Host: host, Port: port, TLS: smtp.TLSNone, From: "Herald <herald@herald.test>"})),
	}
	c, err := NewClient(Config{
		Store: st, Providers: providers, Now: clock.Now,
		PushRouting: map[heraldtype.Platform]string{
			heraldtype.PlatformAndroid: "fcm", heraldtype.PlatformIOS: "apns", heraldtype.PlatformWeb: "webpush",
		},
		InboxPollInterval: time.Hour, // signals must carry the stream, not the poll
	})
	if err != nil {
		t.Fatal(err)
	}
	return &channelRig{
		pipeline: &pipeline{t: t, ctx: ctx, client: c, store: st, em: fe, clock: clock},
		apns:     ae, webpush: we, twilio: te, smtp: se,
	}
}

const iosToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

// everyone registers u1 with a phone, an e-mail address and an Android, an
// iOS and a web device; it returns the web subscription's endpoint.
func (r *channelRig) everyone() string {
	r.t.Helper()
	if _, err := r.client.PutUser(r.ctx, "u1", UserInput{Phone: "+15550001111", Email: "u1@herald.test"}); err != nil {
		r.t.Fatal(err)
	}
	endpoint, p256dh, auth := r.webpush.NewSubscription()
	for _, d := range []DeviceInput{
		{DeviceID: "android", Token: "tok-android", Platform: "android"},
		{DeviceID: "iphone", Token: iosToken, Platform: "ios"},
		{DeviceID: "browser", Token: endpoint, Platform: "web", P256DH: p256dh, Auth: auth},
	} {
		if _, err := r.client.RegisterDevice(r.ctx, "u1", d); err != nil {
			r.t.Fatalf("register %s: %v", d.DeviceID, err)
		}
	}
	return endpoint
}

var allChannels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp}

func TestEveryChannelReachesItsEmulatorOnce(t *testing.T) {
	t.Parallel()
	r := newChannelRig(t)
	endpoint := r.everyone()
	res := r.enqueue(Request{UserID: "u1", Title: "Booked", Body: "See you at 7", Channels: allChannels,
		Data: map[string]string{"reservation": "42"}})
	if n := res.Notifications[0].Deliveries; n != 6 {
		t.Fatalf("%d deliveries, want 6 (3 devices, sms, email, in-app)", n)
	}
	r.work()
	st := r.status(res.Notifications[0].ID)
	if st.Status != heraldtype.HistorySent {
		for _, d := range st.Deliveries {
			t.Logf("%s %s %s %s", d.Channel, d.Provider, d.State, d.LastErrorCode)
		}
		t.Fatalf("status %s, want SENT", st.Status)
	}
	for name, n := range map[string]int{
		"fcm (android)":    len(r.em.MessagesTo("tok-android")),
		"apns (ios)":       len(r.apns.MessagesTo(iosToken)),
		"webpush (web)":    len(r.webpush.MessagesTo(endpoint)),
		"twilio (sms)":     len(r.twilio.MessagesTo("+15550001111")),
		"smtp (email)":     len(r.smtp.MessagesTo("u1@herald.test")),
		"fcm in total":     len(r.em.Messages()),
		"apns in total":    len(r.apns.Messages()),
		"webpush in total": len(r.webpush.Messages()),
	} {
		if n != 1 {
			t.Errorf("%s received %d messages, want 1", name, n)
		}
	}
	inbox, err := r.client.ListInbox(r.ctx, "u1", InboxFilter{})
	if err != nil || len(inbox.Items) != 1 || inbox.Unread != 1 || inbox.Items[0].Title != "Booked" {
		t.Fatalf("inbox = %+v, %v; want the one item, unread", inbox, err)
	}
	if msgs := r.smtp.MessagesTo("u1@herald.test"); msgs[0].Subject != "Booked" || !strings.Contains(msgs[0].Text, "See you at 7") {
		t.Errorf("mail = %q / %q", msgs[0].Subject, msgs[0].Text)
	}
}

func TestSMSStopSuppressesTheNumber(t *testing.T) {
	t.Parallel()
	r := newChannelRig(t)
	r.everyone()
	sms := []heraldtype.Channel{heraldtype.ChannelSMS}
	r.twilio.OptOut("+15550001111") // the user replied STOP
	first := r.enqueue(Request{UserID: "u1", Body: "one", Channels: sms}).Notifications[0].ID
	r.work()
	if d := r.only(first); d.State != heraldtype.StateDead || d.LastErrorCode != "twilio_21610" {
		t.Fatalf("sms to a STOPped number: %s %s, want dead twilio_21610", d.State, d.LastErrorCode)
	}
	sup, err := r.client.ListSuppressions(r.ctx, heraldtype.ChannelSMS)
	if err != nil || len(sup) != 1 || sup[0].Address != "+15550001111" {
		t.Fatalf("suppressions = %+v, %v", sup, err)
	}
	second := r.enqueue(Request{UserID: "u1", Body: "two", Channels: sms}).Notifications[0].ID
	r.work()
	if d := r.only(second); d.State != heraldtype.StateSkipped || d.LastErrorCode != "suppressed" {
		t.Fatalf("sms to a suppressed number: %s %s, want skipped suppressed", d.State, d.LastErrorCode)
	}
	// START: the number opts in again.
	r.twilio.OptIn("+15550001111")
	if err := r.client.DeleteSuppression(r.ctx, heraldtype.ChannelSMS, "+15550001111"); err != nil {
		t.Fatal(err)
	}
	third := r.enqueue(Request{UserID: "u1", Body: "three", Channels: sms}).Notifications[0].ID
	r.work()
	if d := r.only(third); d.State != heraldtype.StateSent {
		t.Fatalf("after opting in again: %s", d.State)
	}
	if n := len(r.twilio.MessagesTo("+15550001111")); n != 1 {
		t.Fatalf("twilio accepted %d messages, want 1", n)
	}
}

func TestChannelWithoutAddressIsSkippedNotDropped(t *testing.T) {
	t.Parallel()
	r := newChannelRig(t)
	if _, err := r.client.PutUser(r.ctx, "u2", UserInput{}); err != nil {
		t.Fatal(err)
	}
	res := r.enqueue(Request{UserID: "u2", Body: "x", Channels: []heraldtype.Channel{heraldtype.ChannelSMS, heraldtype.ChannelEmail}})
	r.work()
	st := r.status(res.Notifications[0].ID)
	if len(st.Deliveries) != 2 {
		t.Fatalf("%d deliveries, want 2 skipped", len(st.Deliveries))
	}
	for _, d := range st.Deliveries {
		if d.State != heraldtype.StateSkipped || d.LastErrorCode != "no_address" {
			t.Errorf("%s delivery: %s %s, want skipped no_address", d.Channel, d.State, d.LastErrorCode)
		}
	}
}

func TestTriggerTimeLimitsPerChannel(t *testing.T) {
	t.Parallel()
	r := newChannelRig(t)
	r.everyone()
	long := strings.Repeat("가", 1601)
	_, err := r.client.Enqueue(r.ctx, Request{UserID: "u1", Type: "t", Body: long, Channels: []heraldtype.Channel{heraldtype.ChannelSMS}})
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("an SMS body over 1600 characters: %v, want invalid_argument", err)
	}
	// The same body is fine in the inbox alone.
	if _, err := r.client.Enqueue(r.ctx, Request{UserID: "u1", Type: "t", Body: long[:3*1000], Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatalf("in-app only: %v", err)
	}
	_, err = r.client.RegisterDevice(r.ctx, "u1", DeviceInput{DeviceID: "bad", Token: "https://push.example/x", Platform: "web"})
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a web device without subscription keys: %v, want invalid_argument", err)
	}
}

func TestInboxStreamGetsNewItemsAndResumes(t *testing.T) {
	t.Parallel()
	r := newChannelRig(t)
	r.everyone()
	inApp := []heraldtype.Channel{heraldtype.ChannelInApp}
	r.enqueue(Request{UserID: "u1", Title: "before the stream", Channels: inApp})

	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	got := make(chan heraldtype.InboxItem, 10)
	done := make(chan error, 1)
	go func() {
		done <- r.client.StreamInbox(ctx, "u1", -1, func(it heraldtype.InboxItem) error { got <- it; return nil }, func() error { return nil })
	}()
	waitSubscribed(t, r.client, 1)
	start := time.Now()
	r.enqueue(Request{UserID: "u1", Title: "live", Channels: inApp})
	select {
	case it := <-got:
		if it.Title != "live" {
			t.Fatalf("first streamed item %q, want the new one only", it.Title)
		}
		t.Logf("enqueue → stream: %v", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("the new item never reached the stream")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Resume from 0 (Last-Event-ID): everything, oldest first.
	var titles []string
	ctx2, cancel2 := context.WithCancel(r.ctx)
	defer cancel2()
	err := r.client.StreamInbox(ctx2, "u1", 0, func(it heraldtype.InboxItem) error {
		titles = append(titles, it.Title)
		if len(titles) == 2 {
			return errStop
		}
		return nil
	}, func() error { return nil })
	if !errors.Is(err, errStop) || strings.Join(titles, ",") != "before the stream,live" {
		t.Fatalf("resumed stream = %v (%v)", titles, err)
	}
	if err := r.client.StreamInbox(r.ctx, "nobody", 0, nil, nil); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("stream of an unknown user: %v", err)
	}
}

var errStop = errors.New("stop")

func waitSubscribed(t *testing.T, c *Client, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.hub.Subscribers() < n {
		if time.Now().After(deadline) {
			t.Fatal("stream never subscribed")
		}
		time.Sleep(time.Millisecond)
	}
}
