package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
	"github.com/heraldhq/herald/provider/twilio"
	"github.com/heraldhq/herald/store/sqlite"
)

// Twilio's status callbacks, sent signed by the emulator to the real
// server, reach the delivery's timeline (issue 21 item 4): sent with an
// API key through a Messaging Service, a delivered SMS and an undelivered
// one (21610: the recipient replied STOP) each get a provider_report row
// and stay sent; the STOP suppresses the number. A forged callback is
// 401; a verified one for a message Herald does not know is 200, logged.
func TestTwilioStatusCallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	em := twilioemu.New(twilioemu.Config{})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	const delivered, stopped = "+15550001", "+15550002"
	if err := em.SetOutcome(stopped, twilioemu.Outcome{Status: "undelivered", ErrorCode: twilio.ErrUnsubscribed}); err != nil {
		t.Fatal(err)
	}

	var handler atomic.Pointer[httpapi.Server]
	// The emulator's callbacks and the test's own are checked against the
	// contract like every exchange of the httpapi tests.
	hs := httptest.NewServer(apitest.Handler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.Load().ServeHTTP(w, r) })))
	t.Cleanup(hs.Close)
	callbackURL := hs.URL + "/v1/providers/twilio/status"
	sms, err := twilio.New(twilio.Config{AccountSID: em.AccountSID(), AuthToken: em.AuthToken(),
		APIKeySID: em.APIKeySID(), APIKeySecret: em.APIKeySecret(), MessagingServiceSID: "MG00000000000000000000000000000001",
		BaseURL: em.URL(), StatusCallback: callbackURL})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	c, err := herald.NewClient(herald.Config{Store: st, Providers: map[string]herald.Provider{"twilio": sms},
		MaintenanceInterval: -1, Worker: herald.WorkerConfig{PollInterval: 20 * time.Millisecond, ReapInterval: time.Second},
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Stop(stopCtx)
	})
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Config{Client: c, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Auth: httpapi.AuthConfig{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	handler.Store(srv)

	ids := map[string]string{}
	for user, phone := range map[string]string{"u1": delivered, "u2": stopped} {
		if _, err := c.PutUser(ctx, user, herald.UserInput{Phone: phone}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Enqueue(ctx, herald.Request{UserID: user, Type: "code", Body: "123456", Channels: []heraldtype.Channel{heraldtype.ChannelSMS}})
		if err != nil {
			t.Fatal(err)
		}
		ids[phone] = res.Notifications[0].ID
	}
	report := func(phone string) (heraldtype.Delivery, bool) {
		ns, err := c.GetNotification(ctx, ids[phone])
		if err != nil || len(ns.Deliveries) != 1 {
			t.Fatalf("notification %s: %+v, %v", ids[phone], ns, err)
		}
		// The callback may overtake the worker's sent row: wait for both.
		d := ns.Deliveries[0]
		return d, d.State == heraldtype.StateSent && len(d.Attempts) == 2
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		da, a := report(delivered)
		db, b := report(stopped)
		if a && b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status reports: emulator %+v, deliveries %+v and %+v\nlogs: %s", em.Stats(), da, db, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for phone, want := range map[string]string{delivered: "delivered", stopped: "undelivered"} {
		d, _ := report(phone)
		var last heraldtype.Attempt
		for _, a := range d.Attempts {
			if a.Outcome == heraldtype.OutcomeProviderReport {
				last = a
			}
		}
		if d.State != heraldtype.StateSent || last.ErrorCode != want || last.ProviderMessageID != d.ProviderMessageID {
			t.Errorf("%s: %s with attempts %+v, want sent with one %s report", phone, d.State, d.Attempts, want)
		}
	}
	if d, _ := report(stopped); !strings.Contains(d.Attempts[0].Error+d.Attempts[1].Error, "twilio_21610") {
		t.Errorf("undelivered report %+v, want the error code", d.Attempts)
	}
	sps, err := c.ListSuppressions(ctx, heraldtype.ChannelSMS)
	if err != nil || len(sps) != 1 || sps[0].Address != stopped || sps[0].Reason != "twilio_21610" {
		t.Fatalf("suppressions = %+v, %v; want %s (twilio_21610)", sps, err, stopped)
	}

	post := func(query string, form url.Values, sig string) int {
		req, _ := http.NewRequest(http.MethodPost, callbackURL+"?"+query, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	form := url.Values{"MessageSid": {"SMffffffffffffffffffffffffffffffff"}, "MessageStatus": {"delivered"}}
	query := "delivery=" + url.QueryEscape(ids[delivered]+".999")
	if got := post(query, form, "forged"); got != http.StatusUnauthorized {
		t.Errorf("forged callback: %d, want 401", got)
	}
	if got := post(query, form, twilio.Signature(em.AuthToken(), callbackURL+"?"+query, form)); got != http.StatusOK {
		t.Errorf("callback for an unknown message: %d, want 200", got)
	}
	if !strings.Contains(logs.String(), "twilio status callback for an unknown message") {
		t.Errorf("the unknown message was not logged: %s", logs.String())
	}
}
