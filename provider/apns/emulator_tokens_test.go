package apns

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// The emulator answers device tokens as APNs does (issue 21 item 5), and
// the Client classifies each answer: a token of another app is the
// sender's configuration (DeviceTokenNotForTopic), a token APNs does not
// know for this environment is BadDeviceToken (neither invalidates the
// device, S0.3 note), an uninstalled app's token is 410 Unregistered (the
// device is invalidated).
func TestEmulatorDeviceTokens(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := startEmulator(t, apnsemu.Config{Now: clock.Now, Topics: []string{testTopic, "com.example.other"}, RegisteredTokensOnly: true})
	c, _ := newTestClient(t, e, clock.Now)
	send := func(tok string) *heraldtype.SendError {
		_, err := c.Send(context.Background(), message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh))
		return heraldtype.AsSendError(err)
	}

	mine := e.NewDeviceToken(testTopic)
	if len(mine) != 64 || strings.Trim(mine, "0123456789abcdef") != "" {
		t.Fatalf("issued token %q, want 64 hex digits", mine)
	}
	if se := send(mine); se != nil {
		t.Fatalf("send to an issued token: %+v", se)
	}
	tests := []struct {
		name, token, reason string
		tokenInvalid        bool
	}{
		{"never issued", deviceToken(7), ReasonBadDeviceToken, false},
		{"another app's token", e.NewDeviceToken("com.example.other"), ReasonDeviceTokenNotForTopic, false},
	}
	for _, tt := range tests {
		se := send(tt.token)
		if se == nil || se.Class != heraldtype.ClassPermanent || se.Code != tt.reason || se.TokenInvalid != tt.tokenInvalid {
			t.Errorf("%s: %+v, want permanent %s, token invalid %v", tt.name, se, tt.reason, tt.tokenInvalid)
		}
	}

	// The app is uninstalled: 410 Unregistered, the token is dead.
	req, _ := http.NewRequest(http.MethodDelete, e.URL()+"/emulator/device-tokens/"+mine, nil)
	resp, err := h2Client(e).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if se := send(mine); se == nil || se.Code != ReasonUnregistered || !se.TokenInvalid {
		t.Fatalf("send to an uninstalled app's token: %+v, want Unregistered, token invalid", se)
	}

	// Registering a token over HTTP, as a test of another language would.
	body := `{"token":"` + deviceToken(8) + `","topic":"` + testTopic + `"}`
	resp, err = h2Client(e).Post(e.URL()+"/emulator/device-tokens", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Token, Topic string }
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || got.Token != deviceToken(8) || got.Topic != testTopic {
		t.Fatalf("POST /emulator/device-tokens = %d %+v", resp.StatusCode, got)
	}
	if se := send(deviceToken(8)); se != nil {
		t.Fatalf("send to a registered token: %+v", se)
	}
	if err := e.RegisterDeviceToken("tok-1", ""); err == nil {
		t.Error("RegisterDeviceToken accepted a token that is not hex")
	}
	s := e.Stats()
	if s.Accepted != 2 || s.Rejected[ReasonBadDeviceToken] != 1 || s.Rejected[ReasonDeviceTokenNotForTopic] != 1 || s.Rejected[ReasonUnregistered] != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// Without RegisteredTokensOnly any well-formed token is accepted, but a
// token issued for another app is still refused.
func TestEmulatorDeviceTokensLenient(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, _ := newTestClient(t, e, nil)
	if _, err := c.Send(context.Background(), message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err != nil {
		t.Fatalf("a made-up well-formed token: %v", err)
	}
	_, err := c.Send(context.Background(), message(e.NewDeviceToken("com.example.other"), heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	if se := heraldtype.AsSendError(err); se == nil || se.Code != ReasonDeviceTokenNotForTopic {
		t.Fatalf("another app's token: %v, want DeviceTokenNotForTopic", err)
	}
}
