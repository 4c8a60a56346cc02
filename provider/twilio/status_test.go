package twilio

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
)

// An API key sends through a Messaging Service, and the emulator's signed
// status callbacks — signed with the account's auth token, not the key —
// verify and decode with VerifyStatusCallback up to the final
// undelivered/21610 (issue 21 item 4).
func TestStatusCallbacksWithAPIKey(t *testing.T) {
	t.Parallel()
	type result struct {
		r   heraldtype.ProviderReport
		err error
	}
	got := make(chan result, 10)
	var c *Client
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		rep, err := c.VerifyStatusCallback(r.URL.RawQuery, r.PostForm, r.Header.Get("X-Twilio-Signature"))
		got <- result{rep, err}
	}))
	defer hook.Close()
	e := startEmulator(t, twilioemu.Config{})
	if err := e.SetOutcome(testTo, twilioemu.Outcome{Status: "undelivered", ErrorCode: ErrUnsubscribed}); err != nil {
		t.Fatal(err)
	}
	const service = "MG00000000000000000000000000000001"
	c = newTestClient(t, e, func(cfg *Config) {
		cfg.APIKeySID, cfg.APIKeySecret = e.APIKeySID(), e.APIKeySecret()
		cfg.From, cfg.MessagingServiceSID = "", service
		cfg.StatusCallback = hook.URL + "/v1/providers/twilio/status"
	})
	m := message(testTo)
	sid, err := c.Send(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if rec := e.MessagesTo(testTo); len(rec) != 1 || rec[0].MessagingServiceSID != service || rec[0].From != "" {
		t.Fatalf("recorded %+v", rec)
	}
	for _, want := range []string{"accepted", "sent", "undelivered"} {
		select {
		case res := <-got:
			if res.err != nil || res.r.Status != want || res.r.ProviderMessageID != sid || res.r.DeliveryKey != m.Key {
				t.Fatalf("callback %+v, %v; want %s for %s", res.r, res.err, want, sid)
			}
			final := want == "undelivered"
			if res.r.Final != final || res.r.Suppress != final || (final && res.r.ErrorCode != Code(ErrUnsubscribed)) {
				t.Errorf("callback %+v: final %v, suppress %v, error code %s", res.r, res.r.Final, res.r.Suppress, res.r.ErrorCode)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s callback", want)
		}
	}

	// A wrong API key secret is refused as Twilio refuses it.
	bad := newTestClient(t, e, func(cfg *Config) {
		cfg.APIKeySID, cfg.APIKeySecret = e.APIKeySID(), "wrong"
	})
	if _, err := bad.Send(context.Background(), m); heraldtype.AsSendError(err) == nil || heraldtype.AsSendError(err).Code != Code(ErrAuthenticate) {
		t.Fatalf("wrong API key secret: %v, want %s", err, Code(ErrAuthenticate))
	}
}

// VerifyStatusCallback refuses what Twilio did not sign: a forged
// signature, a signature of another delivery, one made with the API key
// secret instead of the auth token.
func TestVerifyStatusCallback(t *testing.T) {
	t.Parallel()
	const callback = "https://herald.example/v1/providers/twilio/status"
	c, err := New(Config{AccountSID: "ACx", AuthToken: "auth-token", APIKeySID: "SK1", APIKeySecret: "key-secret",
		From: testFrom, StatusCallback: callback})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"failed"}, "ErrorCode": {"30005"}, "AccountSid": {"ACx"}}
	query := "delivery=n1.7"
	sign := func(token, u string, f url.Values) string { return Signature(token, u, f) }
	good := sign("auth-token", callback+"?"+query, form)

	rep, err := c.VerifyStatusCallback(query, form, good)
	if err != nil || !rep.Final || rep.Suppress || rep.ErrorCode != "twilio_30005" || rep.DeliveryKey != "n1.7" || rep.ProviderMessageID != "SM1" {
		t.Fatalf("VerifyStatusCallback = %+v, %v", rep, err)
	}
	tampered := url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("MessageStatus", "delivered")
	for _, tt := range []struct {
		name, query, sig string
		form             url.Values
		code             string
	}{
		{"no signature", query, "", form, heraldtype.EUNAUTHENTICATED},
		{"forged", query, "AAAA", form, heraldtype.EUNAUTHENTICATED},
		{"another delivery", "delivery=n1.8", good, form, heraldtype.EUNAUTHENTICATED},
		{"changed status", query, good, tampered, heraldtype.EUNAUTHENTICATED},
		{"signed with the API key secret", query, sign("key-secret", callback+"?"+query, form), form, heraldtype.EUNAUTHENTICATED},
		{"no delivery", "", good, form, heraldtype.EINVALID},
		{"no message sid", query, sign("auth-token", callback+"?"+query, url.Values{"MessageStatus": {"sent"}}),
			url.Values{"MessageStatus": {"sent"}}, heraldtype.EINVALID},
	} {
		if _, err := c.VerifyStatusCallback(tt.query, tt.form, tt.sig); heraldtype.ErrorCode(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
	off, _ := New(Config{AccountSID: "ACx", AuthToken: "auth-token", From: testFrom})
	if _, err := off.VerifyStatusCallback(query, form, good); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND ||
		!strings.Contains(err.Error(), "twilio.status_callback_url") {
		t.Errorf("callbacks off: %v, want not_found naming twilio.status_callback_url", err)
	}
}
