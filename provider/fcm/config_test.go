package fcm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

func TestConfigValidation(t *testing.T) {
	e := fcmemu.New(fcmemu.Config{PublicURL: "http://127.0.0.1:1", SigningKey: testKey()})
	good := e.ServiceAccountJSON("p")
	edit := func(f func(map[string]string)) []byte {
		var m map[string]string
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error, "" for success
	}{
		{"valid", Config{CredentialsJSON: good}, ""},
		{"no credentials", Config{}, "CredentialsJSON is required"},
		{"not JSON", Config{CredentialsJSON: []byte("{nope")}, "not valid JSON"},
		{"wrong type", Config{CredentialsJSON: edit(func(m map[string]string) { m["type"] = "authorized_user" })}, `type "authorized_user"`},
		{"no email", Config{CredentialsJSON: edit(func(m map[string]string) { delete(m, "client_email") })}, "no client_email"},
		{"no key", Config{CredentialsJSON: edit(func(m map[string]string) { delete(m, "private_key") })}, "no private_key"},
		{"key not PEM", Config{CredentialsJSON: edit(func(m map[string]string) { m["private_key"] = "secret-not-pem" })}, "not PEM"},
		{"no project", Config{CredentialsJSON: edit(func(m map[string]string) { delete(m, "project_id") })}, "no project"},
		{"project override", Config{CredentialsJSON: edit(func(m map[string]string) { delete(m, "project_id") }), ProjectID: "q"}, ""},
		{"bad project", Config{CredentialsJSON: good, ProjectID: "a/b"}, "ProjectID"},
		{"bad endpoint", Config{CredentialsJSON: good, Endpoint: "fcm.googleapis.com"}, "Endpoint"},
		{"bad token_uri", Config{CredentialsJSON: edit(func(m map[string]string) { m["token_uri"] = "ftp://x" })}, "token_uri"},
		{"negative timeout", Config{CredentialsJSON: good, Timeout: -time.Second}, "Timeout"},
		{"ttl too long", Config{CredentialsJSON: good, DefaultTTL: MaxTTL + time.Second}, "DefaultTTL"},
	}
	for _, tt := range tests {
		c, err := New(tt.cfg)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		case tt.want == "" && c.cfg.sendURL != "https://fcm.googleapis.com/v1/projects/"+c.ProjectID()+"/messages:send":
			t.Errorf("%s: send URL %q", tt.name, c.cfg.sendURL)
		}
	}
}

// TestSecretsNeverPrinted checks that neither the private key nor an access
// token appears in errors, fmt output or logs.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, fcmemu.Config{})
	creds := e.ServiceAccountJSON("p")
	var account serviceAccount
	if err := json.Unmarshal(creds, &account); err != nil {
		t.Fatal(err)
	}
	// A distinctive line from the middle of the PEM body.
	keyLines := strings.Split(account.PrivateKey, "\n")
	secrets := []string{keyLines[len(keyLines)/2], "PRIVATE KEY"}

	var out []string
	cfg := Config{CredentialsJSON: creds, Endpoint: e.URL()}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("%v %+v %#v %s %q", cfg, cfg, cfg, cfg, cfg))
	out = append(out, fmt.Sprintf("%v %+v %#v %s", c, c, c, c))
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("cfg", "config", cfg)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("cfg", "config", cfg)
	out = append(out, logs.String())

	// Errors: a refused access token, a broken key, invalid credentials.
	m := message(heraldtype.PlatformAndroid, "t", heraldtype.PayloadAlert, heraldtype.PriorityNormal)
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	access := c.tokens.current.Load().token
	secrets = append(secrets, access)
	e.RevokeTokens()
	_, err = c.Send(context.Background(), m)
	out = append(out, err.Error(), fmt.Sprintf("%+v", err))
	broken := bytes.Replace(creds, []byte("MII"), []byte("XXX"), 1)
	_, err = New(Config{CredentialsJSON: broken})
	out = append(out, fmt.Sprint(err))
	_, err = New(Config{CredentialsJSON: creds[:len(creds)/2]})
	out = append(out, fmt.Sprint(err))
	forged, _ := New(Config{CredentialsJSON: fcmemu.New(fcmemu.Config{PublicURL: e.URL()}).ServiceAccountJSON("p"), Endpoint: e.URL()})
	_, err = forged.Send(context.Background(), m)
	out = append(out, fmt.Sprintf("%v %+v", err, heraldtype.AsSendError(err)))

	all := strings.Join(out, "\n")
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Fatalf("secret %q leaked into:\n%s", s, all)
		}
	}
}
