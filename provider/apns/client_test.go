package apns

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// TestSendOverHTTP2 sends through real TLS and HTTP/2 and checks what the
// emulator received.
func TestSendOverHTTP2(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{Topics: []string{testTopic}})
	c, cfg := newTestClient(t, e, nil)
	tok := deviceToken(1)

	id := mustSend(t, c, message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	got := e.MessagesTo(tok)
	if len(got) != 1 {
		t.Fatalf("emulator recorded %d messages to the token", len(got))
	}
	r := got[0]
	if id != messageUUID(testKey) || r.APNsID != id {
		t.Errorf("Send returned %q, emulator recorded apns-id %q, want %q", id, r.APNsID, messageUUID(testKey))
	}
	if r.Proto != "HTTP/2.0" || r.Topic != testTopic || r.TeamID != cfg.TeamID || r.KeyID != cfg.KeyID || len(r.Warnings) != 0 {
		t.Errorf("recorded %+v", r)
	}
}

// TestRequestShapes pins the headers and payload of alert and data-only
// pushes (S1.4), including messageId (S0.5).
func TestRequestShapes(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now})
	c, _ := newTestClient(t, e, clock.Now)
	exp := clock.Now().Add(DefaultTTL).Unix()

	tests := []struct {
		name     string
		mode     heraldtype.PayloadMode
		prio     heraldtype.Priority
		pushType string
		priority int
		payload  string
	}{
		{"alert high", heraldtype.PayloadAlert, heraldtype.PriorityHigh, "alert", 10,
			`{"aps":{"alert":{"title":"Price drop","body":"Now 20% off"},"sound":"default"},"product":"p-1","messageId":"` + testKey + `"}`},
		{"alert normal", heraldtype.PayloadAlert, heraldtype.PriorityNormal, "alert", 10,
			`{"aps":{"alert":{"title":"Price drop","body":"Now 20% off"},"sound":"default"},"product":"p-1","messageId":"` + testKey + `"}`},
		{"alert low", heraldtype.PayloadAlert, heraldtype.PriorityLow, "alert", 5,
			`{"aps":{"alert":{"title":"Price drop","body":"Now 20% off"},"sound":"default"},"product":"p-1","messageId":"` + testKey + `"}`},
		{"data-only high", heraldtype.PayloadData, heraldtype.PriorityHigh, "background", 5,
			`{"aps":{"content-available":1},"product":"p-1","title":"Price drop","body":"Now 20% off","messageId":"` + testKey + `"}`},
		{"data-only low", heraldtype.PayloadData, heraldtype.PriorityLow, "background", 5,
			`{"aps":{"content-available":1},"product":"p-1","title":"Price drop","body":"Now 20% off","messageId":"` + testKey + `"}`},
	}
	for i, tt := range tests {
		tok := deviceToken(100 + i)
		mustSend(t, c, message(tok, tt.mode, tt.prio))
		msgs := e.MessagesTo(tok)
		if len(msgs) != 1 {
			t.Fatalf("%s: emulator recorded %d messages", tt.name, len(msgs))
		}
		r := msgs[0]
		if r.PushType != tt.pushType || r.Priority != tt.priority || r.Expiration != exp || r.CollapseID != "" ||
			r.APNsID != messageUUID(testKey) || r.Topic != testTopic || len(r.Warnings) != 0 {
			t.Errorf("%s: headers recorded as %+v, want push type %s, priority %d, expiration %d",
				tt.name, r, tt.pushType, tt.priority, exp)
		}
		var got, want any
		if err := json.Unmarshal(r.Payload, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tt.payload), &want); err != nil {
			t.Fatalf("%s: bad expectation: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, r.Payload, tt.payload)
		}
	}
}

// TestAPNsIDIsStable checks that the apns-id is a version 5 UUID derived
// from the idempotency key alone, so a retry carries the same id.
// uuidPattern matches a UUID in 8-4-4-4-12 hex digits.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func TestAPNsIDIsStable(t *testing.T) {
	a, b := messageUUID("n1.1"), messageUUID("n1.2")
	if a != messageUUID("n1.1") || a == b {
		t.Fatalf("ids %q %q", a, b)
	}
	if !uuidPattern.MatchString(a) || a[14] != '5' || !strings.ContainsRune("89ab", rune(a[19])) || strings.ToLower(a) != a {
		t.Fatalf("%q is not a lower-case version 5 UUID", a)
	}
}

func TestSendRejectsUnusableMessages(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	noToken := message(" ", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	fcmToken := message("dGVzdA:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	shortHex := message(strings.Repeat("ab", 16), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noKey := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noKey.Key = ""
	noDevice := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noDevice.Device = nil
	noNotification := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noNotification.Notification = nil
	for name, tc := range map[string]struct {
		m            *heraldtype.Message
		code         string
		tokenInvalid bool
	}{
		"nil":             {nil, codeInvalidMessage, false},
		"no notification": {noNotification, codeInvalidMessage, false},
		"no device":       {noDevice, codeInvalidMessage, false},
		"no key":          {noKey, codeInvalidMessage, false},
		"no token":        {noToken, codeInvalidMessage, true},
		"FCM token":       {fcmToken, ReasonBadDeviceToken, false},
		"short token":     {shortHex, ReasonBadDeviceToken, false},
	} {
		se := sendErr(t, c, tc.m)
		if se.Class != heraldtype.ClassPermanent || se.Code != tc.code || se.TokenInvalid != tc.tokenInvalid || se.Message == "" {
			t.Errorf("%s: got %+v", name, se)
		}
	}
	if s := e.Stats(); s.Accepted != 0 || s.Connections != 0 {
		t.Fatalf("the emulator was contacted: %+v", s)
	}
}

// TestHeraldKeysWin checks that the notification's own data cannot override
// aps or messageId (S0.5) or, in data-only mode, the title and body.
func TestHeraldKeysWin(t *testing.T) {
	for _, mode := range []heraldtype.PayloadMode{heraldtype.PayloadAlert, heraldtype.PayloadData} {
		m := message(deviceToken(1), mode, heraldtype.PriorityNormal)
		m.Notification.Data = map[string]string{"aps": "x", "messageId": "forged", "title": "t", "body": "b", "k": "v"}
		var got map[string]any
		if err := json.Unmarshal(appendPayload(nil, m.Notification, m.Key), &got); err != nil {
			t.Fatal(err)
		}
		if got["messageId"] != m.Key || got["k"] != "v" {
			t.Errorf("%s: %v", mode, got)
		}
		if _, ok := got["aps"].(map[string]any); !ok {
			t.Errorf("%s: aps overridden: %v", mode, got)
		}
		if mode == heraldtype.PayloadData && (got["title"] != "Price drop" || got["body"] != "Now 20% off") {
			t.Errorf("%s: title/body overridden: %v", mode, got)
		}
	}
}

func TestAlertWithoutText(t *testing.T) {
	n := &heraldtype.Notification{PayloadMode: heraldtype.PayloadAlert}
	if got, want := string(appendPayload(nil, n, "k")), `{"aps":{},"messageId":"k"}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestCheckPayload(t *testing.T) {
	n := func(mode heraldtype.PayloadMode, body string, data map[string]string) *heraldtype.Notification {
		return &heraldtype.Notification{Title: "t", Body: body, Data: data, PayloadMode: mode}
	}
	// The largest body that fits: 4096 minus the rest of the encoded alert
	// payload with the longest messageId.
	overhead := len(appendPayload(nil, n(heraldtype.PayloadAlert, "", nil), strings.Repeat("0", maxMessageIDLen))) +
		len(`,"body":""`)
	fits := MaxPayloadBytes - overhead
	tests := []struct {
		name string
		n    *heraldtype.Notification
		code string
	}{
		{"small", n(heraldtype.PayloadAlert, "hi", map[string]string{"a": "b"}), ""},
		{"exactly at the limit", n(heraldtype.PayloadAlert, strings.Repeat("x", fits), nil), ""},
		{"one byte over", n(heraldtype.PayloadAlert, strings.Repeat("x", fits+1), nil), heraldtype.ETOOLARGE},
		{"escaping counts", n(heraldtype.PayloadAlert, strings.Repeat("\"", fits/2+1), nil), heraldtype.ETOOLARGE},
		{"data counts", n(heraldtype.PayloadData, "", map[string]string{"k": strings.Repeat("x", 4096)}), heraldtype.ETOOLARGE},
		{"aps reserved", n(heraldtype.PayloadAlert, "", map[string]string{"aps": "x"}), heraldtype.EINVALID},
		{"messageId reserved", n(heraldtype.PayloadAlert, "", map[string]string{"messageId": "x"}), heraldtype.EINVALID},
		{"title reserved in data mode", n(heraldtype.PayloadData, "", map[string]string{"title": "x"}), heraldtype.EINVALID},
		{"title allowed in alert mode", n(heraldtype.PayloadAlert, "", map[string]string{"title": "x"}), ""},
		{"empty key", n(heraldtype.PayloadAlert, "", map[string]string{"": "x"}), heraldtype.EINVALID},
		{"nil", nil, heraldtype.EINVALID},
	}
	for _, tt := range tests {
		err := CheckPayload(tt.n)
		if got := heraldtype.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q (%v), want %q", tt.name, got, err, tt.code)
		}
	}
	err := CheckPayload(n(heraldtype.PayloadAlert, strings.Repeat("x", fits+1), nil))
	if msg := heraldtype.ErrorMessage(err); !strings.Contains(msg, "4097 bytes") || !strings.Contains(msg, "4096") {
		t.Errorf("message %q should name the size and the limit", msg)
	}
	var c *Client
	if heraldtype.ErrorCode(c.ValidateNotification(n(heraldtype.PayloadAlert, strings.Repeat("x", 5000), nil))) != heraldtype.ETOOLARGE {
		t.Error("ValidateNotification accepted an oversized payload")
	}
}

// TestOversizedPayloadIsPermanent sends past CheckPayload: APNs answers 413
// PayloadTooLarge, a request bug that does not blame the token.
func TestOversizedPayloadIsPermanent(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	m := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	m.Notification.Body = strings.Repeat("x", 5000)
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassPermanent || se.Code != ReasonPayloadTooLarge || se.TokenInvalid || !strings.Contains(se.Message, "413") {
		t.Fatalf("got %+v", se)
	}
	if n := e.Stats().Rejected[ReasonPayloadTooLarge]; n != 1 {
		t.Fatalf("emulator counted %d PayloadTooLarge", n)
	}
}

// TestConcurrentSends shares one Client and its provider token between
// goroutines (run with -race).
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	const n = 64
	errs := make(chan error, n)
	for i := range n {
		go func() {
			m := message(deviceToken(i), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
			m.Key = "n." + strconv.Itoa(i)
			_, err := c.Send(context.Background(), m)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if s := e.Stats(); s.Accepted != n || s.ProviderTokens != 1 {
		t.Fatalf("stats %+v, want %d accepted with one provider token", s, n)
	}
}
