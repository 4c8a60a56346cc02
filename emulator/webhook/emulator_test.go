package webhook_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald/emulator/webhook"
	signer "github.com/heraldhq/herald/internal/webhook"
)

// The specification's published test vector.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func start(t *testing.T, cfg webhook.Config) *webhook.Emulator {
	t.Helper()
	e, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// noRedirects is a client that, as a webhook sender must, never follows a
// redirect.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func post(t *testing.T, url, id string, ts int64, sig string, body []byte) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestTheSpecificationsVectorIsAccepted(t *testing.T) {
	e := start(t, webhook.Config{Secrets: []string{vectorSecret}, Now: func() time.Time { return time.Unix(vectorTimestamp+10, 0) }})
	if st, err := post(t, e.URL()+"/hooks/a", vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody)); err != nil || st != http.StatusNoContent {
		t.Fatalf("the vector: %d, %v", st, err)
	}
	if st, _ := post(t, e.URL()+"/hooks/a", vectorID, vectorTimestamp, vectorSignature, []byte(vectorBody+" ")); st != http.StatusUnauthorized {
		t.Errorf("a changed body: %d, want 401", st)
	}
	if st, _ := post(t, e.URL()+"/hooks/a", vectorID, vectorTimestamp+400, vectorSignature, []byte(vectorBody)); st != http.StatusUnauthorized {
		t.Errorf("a timestamp outside the tolerance: %d, want 401", st)
	}
	ms := e.MessagesTo("/hooks/a")
	if len(ms) != 3 || !ms[0].Verified || ms[1].Verified || ms[0].ID != vectorID {
		t.Fatalf("messages = %+v", ms)
	}
	if s := e.Stats(); s.Accepted != 1 || s.BadSignatures != 2 || s.Rejected[http.StatusUnauthorized] != 2 {
		t.Errorf("stats = %+v", s)
	}
}

// Herald's own signer, across a rotation, passes the emulator's check,
// which is written from the specification and shares no code with it.
func TestHeraldsSignaturesPass(t *testing.T) {
	oldS, _ := signer.NewSecret()
	newS, _ := signer.NewSecret()
	e := start(t, webhook.Config{Secrets: []string{oldS}})
	parse := func(s string) signer.Secret {
		k, err := signer.ParseSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	body := []byte(`{"type":"delivery.finished","timestamp":"2026-11-28T04:00:00Z","data":{}}`)
	now := time.Now()
	sig, err := signer.Sign("evt_1", now, body, parse(newS), parse(oldS))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := post(t, e.URL()+"/h", "evt_1", now.Unix(), sig, body); err != nil || st != http.StatusNoContent {
		t.Fatalf("Herald's message: %d, %v", st, err)
	}
	if st, _ := post(t, e.URL()+"/h", "evt_1", now.Unix(), sig, body); st != http.StatusNoContent {
		t.Fatalf("its redelivery: %d", st)
	}
	ms := e.Messages()
	if ms[0].Type != "delivery.finished" || ms[0].Redelivery || !ms[1].Redelivery {
		t.Errorf("messages = %+v", ms)
	}
	if s := e.Stats(); s.Redeliveries != 1 || s.Distinct != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestFaults(t *testing.T) {
	e := start(t, webhook.Config{})
	now := time.Now().Unix()
	if err := e.FailPath("/a", webhook.PathFault{Status: 503, Times: 1, RetryAfterSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	if st, _ := post(t, e.URL()+"/a", "evt_1", now, "v1,x", []byte(`{}`)); st != http.StatusServiceUnavailable {
		t.Errorf("first to /a: %d, want 503", st)
	}
	if st, _ := post(t, e.URL()+"/a", "evt_1", now, "v1,x", []byte(`{}`)); st != http.StatusNoContent {
		t.Errorf("second to /a: %d, want 204", st)
	}
	if s := e.Stats(); s.EarlyRetries != 1 {
		t.Errorf("early retries = %d, want 1 (the second came before the Retry-After)", s.EarlyRetries)
	}
	if err := e.FailPath("/moved", webhook.PathFault{Status: http.StatusTemporaryRedirect}); err != nil {
		t.Fatal(err)
	}
	if st, _ := post(t, e.URL()+"/moved", "evt_2", now, "v1,x", []byte(`{}`)); st != http.StatusTemporaryRedirect {
		t.Errorf("/moved: %d, want 307", st)
	}
	if err := e.FailPath("/gone", webhook.PathFault{Status: 200}); err == nil {
		t.Error("a 200 fault was accepted")
	}
	if err := e.SetFaults(webhook.Faults{Down: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := post(t, e.URL()+"/a", "evt_3", now, "v1,x", []byte(`{}`)); err == nil {
		t.Error("a message to a down receiver got an answer")
	}
	if s := e.Stats(); s.Dropped != 1 {
		t.Errorf("dropped = %d, want 1", s.Dropped)
	}
	e.ClearFaults()
	if st, _ := post(t, e.URL()+"/a", "evt_3", now, "", []byte(`{}`)); st != http.StatusBadRequest {
		t.Errorf("no signature header: %d, want 400", st)
	}
	if _, err := webhook.New(webhook.Config{Secrets: []string{"whsec_!!"}}); err == nil {
		t.Error("a secret that does not decode was accepted")
	}
}
