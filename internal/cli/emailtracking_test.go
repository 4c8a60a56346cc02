package cli

import (
	"strings"
	"testing"
	"time"
)

// TestEmailTrackingConfig: off without a secret outside --dev, a random
// secret and the listen address in --dev, and each refusal names its key
// (issue 35 item 2).
func TestEmailTrackingConfig(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("s", 32)
	public := HTTPConfig{PublicURL: "https://h.example"}
	for _, tc := range []struct {
		cfg     Config
		dev     bool
		base    string
		wantErr string
	}{
		{cfg: Config{HTTP: public}, base: ""},
		{cfg: Config{Listen: "127.0.0.1:8080"}, dev: true, base: "http://127.0.0.1:8080"},
		{cfg: Config{EmailTracking: EmailTrackingConfig{Secret: secret}, HTTP: public}, base: "https://h.example"},
		{cfg: Config{EmailTracking: EmailTrackingConfig{Secret: secret}}, wantErr: "http.public_url is required"},
		{cfg: Config{EmailTracking: EmailTrackingConfig{Secret: "short"}, HTTP: public}, wantErr: "email_tracking.secret is 5 bytes"},
		{cfg: Config{EmailTracking: EmailTrackingConfig{Secret: secret, SecretFile: "/x"}}, wantErr: "not both"},
		{cfg: Config{EmailTracking: EmailTrackingConfig{Secret: secret, LinkTTL: time.Second}, HTTP: public}, wantErr: "email_tracking.link_ttl"},
	} {
		c, err := tc.cfg.emailTracking(tc.dev)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: %v, want %q", tc.cfg.EmailTracking, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%+v: %v", tc.cfg.EmailTracking, err)
		case c.BaseURL != tc.base || (tc.base != "") != (len(c.Secret) >= 32):
			t.Errorf("%+v: base %q, secret %d bytes", tc.cfg.EmailTracking, c.BaseURL, len(c.Secret))
		}
	}
}
