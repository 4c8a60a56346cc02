package herald

import (
	"fmt"
	"net/netip"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/callout"
	"github.com/heraldhq/herald/internal/outbound"
)

// CalloutConfig governs every call Herald makes to an endpoint named in
// a rule or a campaign — an audience webhook, a campaign's content fetch
// (issue 31 items 2 and 6). Such calls reach only globally reachable
// addresses, checked on the address actually dialled after DNS, follow no
// redirect, and fail with "refused" or "failed" without telling the caller
// anything about the network (the detail is logged).
type CalloutConfig struct {
	// Allow lists the internal networks callouts may reach besides the
	// public ones (callout.allow, e.g. 10.0.0.0/8 for a CRM inside the
	// VPC). Empty: none — loopback, private, link-local (cloud metadata)
	// and every other non-public range are refused. It does not apply to
	// Web Push endpoints, which any app user names.
	Allow []netip.Prefix
	// Secrets are auth headers by name (callout.secrets): a webhook or a
	// fetch naming one ("secret": "crm") carries its header on every
	// call. Values are never shown, logged or returned; an API caller can
	// only name a secret declared here.
	Secrets map[string]CalloutSecret
}

// CalloutSecret is one declared auth header: Header, e.g.
// "Authorization", and its Value, e.g. "Bearer …" (the herald binary reads
// it from a file).
type CalloutSecret struct {
	Header string
	Value  string
}

// newCaller builds the callout caller over a guarded outbound client.
func newCaller(cfg Config) (*callout.Caller, error) {
	for i, p := range cfg.Callout.Allow {
		if !p.IsValid() || p != p.Masked() {
			return nil, fmt.Errorf("herald: Callout.Allow[%d]: %s is not a network address with its prefix length", i, p)
		}
	}
	secrets := make(map[string]callout.Secret, len(cfg.Callout.Secrets))
	for name, s := range cfg.Callout.Secrets {
		secrets[name] = callout.Secret(s)
	}
	c, err := callout.New(callout.Config{
		Outbound: outbound.New(outbound.Config{Allow: cfg.Callout.Allow, Logger: cfg.Logger}),
		Secrets:  secrets,
	})
	if err != nil {
		return nil, fmt.Errorf("herald: Callout: %w", err)
	}
	return c, nil
}

// checkCallout checks what of a callout's definition depends on this
// Client: its host is not refused outright (localhost, an internal
// address outside Callout.Allow) and the secret it names is declared.
// field is the definition's path ("fetch", "audience.webhook").
func (c *Client) checkCallout(field, url, secret string) error {
	if err := c.caller.CheckHost(url); err != nil {
		return heraldtype.FieldErrorf(field+".url", "%v", err)
	}
	if secret != "" && !c.caller.HasSecret(secret) {
		return heraldtype.FieldErrorf(field+".secret", "%q is not a declared secret (callout.secrets)", secret)
	}
	return nil
}
