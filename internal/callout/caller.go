package callout

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/heraldhq/herald/internal/outbound"
)

// Secret is an auth header an operator declares for callouts (issue 31
// item 6): a webhook or a fetch names it, and its value — read by the CLI
// from a file the operator chose — goes with every call of it. An API
// caller only ever names a declared secret, so it can neither make Herald
// read a file nor learn a value: the value is never shown, logged or
// echoed.
type Secret struct {
	Header string
	Value  string
}

// Config configures a Caller.
type Config struct {
	// Outbound makes the calls (the guard, the log of failures). Required.
	Outbound *outbound.Client
	// Secrets are the declared secrets by name.
	Secrets map[string]Secret
}

// Caller makes callouts. Safe for concurrent use.
type Caller struct {
	out     *outbound.Client
	secrets map[string]Secret
}

// secretName is the pattern of a secret's name.
var secretName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// headerName is an HTTP field name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")

// reservedHeaders are set by the call itself; a secret may not replace
// them.
var reservedHeaders = map[string]bool{"Content-Type": true, "Content-Length": true, "Accept": true, "Host": true,
	"Transfer-Encoding": true, "Connection": true, "Te": true, "Trailer": true, "Upgrade": true, "Expect": true}

// New checks cfg and returns a Caller. An error names the secret.
func New(cfg Config) (*Caller, error) {
	if cfg.Outbound == nil {
		return nil, fmt.Errorf("callout: Outbound is required")
	}
	c := &Caller{out: cfg.Outbound, secrets: make(map[string]Secret, len(cfg.Secrets))}
	for name, s := range cfg.Secrets {
		if err := checkSecret(name, s); err != nil {
			return nil, err
		}
		s.Header = http.CanonicalHeaderKey(s.Header)
		c.secrets[name] = s
	}
	return c, nil
}

func checkSecret(name string, s Secret) error {
	switch {
	case !secretName.MatchString(name):
		return fmt.Errorf("callout.secrets: %q is not a secret name (1-64 letters, digits, '_', '.', '-')", name)
	case !headerName.MatchString(s.Header):
		return fmt.Errorf("callout.secrets.%s.header: %q is not an HTTP header name", name, s.Header)
	case reservedHeaders[http.CanonicalHeaderKey(s.Header)]:
		return fmt.Errorf("callout.secrets.%s.header: %s is set by Herald itself", name, s.Header)
	case s.Value == "":
		return fmt.Errorf("callout.secrets.%s: the value is empty", name)
	case strings.ContainsAny(s.Value, "\r\n\x00"):
		return fmt.Errorf("callout.secrets.%s: the value holds a line break or NUL", name)
	}
	return nil
}

// HasSecret reports whether name is a declared secret, for checking a
// definition when it is saved.
func (c *Caller) HasSecret(name string) bool {
	_, ok := c.secrets[name]
	return ok
}
