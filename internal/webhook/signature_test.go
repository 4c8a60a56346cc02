package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/webhook"
)

// The specification's published test vector (the Go library of
// standard-webhooks, TestWebhookSign): this secret, id, timestamp and body
// sign to this header.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func secret(t *testing.T, s string) webhook.Secret {
	t.Helper()
	k, err := webhook.ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignMatchesTheSpecificationsVector(t *testing.T) {
	for _, s := range []string{vectorSecret, strings.TrimPrefix(vectorSecret, webhook.SecretPrefix)} {
		got, err := webhook.Sign(vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody), secret(t, s))
		if err != nil || got != vectorSignature {
			t.Errorf("Sign with %q = %q, %v; want %q", s, got, err, vectorSignature)
		}
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, vectorID)
	h.Set(webhook.HeaderTimestamp, strconv.Itoa(vectorTimestamp))
	h.Set(webhook.HeaderSignature, vectorSignature)
	if err := webhook.Verify(h, []byte(vectorBody), time.Unix(vectorTimestamp+60, 0), webhook.DefaultTolerance,
		secret(t, vectorSecret)); err != nil {
		t.Errorf("Verify of the vector: %v", err)
	}
}

// During a rotation a message carries a signature per secret; a receiver
// holding either one accepts it, one holding neither does not.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	oldS, newS := newSecret(t), newSecret(t)
	now := time.Now()
	body := []byte(`{"type":"delivery.finished"}`)
	h, err := webhook.Headers("evt_1", now, body, newS, oldS)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(h.Get(webhook.HeaderSignature))); n != 2 {
		t.Fatalf("%d signatures, want 2: %q", n, h.Get(webhook.HeaderSignature))
	}
	for name, s := range map[string]webhook.Secret{"old": oldS, "new": newS} {
		if err := webhook.Verify(h, body, now, webhook.DefaultTolerance, s); err != nil {
			t.Errorf("a receiver with the %s secret: %v", name, err)
		}
	}
	if err := webhook.Verify(h, body, now, webhook.DefaultTolerance, newSecret(t)); !errors.Is(err, webhook.ErrSignature) {
		t.Errorf("a receiver with another secret: %v, want ErrSignature", err)
	}
}

func newSecret(t *testing.T) webhook.Secret {
	t.Helper()
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, webhook.SecretPrefix) {
		t.Fatalf("NewSecret = %q, want the %q prefix", s, webhook.SecretPrefix)
	}
	return secret(t, s)
}

func TestVerifyRefuses(t *testing.T) {
	s := newSecret(t)
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"a":1}`)
	signed := func() http.Header {
		h, err := webhook.Headers("evt_2", now, body, s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, tc := range []struct {
		name   string
		change func(h http.Header) []byte
		now    time.Time
		want   error
	}{
		{"a changed body", func(http.Header) []byte { return []byte(`{"a":2}`) }, now, webhook.ErrSignature},
		{"a re-serialized body", func(http.Header) []byte { return []byte(`{"a": 1}`) }, now, webhook.ErrSignature},
		{"another id", func(h http.Header) []byte { h.Set(webhook.HeaderID, "evt_3"); return body }, now, webhook.ErrSignature},
		{"another timestamp", func(h http.Header) []byte {
			h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix()+1, 10))
			return body
		}, now, webhook.ErrSignature},
		{"too old", func(http.Header) []byte { return body }, now.Add(webhook.DefaultTolerance + time.Second), webhook.ErrTimestamp},
		{"from the future", func(http.Header) []byte { return body }, now.Add(-webhook.DefaultTolerance - time.Second), webhook.ErrTimestamp},
		{"a timestamp that is not a number", func(h http.Header) []byte { h.Set(webhook.HeaderTimestamp, "soon"); return body }, now, webhook.ErrTimestamp},
		{"no id", func(h http.Header) []byte { h.Del(webhook.HeaderID); return body }, now, webhook.ErrMissingHeader},
		{"no signature", func(h http.Header) []byte { h.Del(webhook.HeaderSignature); return body }, now, webhook.ErrMissingHeader},
		{"an empty v1 signature", func(h http.Header) []byte { h.Set(webhook.HeaderSignature, "v1,"); return body }, now, webhook.ErrSignature},
		{"only another scheme's signature", func(h http.Header) []byte {
			h.Set(webhook.HeaderSignature, "v1a,"+strings.TrimPrefix(h.Get(webhook.HeaderSignature), "v1,"))
			return body
		}, now, webhook.ErrSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := signed()
			b := tc.change(h)
			if err := webhook.Verify(h, b, tc.now, webhook.DefaultTolerance, s); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSecretsAndIDsRefused(t *testing.T) {
	for _, s := range []string{"", "whsec_", "whsec_not base64!", "whsec_" + strings.Repeat("A", 30), // 22 bytes
		"whsec_" + strings.Repeat("A", 88)} { // 66 bytes
		if _, err := webhook.ParseSecret(s); err == nil {
			t.Errorf("ParseSecret(%q) accepted", s)
		}
	}
	s := newSecret(t)
	for _, id := range []string{"", "evt.1"} {
		if _, err := webhook.Sign(id, time.Now(), nil, s); err == nil {
			t.Errorf("Sign with id %q accepted", id)
		}
	}
	if _, err := webhook.Sign("evt_1", time.Now(), nil); err == nil {
		t.Error("Sign without a secret accepted")
	}
}
