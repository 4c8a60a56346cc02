package compat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/errorutils"
	"firebase.google.com/go/v4/messaging"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
)

// startEmulator serves a Herald FCM emulator for the test.
func startEmulator(t *testing.T) *fcmemu.Emulator {
	t.Helper()
	e := fcmemu.New(fcmemu.Config{Seed: 1})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// sdkClient points the Admin SDK at e. The SDK builds its send URL as
// "<endpoint>/projects/<p>/messages:send", so the endpoint carries "/v1".
func sdkClient(t *testing.T, e *fcmemu.Emulator, auth option.ClientOption) *messaging.Client {
	t.Helper()
	ctx := context.Background()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: "p"}, option.WithEndpoint(e.URL()+"/v1"), auth)
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.Messaging(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// richMessage uses every block Herald sends, built by the SDK's own
// serialisation.
func richMessage(token string) *messaging.Message {
	ttl := time.Hour
	return &messaging.Message{
		Token:        token,
		Data:         map[string]string{"messageId": "01HZX3K9Q8N7M6V5T4R3E2W1Q0.1", "product": "p-1"},
		Notification: &messaging.Notification{Title: "Price drop", Body: "Now 20% off"},
		Android:      &messaging.AndroidConfig{Priority: "high", TTL: &ttl, CollapseKey: "price"},
		APNS: &messaging.APNSConfig{
			Headers: map[string]string{"apns-push-type": "background", "apns-priority": "5"},
			Payload: &messaging.APNSPayload{Aps: &messaging.Aps{ContentAvailable: true}, CustomData: map[string]any{"k": "v"}},
		},
		Webpush: &messaging.WebpushConfig{Headers: map[string]string{"TTL": "60", "Urgency": "high"}},
	}
}

func TestSDKSendsThroughEmulator(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		auth   option.ClientOption
		minted uint64
	}{
		// The full service-account flow: the SDK signs a JWT and
		// exchanges it at the emulator's token endpoint (token_uri).
		{"service account", option.WithCredentialsJSON(e.ServiceAccountJSON("p")), 1},
		{"static token", option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.IssueToken("p")})), 0},
	} {
		name, auth := tc.name, tc.auth
		e.Reset()
		c := sdkClient(t, e, auth)
		// A registration token has no spaces: FCM (and the emulator)
		// would answer one INVALID_ARGUMENT.
		token := "tok-" + strings.ReplaceAll(name, " ", "-")
		name1, err := c.Send(ctx, richMessage(token))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := e.Messages()
		if len(got) != 1 || name1 != "projects/p/messages/"+got[0].MessageID || got[0].Token != token {
			t.Fatalf("%s: SDK got %q, emulator recorded %+v", name, name1, got)
		}
		if _, err := c.Send(ctx, &messaging.Message{Topic: "news", Data: map[string]string{"a": "b"}}); err != nil {
			t.Fatalf("%s: topic send: %v", name, err)
		}
		if _, err := c.SendDryRun(ctx, richMessage("dry")); err != nil {
			t.Fatalf("%s: dry run: %v", name, err)
		}
		if n := len(e.Messages()); n != 2 {
			t.Fatalf("%s: %d messages recorded, want 2 (a dry run is not recorded)", name, n)
		}
		if s := e.Stats(); s.TokensIssued != tc.minted {
			t.Fatalf("%s: %d tokens minted, want %d", name, s.TokensIssued, tc.minted)
		}
	}
}

// TestSDKClassifiesInjectedErrors checks each injected error with the SDK's
// own predicates, so the emulator's error bodies are the ones real FCM
// sends. Retry-After values above the SDK's 2-minute cap stop its internal
// 503 retries, keeping the test fast.
func TestSDKClassifiesInjectedErrors(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := sdkClient(t, e, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.IssueToken("p")})))
	tests := []struct {
		fault      fcmemu.TokenFault
		is         func(error) bool
		isName     string
		status     int
		retryAfter string
	}{
		{fcmemu.TokenFault{Code: fcm.CodeUnregistered}, messaging.IsUnregistered, "IsUnregistered", 404, ""},
		{fcmemu.TokenFault{Code: fcm.CodeInvalidArgument}, messaging.IsInvalidArgument, "IsInvalidArgument", 400, ""},
		{fcmemu.TokenFault{Code: fcmemu.FaultInvalidToken}, messaging.IsInvalidArgument, "IsInvalidArgument", 400, ""},
		{fcmemu.TokenFault{Code: fcm.CodeSenderIDMismatch}, messaging.IsSenderIDMismatch, "IsSenderIDMismatch", 403, ""},
		{fcmemu.TokenFault{Code: fcm.CodeThirdPartyAuthError}, messaging.IsThirdPartyAuthError, "IsThirdPartyAuthError", 401, ""},
		{fcmemu.TokenFault{Code: fcm.CodeQuotaExceeded, RetryAfterSeconds: 120}, messaging.IsQuotaExceeded, "IsQuotaExceeded", 429, "120"},
		{fcmemu.TokenFault{Code: fcm.CodeUnavailable, RetryAfterSeconds: 300}, messaging.IsUnavailable, "IsUnavailable", 503, "300"},
		{fcmemu.TokenFault{Code: fcm.CodeInternal, RetryAfterSeconds: 30}, messaging.IsInternal, "IsInternal", 500, "30"},
		{fcmemu.TokenFault{Code: fcmemu.FaultUnauthenticated}, errorutils.IsUnauthenticated, "errorutils.IsUnauthenticated", 401, ""},
		// A project over quota gets no FcmError (firebase-admin-go#719):
		// only the platform code says so.
		{fcmemu.TokenFault{Code: fcmemu.FaultProjectQuota, RetryAfterSeconds: 60}, errorutils.IsResourceExhausted, "errorutils.IsResourceExhausted", 429, "60"},
		{fcmemu.TokenFault{Code: fcmemu.FaultBadGateway}, errorutils.IsUnknown, "errorutils.IsUnknown", 502, ""},
	}
	for _, tt := range tests {
		token := "tok-" + tt.fault.Code
		if err := e.FailToken(token, tt.fault); err != nil {
			t.Fatal(err)
		}
		_, err := c.Send(context.Background(), richMessage(token))
		if err == nil || !tt.is(err) {
			t.Errorf("%s: %s(%v) is false", tt.fault.Code, tt.isName, err)
			continue
		}
		resp := errorutils.HTTPResponse(err)
		if resp == nil || resp.StatusCode != tt.status || resp.Header.Get("Retry-After") != tt.retryAfter {
			t.Errorf("%s: SDK saw response %+v, want status %d and Retry-After %q", tt.fault.Code, resp, tt.status, tt.retryAfter)
		}
	}
	// The predicates must not all be true: an UNREGISTERED is nothing else.
	if err := e.FailToken("dead", fcmemu.TokenFault{Code: fcm.CodeUnregistered}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Send(context.Background(), richMessage("dead"))
	if messaging.IsInvalidArgument(err) || messaging.IsUnavailable(err) || messaging.IsQuotaExceeded(err) {
		t.Errorf("UNREGISTERED also matched another predicate: %v", err)
	}
	if s := e.Stats(); s.Rejected[fcm.CodeUnavailable] != 1 {
		t.Errorf("the SDK retried a 503 whose Retry-After exceeds its cap: %+v", s)
	}

	// An oversized payload: 400 without details, still INVALID_ARGUMENT.
	big := richMessage("big")
	big.Data["blob"] = strings.Repeat("x", 5000)
	_, err = c.Send(context.Background(), big)
	if !messaging.IsInvalidArgument(err) && !errorutils.IsInvalidArgument(err) {
		t.Errorf("oversized payload: %v", err)
	}
}

// TestSDKSeesTokenAnswers: the emulator's own token answers — a malformed
// token, and one a strict emulator never issued — are what the SDK reads
// as IsInvalidArgument and IsUnregistered (issue 21 item 5).
func TestSDKSeesTokenAnswers(t *testing.T) {
	t.Parallel()
	e := fcmemu.New(fcmemu.Config{Seed: 1, RegisteredTokensOnly: true})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c := sdkClient(t, e, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.IssueToken("p")})))
	ctx := context.Background()
	if _, err := c.Send(ctx, richMessage("https://fcm.googleapis.com/fcm/send/abc:APA91b")); !messaging.IsInvalidArgument(err) {
		t.Errorf("a Web Push endpoint as token: %v, want IsInvalidArgument", err)
	}
	if _, err := c.Send(ctx, richMessage("never-issued")); !messaging.IsUnregistered(err) {
		t.Errorf("a token the emulator never issued: %v, want IsUnregistered", err)
	}
	if _, err := c.Send(ctx, richMessage(e.NewRegistrationToken())); err != nil {
		t.Errorf("an issued token: %v", err)
	}
}

// TestSDKHonoursRetryAfter: the SDK retries a 503 itself, after the
// Retry-After the emulator sent; the emulator sees no early retry.
func TestSDKHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := sdkClient(t, e, option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: e.IssueToken("p")})))
	if err := e.FailToken("flaky", fcmemu.TokenFault{Code: fcm.CodeUnavailable, Times: 1, RetryAfterSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Send(context.Background(), richMessage("flaky")); err != nil {
		t.Fatal(err)
	}
	s := e.Stats()
	if s.Rejected[fcm.CodeUnavailable] != 1 || s.Accepted != 1 || s.EarlyRetries != 0 || time.Since(start) < time.Second {
		t.Fatalf("stats %+v after %v", s, time.Since(start))
	}
}

// TestHeraldClientMatchesSDKView: the answer the SDK reads as
// IsUnregistered is the one Herald's client reads as a dead token.
func TestHeraldClientMatchesSDKView(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c, err := fcm.New(fcm.Config{CredentialsJSON: e.ServiceAccountJSON("p"), Endpoint: e.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.FailToken("gone", fcmemu.TokenFault{Code: fcm.CodeUnregistered}); err != nil {
		t.Fatal(err)
	}
	sdk := sdkClient(t, e, option.WithCredentialsJSON(e.ServiceAccountJSON("p")))
	_, sdkErr := sdk.Send(context.Background(), richMessage("gone"))
	if !messaging.IsUnregistered(sdkErr) {
		t.Fatalf("SDK: %v", sdkErr)
	}
	_, heraldErr := c.Send(context.Background(), heraldMessage("gone"))
	var se *heraldtype.SendError
	if !errors.As(heraldErr, &se) || se.Code != fcm.CodeUnregistered || !se.TokenInvalid || se.Class != heraldtype.ClassPermanent {
		t.Fatalf("Herald: %v", heraldErr)
	}
}
