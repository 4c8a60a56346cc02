package fcm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// realToken has the shape of a real FCM registration token (a Firebase
// installation id, ':' and "APA91b…"; 163 characters).
const realToken = "cXzq3TbWQ0ePfwxAbcDeF1:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ-hQMRKRrZuJAEcl7B338qju59zJMjw2DELjzEvxwYv7hH5Ynpc1ODQ0aT4U4OFEeco8ohsN5PjL1iC2dNtk2BAokeMCg2ZXKqpc8FXKmhX94kIxQ"

// The emulator refuses what FCM refuses (issue 21 item 5): a token that
// cannot be a registration token is INVALID_ARGUMENT with FCM's message,
// which the Client classifies as a dead token — so a web subscription
// routed to FCM by mistake fails in development as it would in production.
func TestEmulatorRejectsMalformedTokens(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	c := newTestClient(t, e, nil)
	for _, tok := range []string{realToken, e.NewRegistrationToken(), "tok-1", "bench_00042", "APA91bLegacyGcmToken"} {
		if !fcmemu.ValidRegistrationToken(tok) {
			t.Errorf("ValidRegistrationToken(%q) = false, want true", tok)
		}
		if _, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err != nil {
			t.Errorf("send to %q: %v, want accepted", tok, err)
		}
	}
	for _, tok := range []string{
		"https://fcm.googleapis.com/fcm/send/dGVzdA:APA91bXYZ",   // a Web Push endpoint
		"https://updates.push.services.mozilla.com/wpush/v2/gAA", // another one
		"<a1b2c3d4 e5f6a7b8>", // an APNs token as iOS 12 printed it
		"tok 1", "tok.1", "tok/1", "{\"token\":\"x\"}",
		strings.Repeat("a", fcmemu.MaxRegistrationTokenBytes+1),
	} {
		se := sendErr(t, c, message(heraldtype.PlatformAndroid, tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh))
		if se.Class != heraldtype.ClassPermanent || se.Code != CodeInvalidArgument || !se.TokenInvalid ||
			!strings.Contains(se.Message, "not a valid FCM registration token") {
			t.Errorf("send to %.40q: %+v, want permanent INVALID_ARGUMENT, token invalid", tok, se)
		}
	}
	if got := e.Stats(); got.Accepted != 5 || got.Rejected[CodeInvalidArgument] != 8 {
		t.Errorf("stats = %+v, want 5 accepted and 8 INVALID_ARGUMENT", got)
	}
}

// Told to be strict, the emulator answers a well-formed token it never
// issued UNREGISTERED, as FCM answers a token of an uninstalled app.
func TestEmulatorRegisteredTokensOnly(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{RegisteredTokensOnly: true})
	c := newTestClient(t, e, nil)
	send := func(tok string) error {
		_, err := c.Send(context.Background(), message(heraldtype.PlatformAndroid, tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh))
		return err
	}
	unregistered := func(tok string) {
		t.Helper()
		se := heraldtype.AsSendError(send(tok))
		if se == nil || se.Class != heraldtype.ClassPermanent || se.Code != CodeUnregistered || !se.TokenInvalid {
			t.Fatalf("send to %q: %+v, want permanent UNREGISTERED, token invalid", tok, se)
		}
	}
	unregistered(realToken)
	unregistered("tok-1")
	if se := heraldtype.AsSendError(send("tok/1")); se == nil || se.Code != CodeInvalidArgument {
		t.Fatalf("malformed token in strict mode: %+v, want INVALID_ARGUMENT (syntax is checked first)", se)
	}

	issued := e.NewRegistrationToken()
	if len(issued) != 163 || !strings.Contains(issued, ":APA91b") {
		t.Errorf("issued token %q (%d characters), want a real token's shape", issued, len(issued))
	}
	if err := send(issued); err != nil {
		t.Fatalf("send to an issued token: %v", err)
	}
	if err := e.RegisterToken("tok-1"); err != nil {
		t.Fatal(err)
	}
	if err := send("tok-1"); err != nil {
		t.Fatalf("send to a registered token: %v", err)
	}
	if err := e.RegisterToken("https://example.com/push/1"); err == nil {
		t.Error("RegisterToken accepted a URL")
	}

	// The same over HTTP: issue, register, unregister.
	newToken := func(body string) (int, string) {
		resp, err := http.Post(e.URL()+"/emulator/tokens", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Token string }
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Token
	}
	status, tok := newToken("")
	if status != http.StatusCreated || !fcmemu.ValidRegistrationToken(tok) {
		t.Fatalf("POST /emulator/tokens = %d %q", status, tok)
	}
	if err := send(tok); err != nil {
		t.Fatalf("send to a token issued over HTTP: %v", err)
	}
	if status, tok = newToken(`{"token":"tok-2"}`); status != http.StatusCreated || tok != "tok-2" {
		t.Fatalf("registering tok-2 = %d %q", status, tok)
	}
	if status, _ = newToken(`{"token":"http://x/y"}`); status != http.StatusBadRequest {
		t.Fatalf("registering a URL = %d, want 400", status)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.URL()+"/emulator/tokens/tok-2", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	unregistered("tok-2")
	if got := e.Stats().Rejected[CodeUnregistered]; got != 3 {
		t.Errorf("UNREGISTERED answers = %d, want 3", got)
	}
}
