package apns

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// pemKey encodes a private key as a .p8 file.
func pemKey(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestConfigValidation(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	p8 := pemKey(t, ec)
	valid := func(edit func(*Config)) Config {
		c := Config{KeyP8: p8, KeyID: "ABC123DEFG", TeamID: "DEF123GHIJ", Topic: testTopic}
		if edit != nil {
			edit(&c)
		}
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for success
	}{
		{"valid", valid(nil), ""},
		{"sandbox", valid(func(c *Config) { c.Environment = Sandbox }), ""},
		{"emulator endpoint", valid(func(c *Config) { c.Endpoint = "https://127.0.0.1:8443/" }), ""},
		{"no key", valid(func(c *Config) { c.KeyP8 = nil }), "KeyP8 (the .p8 token-signing key) is required"},
		{"not PEM", valid(func(c *Config) { c.KeyP8 = []byte("MIGTAgEAMBMGByqGSM49") }), "not PEM"},
		{"not PKCS#8", valid(func(c *Config) { c.KeyP8 = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")}) }), "not a PKCS#8"},
		{"RSA key", valid(func(c *Config) { c.KeyP8 = pemKey(t, rsaKey) }), "not a P-256 EC key"},
		{"P-384 key", valid(func(c *Config) { c.KeyP8 = pemKey(t, p384) }), "not a P-256 EC key"},
		{"key id", valid(func(c *Config) { c.KeyID = "AuthKey_ABC123DEFG.p8" }), "KeyID"},
		{"team id", valid(func(c *Config) { c.TeamID = "" }), "TeamID"},
		{"no topic", valid(func(c *Config) { c.Topic = "" }), "Topic"},
		{"topic with space", valid(func(c *Config) { c.Topic = "com.example app" }), "Topic"},
		{"environment", valid(func(c *Config) { c.Environment = "development" }), "Environment"},
		{"endpoint", valid(func(c *Config) { c.Endpoint = "api.push.apple.com" }), "Endpoint"},
		{"plain http endpoint", valid(func(c *Config) { c.Endpoint = "http://127.0.0.1:8443" }), "not an https base URL"},
		{"endpoint path", valid(func(c *Config) { c.Endpoint = "https://x/3/device" }), "Endpoint"},
		{"both transports", valid(func(c *Config) { c.RootCAs = x509.NewCertPool(); c.HTTPClient = &http.Client{} }), "not both"},
		{"timeout", valid(func(c *Config) { c.Timeout = -1 }), "Timeout"},
		{"ttl", valid(func(c *Config) { c.DefaultTTL = -1 }), "DefaultTTL"},
	}
	for _, tt := range tests {
		c, err := New(tt.cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		case err != nil && bytes.Contains([]byte(err.Error()), tt.cfg.KeyP8[:min(len(tt.cfg.KeyP8), 40)]) && len(tt.cfg.KeyP8) > 0:
			t.Errorf("%s: the error quotes the key: %v", tt.name, err)
		}
		if err == nil && tt.name == "valid" && (c.Environment() != Production || c.cfg.baseURL != ProductionEndpoint+"/3/device/") {
			t.Errorf("defaults: %v %s", c.Environment(), c.cfg.baseURL)
		}
		if err == nil && tt.name == "sandbox" && c.cfg.baseURL != SandboxEndpoint+"/3/device/" {
			t.Errorf("sandbox endpoint %s", c.cfg.baseURL)
		}
	}
}

// TestSecretsNeverLeak formats Config and Client with every verb, logs
// them, and fails sends on purpose: neither the .p8 key nor the provider
// token may appear anywhere.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, apnsemu.Config{})
	c, cfg := newTestClient(t, e, nil)
	tok := deviceToken(1)
	if err := e.FailToken(tok, apnsemu.TokenFault{Reason: ReasonInvalidProviderToken}); err != nil {
		t.Fatal(err)
	}
	_, sendErr := c.Send(t.Context(), message(tok, heraldtype.PayloadAlert, heraldtype.PriorityHigh))
	if sendErr == nil {
		t.Fatal("the injected fault did not fail the send")
	}
	jwt := currentJWT(t, c)
	keyBody := strings.Split(string(cfg.KeyP8), "\n")[1] // first base64 line of the key

	var out strings.Builder
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		fmt.Fprintf(&out, verb+"\n", cfg)
		fmt.Fprintf(&out, verb+"\n", &cfg)
		fmt.Fprintf(&out, verb+"\n", c)
		fmt.Fprintf(&out, verb+"\n", sendErr)
	}
	log := slog.New(slog.NewJSONHandler(&out, nil))
	log.Info("config", "apns", cfg, "client", c, "err", sendErr)
	slog.New(slog.NewTextHandler(&out, nil)).Info("config", "apns", cfg)
	if leaked := containsAny(out.String(), keyBody, "PRIVATE KEY", jwt, jwt[len(jwt)-20:]); len(leaked) > 0 {
		t.Fatalf("secrets leaked: %q in\n%s", leaked, out.String())
	}
	for _, want := range []string{"[redacted]", cfg.KeyID, cfg.TeamID, testTopic, `"key_set":true`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
