package fcm

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

func TestSendReturnsMessageID(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)

	id, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, "tok-1", heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	if err != nil {
		t.Fatal(err)
	}
	got := e.Messages()
	if len(got) != 1 || got[0].MessageID != id || id == "" || got[0].Token != "tok-1" || got[0].Project != "p" {
		t.Fatalf("Send returned %q, emulator recorded %+v", id, got)
	}
}

// TestRequestShapes pins the exact request for each platform and payload
// mode (S1.4), including data.messageId (S0.5).
func TestRequestShapes(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, fcmemu.Config{Now: clock.Now})
	c := newTestClient(t, e, clock.Now)
	exp := strconv.FormatInt(clock.Now().Add(MaxTTL).Unix(), 10)
	const key = "01HZX3K9Q8N7M6V5T4R3E2W1Q0.42"

	tests := []struct {
		name     string
		platform heraldtype.Platform
		mode     heraldtype.PayloadMode
		prio     heraldtype.Priority
		want     string
	}{
		{"android alert high", heraldtype.PlatformAndroid, heraldtype.PayloadAlert, heraldtype.PriorityHigh, `{
			"token":"t","data":{"product":"p-1","messageId":"` + key + `"},
			"notification":{"title":"Price drop","body":"Now 20% off"},
			"android":{"priority":"high","ttl":"2419200s"}}`},
		{"android alert normal", heraldtype.PlatformAndroid, heraldtype.PayloadAlert, heraldtype.PriorityNormal, `{
			"token":"t","data":{"product":"p-1","messageId":"` + key + `"},
			"notification":{"title":"Price drop","body":"Now 20% off"},
			"android":{"priority":"normal","ttl":"2419200s"}}`},
		{"android data-only", heraldtype.PlatformAndroid, heraldtype.PayloadData, heraldtype.PriorityLow, `{
			"token":"t","data":{"product":"p-1","title":"Price drop","body":"Now 20% off","messageId":"` + key + `"},
			"android":{"priority":"high","ttl":"2419200s"}}`},
		{"ios alert high", heraldtype.PlatformIOS, heraldtype.PayloadAlert, heraldtype.PriorityHigh, `{
			"token":"t","data":{"product":"p-1","messageId":"` + key + `"},
			"notification":{"title":"Price drop","body":"Now 20% off"},
			"apns":{"headers":{"apns-push-type":"alert","apns-priority":"10","apns-expiration":"` + exp + `"},
				"payload":{"aps":{"alert":{"title":"Price drop","body":"Now 20% off"}}}}}`},
		{"ios alert low", heraldtype.PlatformIOS, heraldtype.PayloadAlert, heraldtype.PriorityLow, `{
			"token":"t","data":{"product":"p-1","messageId":"` + key + `"},
			"notification":{"title":"Price drop","body":"Now 20% off"},
			"apns":{"headers":{"apns-push-type":"alert","apns-priority":"5","apns-expiration":"` + exp + `"},
				"payload":{"aps":{"alert":{"title":"Price drop","body":"Now 20% off"}}}}}`},
		{"ios data-only", heraldtype.PlatformIOS, heraldtype.PayloadData, heraldtype.PriorityHigh, `{
			"token":"t","data":{"product":"p-1","title":"Price drop","body":"Now 20% off","messageId":"` + key + `"},
			"apns":{"headers":{"apns-push-type":"background","apns-priority":"5","apns-expiration":"` + exp + `"},
				"payload":{"aps":{"content-available":1}}}}`},
		{"web alert high", heraldtype.PlatformWeb, heraldtype.PayloadAlert, heraldtype.PriorityHigh, `{
			"token":"t","data":{"product":"p-1","messageId":"` + key + `"},
			"notification":{"title":"Price drop","body":"Now 20% off"},
			"webpush":{"headers":{"TTL":"2419200","Urgency":"high"}}}`},
		{"web data-only low", heraldtype.PlatformWeb, heraldtype.PayloadData, heraldtype.PriorityLow, `{
			"token":"t","data":{"product":"p-1","title":"Price drop","body":"Now 20% off","messageId":"` + key + `"},
			"webpush":{"headers":{"TTL":"2419200","Urgency":"low"}}}`},
	}
	for _, tt := range tests {
		e.Reset()
		if _, err := c.Send(context.Background(), message(tt.platform, "t", tt.mode, tt.prio)); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		msgs := e.Messages()
		if len(msgs) != 1 {
			t.Fatalf("%s: emulator recorded %d messages", tt.name, len(msgs))
		}
		var got, want any
		if err := json.Unmarshal(msgs[0].Message, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatalf("%s: bad expectation: %v", tt.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, msgs[0].Message, tt.want)
		}
	}
}

// TestHeraldKeysWin checks that the notification's own data cannot override
// data.messageId (S0.5) or, in data-only mode, the title and body.
func TestHeraldKeysWin(t *testing.T) {
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadData, heraldtype.PriorityNormal)
	m.Notification.Data = map[string]string{"messageId": "forged", "title": "x", "body": "y", "k": "v"}
	var got struct {
		Message struct{ Data map[string]string } `json:"message"`
	}
	if err := json.Unmarshal(appendRequest(nil, m, time.Hour, time.Now()), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"messageId": m.Key, "title": "Price drop", "body": "Now 20% off", "k": "v"}
	if !reflect.DeepEqual(got.Message.Data, want) {
		t.Fatalf("data = %v, want %v", got.Message.Data, want)
	}
}

func TestSendRejectsUnusableMessages(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	noToken := message(heraldtype.PlatformIOS, " ", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	badPlatform := message("blackberry", "t", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noKey := message(heraldtype.PlatformIOS, "t", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	noKey.Key = ""
	for name, tc := range map[string]struct {
		m            *heraldtype.Message
		tokenInvalid bool
	}{
		"nil": {nil, false}, "no token": {noToken, true}, "bad platform": {badPlatform, false}, "no key": {noKey, false},
	} {
		se := sendErr(t, c, tc.m)
		if se.Class != heraldtype.ClassPermanent || se.Code != codeInvalidMessage || se.TokenInvalid != tc.tokenInvalid {
			t.Errorf("%s: got %+v", name, se)
		}
	}
	if n := e.Stats().Accepted; n != 0 {
		t.Fatalf("emulator accepted %d messages", n)
	}
}

func TestCheckPayload(t *testing.T) {
	n := func(mode heraldtype.PayloadMode, body string, data map[string]string) *heraldtype.Notification {
		return &heraldtype.Notification{Title: "t", Body: body, Data: data, PayloadMode: mode}
	}
	// The largest body that fits: 4096 minus "title"+"t", "body", and
	// "messageId" with its longest value.
	fits := MaxPayloadBytes - (5 + 1) - 4 - (9 + maxMessageIDLen)
	tests := []struct {
		name string
		n    *heraldtype.Notification
		code string
	}{
		{"small", n(heraldtype.PayloadAlert, "hi", map[string]string{"a": "b"}), ""},
		{"exactly at the limit", n(heraldtype.PayloadAlert, strings.Repeat("x", fits), nil), ""},
		{"one byte over", n(heraldtype.PayloadAlert, strings.Repeat("x", fits+1), nil), heraldtype.ETOOLARGE},
		{"data counts", n(heraldtype.PayloadData, "", map[string]string{"k": strings.Repeat("x", 4096)}), heraldtype.ETOOLARGE},
		{"messageId reserved", n(heraldtype.PayloadAlert, "", map[string]string{"messageId": "x"}), heraldtype.EINVALID},
		{"title reserved in data mode", n(heraldtype.PayloadData, "", map[string]string{"title": "x"}), heraldtype.EINVALID},
		{"title allowed in alert mode", n(heraldtype.PayloadAlert, "", map[string]string{"title": "x"}), ""},
		{"FCM reserved from", n(heraldtype.PayloadAlert, "", map[string]string{"from": "x"}), heraldtype.EINVALID},
		{"FCM reserved google prefix", n(heraldtype.PayloadAlert, "", map[string]string{"google.x": "x"}), heraldtype.EINVALID},
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
	if c.ValidateNotification(n(heraldtype.PayloadAlert, "", map[string]string{"from": "x"})) == nil {
		t.Error("ValidateNotification accepted a reserved key")
	}
}

// TestOversizedPayloadIsPermanent sends past CheckPayload: FCM answers 400
// without details, which is permanent but does not blame the token.
func TestOversizedPayloadIsPermanent(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	m.Notification.Body = strings.Repeat("x", 5000)
	se := sendErr(t, c, m)
	if se.Class != heraldtype.ClassPermanent || se.Code != CodeInvalidArgument || se.TokenInvalid || se.Message != "Message is too big" {
		t.Fatalf("got %+v", se)
	}
}
