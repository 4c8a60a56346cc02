package cli

import (
	"crypto/rand"
	"fmt"
	"log/slog"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/unsubscribe"
)

// UnsubscribeConfig is `unsubscribe:`: the one-click unsubscribe links of
// e-mails (RFC 8058; README: One-click unsubscribe). Their base is
// http.public_url.
type UnsubscribeConfig struct {
	// Secret signs the links (HMAC-SHA256), at least 32 bytes: `openssl
	// rand -hex 32`. Inline, from a file, or HERALD_UNSUBSCRIBE__SECRET;
	// never logged. Without it (outside --dev) e-mails carry no
	// List-Unsubscribe header.
	Secret     string `koanf:"secret"`
	SecretFile string `koanf:"secret_file"`
	// Mailto adds "mailto:<address>?subject=unsubscribe <token>" as a
	// second target, for mail clients that only mail.
	Mailto string `koanf:"mailto"`
}

// unsubscribe builds herald.UnsubscribeConfig. In dev mode a missing
// secret is a random one (links then die with the process) and a missing
// http.public_url is the listen address.
func (c *Config) unsubscribe(dev bool, log *slog.Logger) (herald.UnsubscribeConfig, error) {
	sec, err := secret("unsubscribe.secret", c.Unsubscribe.Secret, c.Unsubscribe.SecretFile)
	if err != nil {
		return herald.UnsubscribeConfig{}, err
	}
	if dev && sec == "" {
		sec = rand.Text() + rand.Text()
	}
	base := c.publicURL(dev)
	switch {
	case sec == "":
		if c.SMTP.Host != "" {
			log.Warn("unsubscribe.secret is not set: e-mails carry no one-click List-Unsubscribe header (RFC 8058), " +
				"which Gmail and Yahoo require of bulk senders; set unsubscribe.secret and http.public_url")
		}
		return herald.UnsubscribeConfig{}, nil
	case len(sec) < unsubscribe.MinSecretBytes:
		return herald.UnsubscribeConfig{}, fmt.Errorf("config: unsubscribe.secret is %d bytes; at least %d are needed (openssl rand -hex 32)",
			len(sec), unsubscribe.MinSecretBytes)
	case base == "":
		return herald.UnsubscribeConfig{}, fmt.Errorf("config: http.public_url is required with unsubscribe.secret: it is the base of the unsubscribe links")
	}
	return herald.UnsubscribeConfig{Secret: []byte(sec), BaseURL: base, Mailto: c.Unsubscribe.Mailto}, nil
}
