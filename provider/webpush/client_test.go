package webpush

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// TestRoundTrip sends through the emulator, which verifies VAPID and
// decrypts: what the service worker would receive is exactly Payload.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, webpushemu.Config{Now: clock.Now})
	c := newTestClient(t, clock.Now)

	for _, mode := range []heraldtype.PayloadMode{heraldtype.PayloadAlert, heraldtype.PayloadData} {
		ep, p, a := e.NewSubscription()
		m := message(ep, p, a, mode, heraldtype.PriorityHigh)
		id, err := c.Send(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		got := e.MessagesTo(ep)
		if len(got) != 1 {
			t.Fatalf("%s: emulator recorded %d messages, want 1", mode, len(got))
		}
		r := got[0]
		if id != e.URL()+"/message/"+r.MessageID {
			t.Errorf("%s: Send returned %q, want the Location of message %q", mode, id, r.MessageID)
		}
		if r.TTL != int(MaxTTL/time.Second) || r.Urgency != "high" || r.Topic != "" || r.Subject != testSubject || r.VAPIDKey != c.PublicKey() {
			t.Errorf("%s: recorded headers %+v", mode, r)
		}
		pl := &Payload{}
		if err := json.Unmarshal([]byte(r.Plaintext), pl); err != nil {
			t.Fatal(err)
		}
		want := &Payload{Title: "Price drop", Body: "Now 20% off", Data: map[string]string{"product": "p-1"},
			MessageID: testKey, Mode: string(mode), Type: "PRICE_DROP"}
		if !reflect.DeepEqual(pl, want) {
			t.Errorf("%s: service worker receives %+v, want %+v", mode, pl, want)
		}
		if !json.Valid(r.Payload) {
			t.Errorf("%s: Payload is not the JSON plaintext: %s", mode, r.Payload)
		}
	}
}

// TestRequestHeaders pins TTL, Urgency (S3.4 priority) and Topic.
func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	cfg := testConfig(nil)
	cfg.DefaultTTL = 90 * time.Second
	cfg.TopicDataKey = "collapse"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("product 1/", 5)
	tests := []struct {
		prio          heraldtype.Priority
		topic         string
		urgency, want string
	}{
		{heraldtype.PriorityHigh, "", "high", ""},
		{heraldtype.PriorityNormal, "price-p1", "normal", "price-p1"},
		{heraldtype.PriorityLow, long, "low", topicFor(long)},
		{"", "", "normal", ""},
	}
	for _, tt := range tests {
		ep, p, a := e.NewSubscription()
		m := message(ep, p, a, heraldtype.PayloadAlert, tt.prio)
		if tt.topic != "" {
			m.Notification.Data["collapse"] = tt.topic
		}
		if _, err := c.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
		r := e.MessagesTo(ep)[0]
		if r.TTL != 90 || r.Urgency != tt.urgency || r.Topic != tt.want {
			t.Errorf("priority %q topic %q: TTL=%d Urgency=%q Topic=%q, want 90 %q %q", tt.prio, tt.topic, r.TTL, r.Urgency, r.Topic, tt.urgency, tt.want)
		}
	}
	if h := topicFor(long); len(h) != maxTopicLen || !validTopic(h) || h == topicFor(long+"x") {
		t.Errorf("hashed topic %q", h)
	}
}

// TestVAPIDToken checks the claims and the per-origin cache: exp 12 h
// ahead, aud the endpoint's origin, sub verbatim, renewed an hour before
// it lapses.
func TestVAPIDToken(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	c := newTestClient(t, clock.Now)
	parse := func(h string) jwt.MapClaims {
		t.Helper()
		tok, k, ok := strings.Cut(strings.TrimPrefix(h, "vapid t="), ", k=")
		if !ok || !strings.HasPrefix(h, "vapid t=") || k != c.PublicKey() {
			t.Fatalf("Authorization %q is not vapid t=…, k=<public key>", h)
		}
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(tok, claims); err != nil {
			t.Fatal(err)
		}
		return claims
	}
	h1, _ := c.signer.header("https://fcm.googleapis.com")
	cl := parse(h1)
	exp, _ := cl.GetExpirationTime()
	if cl["aud"] != "https://fcm.googleapis.com" || cl["sub"] != testSubject || !exp.Equal(clock.Now().Add(12*time.Hour)) {
		t.Errorf("claims %v", cl)
	}
	if h2, _ := c.signer.header("https://updates.push.services.mozilla.com"); parse(h2)["aud"] != "https://updates.push.services.mozilla.com" {
		t.Error("a second origin reused the first origin's token")
	}
	clock.Advance(10 * time.Hour)
	if h, _ := c.signer.header("https://fcm.googleapis.com"); h != h1 {
		t.Error("the token was re-signed while still fresh")
	}
	clock.Advance(time.Hour + time.Second)
	if h, _ := c.signer.header("https://fcm.googleapis.com"); h == h1 {
		t.Error("the token was not renewed within an hour of its expiry")
	}
}

// TestInvalidSubscription: a device whose subscription cannot be used is
// dead (permanent, TokenInvalid); a device of another platform is a
// routing mistake and is left alone.
func TestInvalidSubscription(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	ep, p, a := e.NewSubscription()
	strict, err := New(Config{VAPIDPublicKey: testKeys()[0], VAPIDPrivateKey: testKeys()[1], Subject: testSubject})
	if err != nil {
		t.Fatal(err)
	}
	lax := newTestClient(t, nil)
	good := "https://push.example/send/abc"
	tests := []struct {
		name   string
		c      *Client
		edit   func(d *heraldtype.Device)
		substr string
	}{
		{"no endpoint", lax, func(d *heraldtype.Device) { d.Token = "" }, "no subscription endpoint"},
		{"not a URL", lax, func(d *heraldtype.Device) { d.Token = "fcm-token:APA91b" }, "not an absolute URL"},
		{"ftp", lax, func(d *heraldtype.Device) { d.Token = "ftp://push.example/x" }, "not an https URL"},
		{"user info", lax, func(d *heraldtype.Device) { d.Token = "https://u:p@push.example/x" }, "user info"},
		{"too long", lax, func(d *heraldtype.Device) { d.Token = good + strings.Repeat("a", maxEndpointLen) }, "over"},
		{"http refused", strict, func(d *heraldtype.Device) { d.Token = "http://push.example/x" }, "not https"},
		{"loopback IP", strict, func(d *heraldtype.Device) { d.Token = "https://127.0.0.1:8443/push/x" }, "non-public"},
		{"metadata IP", strict, func(d *heraldtype.Device) { d.Token = "https://169.254.169.254/latest" }, "non-public"},
		{"private IPv6", strict, func(d *heraldtype.Device) { d.Token = "https://[fd00::1]/x" }, "non-public"},
		{"mapped IPv4", strict, func(d *heraldtype.Device) { d.Token = "https://[::ffff:10.0.0.1]/x" }, "non-public"},
		{"localhost", strict, func(d *heraldtype.Device) { d.Token = "https://LocalHost./x" }, "localhost"},
		{"no keys", lax, func(d *heraldtype.Device) { d.WebPushP256DH, d.WebPushAuth = "", "" }, "no p256dh and auth"},
		{"short p256dh", lax, func(d *heraldtype.Device) { d.WebPushP256DH = b64(make([]byte, 33)) }, "65-byte"},
		{"p256dh off curve", lax, func(d *heraldtype.Device) { k := make([]byte, 65); k[0] = 4; d.WebPushP256DH = b64(k) }, "not a point"},
		{"p256dh not base64", lax, func(d *heraldtype.Device) { d.WebPushP256DH = "!!" }, "not base64url"},
		{"auth length", lax, func(d *heraldtype.Device) { d.WebPushAuth = b64(make([]byte, 12)) }, "want 16"},
	}
	for _, tt := range tests {
		m := message(ep, p, a, heraldtype.PayloadAlert, heraldtype.PriorityNormal)
		tt.edit(m.Device)
		se := sendErr(t, tt.c, m)
		if se.Class != heraldtype.ClassPermanent || se.Code != CodeInvalidSubscription || !se.TokenInvalid || !strings.Contains(se.Message, tt.substr) {
			t.Errorf("%s: %+v, want permanent %s TokenInvalid containing %q", tt.name, se, CodeInvalidSubscription, tt.substr)
		}
	}
	if got := len(e.Messages()); got != 0 {
		t.Errorf("%d messages reached the emulator", got)
	}

	// Standard base64 and padding, as some registration code sends them,
	// still work.
	m := message(ep, toStd(p), toStd(a)+"==", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if _, err := lax.Send(context.Background(), m); err != nil {
		t.Errorf("standard-base64 keys: %v", err)
	}

	m.Device.Platform = heraldtype.PlatformAndroid
	if se := sendErr(t, lax, m); se.Class != heraldtype.ClassPermanent || se.Code != codeInvalidMessage || se.TokenInvalid {
		t.Errorf("android device: %+v", se)
	}
	for name, m := range map[string]*heraldtype.Message{
		"nil": nil, "no notification": {Key: "k", Device: m.Device}, "no device": {Key: "k", Notification: m.Notification},
		"no key": {Notification: m.Notification, Device: m.Device},
	} {
		if se := sendErr(t, lax, m); se.Code != codeInvalidMessage || se.TokenInvalid {
			t.Errorf("%s: %+v", name, se)
		}
	}
}

func toStd(s string) string {
	return strings.NewReplacer("-", "+", "_", "/").Replace(s)
}

// TestValidateDevice: registration-time checks name the faulty field.
func TestValidateDevice(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, webpushemu.Config{})
	ep, p, a := e.NewSubscription()
	lax := newTestClient(t, nil)
	strict, err := New(Config{VAPIDPublicKey: testKeys()[0], VAPIDPrivateKey: testKeys()[1], Subject: testSubject})
	if err != nil {
		t.Fatal(err)
	}
	dev := func(ep, p, a string) *heraldtype.Device {
		return &heraldtype.Device{Platform: heraldtype.PlatformWeb, Token: ep, WebPushP256DH: p, WebPushAuth: a}
	}
	if err := lax.ValidateDevice(dev(ep, p, a)); err != nil {
		t.Errorf("emulator subscription with a lax client: %v", err)
	}
	tests := []struct {
		c     *Client
		d     *heraldtype.Device
		field string
	}{
		{strict, dev(ep, p, a), "token"},
		{lax, dev("not a url", p, a), "token"},
		{lax, dev(ep, "", a), "p256dh"},
		{lax, dev(ep, p, "AAAA"), "auth"},
	}
	for _, tt := range tests {
		var he *heraldtype.Error
		if err := tt.c.ValidateDevice(tt.d); !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != tt.field {
			t.Errorf("%+v: %v, want EINVALID on %s", tt.d, err, tt.field)
		}
	}
	if heraldtype.ErrorCode(lax.ValidateDevice(nil)) != heraldtype.EINVALID {
		t.Error("nil device accepted")
	}
}
