package cli

import (
	"log/slog"
	"strings"
	"testing"
)

func TestUnsubscribeConfig(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	secret := strings.Repeat("s", 32)
	for _, tc := range []struct {
		cfg     Config
		dev     bool
		base    string
		wantErr string
	}{
		{cfg: Config{}, base: ""}, // off, with a warning when smtp is set
		{cfg: Config{Listen: "127.0.0.1:8080"}, dev: true, base: "http://127.0.0.1:8080"},
		{cfg: Config{Unsubscribe: UnsubscribeConfig{Secret: secret}, HTTP: HTTPConfig{PublicURL: "https://h.example"}}, base: "https://h.example"},
		{cfg: Config{Unsubscribe: UnsubscribeConfig{Secret: secret}}, wantErr: "http.public_url is required"},
		{cfg: Config{Unsubscribe: UnsubscribeConfig{Secret: "short"}, HTTP: HTTPConfig{PublicURL: "https://h.example"}}, wantErr: "unsubscribe.secret is 5 bytes"},
		{cfg: Config{Unsubscribe: UnsubscribeConfig{Secret: secret, SecretFile: "/x"}}, wantErr: "not both"},
	} {
		u, err := tc.cfg.unsubscribe(tc.dev, log)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case u.BaseURL != tc.base || (tc.base != "") != (len(u.Secret) >= 32):
			t.Errorf("%+v: base %q, secret %d bytes", tc.cfg, u.BaseURL, len(u.Secret))
		}
	}
}
