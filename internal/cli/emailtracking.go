package cli

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/emailtrack"
)

// EmailTrackingConfig is `email_tracking:`: the signing of the open pixels
// and tracked links of e-mails whose type turns tracking on (README:
// E-mail tracking). Their base is http.public_url.
type EmailTrackingConfig struct {
	// Secret signs the pixels and links (HMAC-SHA256), at least 32 bytes:
	// `openssl rand -hex 32`. Inline, from a file, or
	// HERALD_EMAIL_TRACKING__SECRET; never logged. Without it (outside
	// --dev) no e-mail is tracked and a type cannot turn tracking on;
	// --dev makes a random one (links then die with the process).
	Secret     string `koanf:"secret"`
	SecretFile string `koanf:"secret_file"`
	// LinkTTL is how long a tracked link and a pixel are honoured after
	// the send (default 90 days, herald.DefaultEmailTrackingLinkTTL);
	// after it a link answers a page saying it expired.
	LinkTTL time.Duration `koanf:"link_ttl"`
}

// emailTracking builds herald.EmailTrackingConfig. In dev mode a missing
// secret is a random one and a missing http.public_url the listen
// address, as for the unsubscribe links.
func (c *Config) emailTracking(dev bool) (herald.EmailTrackingConfig, error) {
	sec, err := secret("email_tracking.secret", c.EmailTracking.Secret, c.EmailTracking.SecretFile)
	if err != nil {
		return herald.EmailTrackingConfig{}, err
	}
	if dev && sec == "" {
		sec = rand.Text() + rand.Text()
	}
	base := c.publicURL(dev)
	switch {
	case sec == "":
		return herald.EmailTrackingConfig{}, nil
	case len(sec) < emailtrack.MinSecretBytes:
		return herald.EmailTrackingConfig{}, fmt.Errorf("config: email_tracking.secret is %d bytes; at least %d are needed (openssl rand -hex 32)",
			len(sec), emailtrack.MinSecretBytes)
	case base == "":
		return herald.EmailTrackingConfig{}, fmt.Errorf("config: http.public_url is required with email_tracking.secret: it is the base of the tracked links")
	case c.EmailTracking.LinkTTL < 0 || c.EmailTracking.LinkTTL > 0 && c.EmailTracking.LinkTTL < time.Minute:
		return herald.EmailTrackingConfig{}, fmt.Errorf("config: email_tracking.link_ttl %s must be at least a minute", c.EmailTracking.LinkTTL)
	}
	return herald.EmailTrackingConfig{Secret: []byte(sec), BaseURL: base, LinkTTL: c.EmailTracking.LinkTTL}, nil
}

// publicURL is http.public_url; in dev mode, when unset, the listen
// address.
func (c *Config) publicURL(dev bool) string {
	if c.HTTP.PublicURL != "" || !dev {
		return c.HTTP.PublicURL
	}
	scheme := "http://"
	if c.TLS.CertFile != "" {
		scheme = "https://"
	}
	return scheme + c.Listen
}
