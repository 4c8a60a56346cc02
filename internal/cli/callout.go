package cli

import (
	"fmt"
	"net/netip"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/outbound"
)

// CalloutConfig is `callout:` (issue 31 items 2 and 6): what the calls to
// endpoints named in rules and campaigns — audience webhooks, content
// fetches — may reach, and the auth headers they may carry.
type CalloutConfig struct {
	// Allow lists internal networks (CIDRs) callouts may reach besides
	// the public ones, e.g. [10.0.0.0/8]. Default none.
	Allow []string `koanf:"allow"`
	// Secrets are auth headers by name; a webhook or a fetch names one
	// ("secret": "crm"). The value is read from File (or inline Value,
	// e.g. from HERALD_CALLOUT__SECRETS__CRM__VALUE) at start and never
	// logged or shown.
	Secrets map[string]CalloutSecretConfig `koanf:"secrets"`
}

// CalloutSecretConfig is one entry of callout.secrets.
type CalloutSecretConfig struct {
	Header string `koanf:"header"`
	File   string `koanf:"file"`
	Value  string `koanf:"value"`
}

// devAllow is what `serve --dev` lets callouts reach: loopback, where a
// developer runs the webhooks and fetch endpoints they try out (and the
// emulators live). The guard stays on for everything else.
var devAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// callout builds herald.CalloutConfig: the allow-list parsed, each
// secret's value read.
func (c *Config) callout(dev bool) (herald.CalloutConfig, error) {
	allow, err := outbound.ParseAllow(c.Callout.Allow)
	if err != nil {
		return herald.CalloutConfig{}, fmt.Errorf("config: callout.allow%w", err)
	}
	if dev {
		allow = append(allow, devAllow...)
	}
	out := herald.CalloutConfig{Allow: allow}
	if len(c.Callout.Secrets) > 0 {
		out.Secrets = make(map[string]herald.CalloutSecret, len(c.Callout.Secrets))
	}
	for name, s := range c.Callout.Secrets {
		v, err := secret("callout.secrets."+name+".value", s.Value, s.File)
		if err != nil {
			return herald.CalloutConfig{}, err
		}
		if v == "" {
			return herald.CalloutConfig{}, fmt.Errorf("config: callout.secrets.%s: set file (or value)", name)
		}
		out.Secrets[name] = herald.CalloutSecret{Header: s.Header, Value: v}
	}
	return out, nil
}
