package webpush

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	pub, priv := testKeys()[0], testKeys()[1]
	otherPub, otherPriv, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	ok := Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: testSubject}
	tests := []struct {
		name   string
		edit   func(c *Config)
		substr string
	}{
		{"no private key", func(c *Config) { c.VAPIDPrivateKey = "" }, "VAPIDPrivateKey is required"},
		{"no public key", func(c *Config) { c.VAPIDPublicKey = "" }, "VAPIDPublicKey is required"},
		{"private not base64", func(c *Config) { c.VAPIDPrivateKey = "%%%" }, "not a base64url-encoded 32-byte"},
		{"private too short", func(c *Config) { c.VAPIDPrivateKey = b64(make([]byte, 31)) }, "32-byte"},
		{"private zero", func(c *Config) { c.VAPIDPrivateKey = b64(make([]byte, 32)) }, "not a valid P-256"},
		{"public too short", func(c *Config) { c.VAPIDPublicKey = b64(make([]byte, 33)) }, "65 bytes"},
		{"mismatched pair", func(c *Config) { c.VAPIDPublicKey = otherPub }, "does not belong"},
		{"no subject", func(c *Config) { c.Subject = "" }, "Subject is required"},
		{"bare address subject", func(c *Config) { c.Subject = "ops@herald.example" }, "not a \"mailto:\""},
		{"http subject", func(c *Config) { c.Subject = "http://herald.example" }, "not a \"mailto:\""},
		{"empty mailto", func(c *Config) { c.Subject = "mailto:" }, "not a \"mailto:\""},
		{"spaces", func(c *Config) { c.Subject = "mailto:a b@c" }, "white space"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
		{"TTL too long", func(c *Config) { c.DefaultTTL = MaxTTL + time.Second }, "DefaultTTL"},
		{"TTL under a second", func(c *Config) { c.DefaultTTL = time.Millisecond }, "DefaultTTL"},
	}
	for _, tt := range tests {
		cfg := ok
		tt.edit(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), tt.substr) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.substr)
			continue
		}
		for _, secret := range []string{priv, otherPriv} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error leaks a private key: %v", tt.name, err)
			}
		}
	}
	for _, subject := range []string{"mailto:ops@herald.example", "https://herald.example/contact"} {
		cfg := ok
		cfg.Subject = subject
		c, err := New(cfg)
		if err != nil {
			t.Fatalf("subject %q: %v", subject, err)
		}
		// Sent verbatim: no "mailto:" prefix added (DEPENDENCIES.md).
		if c.signer.subject != subject {
			t.Errorf("subject %q became %q", subject, c.signer.subject)
		}
	}
	c, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Timeout != DefaultTimeout || c.cfg.DefaultTTL != MaxTTL || c.PublicKey() != pub {
		t.Errorf("defaults %+v", c.cfg.Config)
	}
}

// TestSecretsNotPrinted: the VAPID private key never reaches fmt, slog or a
// Send error.
func TestSecretsNotPrinted(t *testing.T) {
	t.Parallel()
	priv := testKeys()[1]
	cfg := testConfig(nil)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "webpush", cfg)
	outputs := map[string]string{"slog": logged.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		outputs["Config "+verb] = fmt.Sprintf(verb, cfg)
		outputs["*Config "+verb] = fmt.Sprintf(verb, &cfg)
		outputs["Client "+verb] = fmt.Sprintf(verb, c)
	}
	outputs["Client.String"] = c.String()
	outputs["Config.String"] = cfg.String()

	// Every failing Send path, including one from deep inside net/http.
	e := startEmulator(t, webpushemu.Config{})
	m := subscribe(e)
	_ = e.FailSubscription(m.Device.Token, webpushemu.SubscriptionFault{Status: 401})
	_, err = c.Send(context.Background(), m)
	outputs["401 error"] = fmt.Sprintf("%v %+v", err, err)
	m.Device.WebPushAuth = "x"
	_, err = c.Send(context.Background(), m)
	outputs["invalid subscription error"] = fmt.Sprintf("%v", err)
	e.Close()
	_, err = c.Send(context.Background(), subscribe(e))
	outputs["network error"] = fmt.Sprintf("%v %v", err, errors.Unwrap(err))

	for where, out := range outputs {
		if strings.Contains(out, priv) {
			t.Errorf("%s prints the VAPID private key: %s", where, out)
		}
	}
	if !strings.Contains(outputs["Config %v"], "[redacted]") || !strings.Contains(outputs["slog"], `"vapid_private_key_set":true`) {
		t.Errorf("redaction markers missing: %s / %s", outputs["Config %v"], outputs["slog"])
	}
}

func TestGenerateVAPIDKeys(t *testing.T) {
	t.Parallel()
	pub, priv, err := GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 87 || len(priv) != 43 || strings.ContainsAny(pub+priv, "+/=") {
		t.Errorf("keys are not unpadded base64url of 65 and 32 bytes: %q %d", pub, len(priv))
	}
	pub2, _, _ := GenerateVAPIDKeys()
	if pub2 == pub {
		t.Error("two generated key pairs are equal")
	}
	if _, err := New(Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: testSubject}); err != nil {
		t.Errorf("a generated pair is refused: %v", err)
	}
}

// TestCheckPayload pins the 3993-byte limit at trigger time (ETOOLARGE)
// and at send time.
func TestCheckPayload(t *testing.T) {
	t.Parallel()
	n := &heraldtype.Notification{Title: "t", PayloadMode: heraldtype.PayloadAlert, Data: map[string]string{"k": ""}}
	base, _ := encodePayload(n, strings.Repeat("0", maxMessageIDLen))
	n.Data["k"] = strings.Repeat("x", MaxPlaintextBytes-len(base))
	if err := CheckPayload(n); err != nil {
		t.Fatalf("a payload of exactly %d bytes: %v", MaxPlaintextBytes, err)
	}
	c := newTestClient(t, nil)
	if err := c.ValidateNotification(n); err != nil {
		t.Fatal(err)
	}
	n.Data["k"] += "x"
	err := c.ValidateNotification(n)
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Code != heraldtype.ETOOLARGE || !strings.Contains(he.Message, "3994 bytes") {
		t.Errorf("one byte over: %v", err)
	}
	if err := CheckPayload(nil); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("nil notification: %v", err)
	}

	// Send refuses it too (a notification accepted before the limit
	// existed, or by another provider's rules).
	e := startEmulator(t, webpushemu.Config{})
	m := subscribe(e)
	m.Notification = n
	n.Data["k"] += strings.Repeat("x", 100)
	if se := sendErr(t, c, m); se.Code != CodePayloadTooLarge || se.Class != heraldtype.ClassPermanent || se.TokenInvalid {
		t.Errorf("oversized send: %+v", se)
	}
	if len(e.Messages()) != 0 {
		t.Error("an oversized message was delivered")
	}
}
