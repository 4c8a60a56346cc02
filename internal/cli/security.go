package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/redact"
	"github.com/heraldhq/herald/store"
)

// AuthConfig is `auth:` in the configuration: how callers authenticate.
// Every secret here can come from a file (…_file) or the environment
// (HERALD_AUTH__…); none is ever logged.
type AuthConfig struct {
	// BootstrapKey is an admin API key given by configuration, for a
	// deployment provisioned by an orchestrator (env
	// HERALD_BOOTSTRAP_API_KEY or HERALD_AUTH__BOOTSTRAP_KEY). 32 to 256
	// characters of [A-Za-z0-9_-]: `openssl rand -hex 32`.
	BootstrapKey     string `koanf:"bootstrap_key"`
	BootstrapKeyFile string `koanf:"bootstrap_key_file"`
	// MetricsAuth makes /metrics require a key with metrics:read (default
	// true); false serves it to anyone who can reach the port.
	MetricsAuth bool `koanf:"metrics_auth"`
	// KeyCacheTTL: how long an API key is trusted without asking the
	// database, i.e. how long a revocation takes to reach every instance.
	KeyCacheTTL time.Duration `koanf:"key_cache_ttl"`
	// NegativeCacheTTL: how long an unknown key id is answered without
	// asking the database again; NegativeCacheSize: how many such ids
	// are remembered at most (issue 23 item 8).
	NegativeCacheTTL  time.Duration    `koanf:"negative_cache_ttl"`
	NegativeCacheSize int              `koanf:"negative_cache_size"`
	UserTokens        UserTokensConfig `koanf:"user_tokens"`
}

// UserTokensConfig configures the user tokens apps present (JWT).
type UserTokensConfig struct {
	Issuer      string        `koanf:"issuer"`
	Audience    string        `koanf:"audience"`
	MaxLifetime time.Duration `koanf:"max_lifetime"`
	Leeway      time.Duration `koanf:"leeway"`
	// Keys by kid. A map rather than a list so that each key can be set
	// from the environment: HERALD_AUTH__USER_TOKENS__KEYS__APP1__SECRET.
	Keys map[string]UserTokenKeyConfig `koanf:"keys"`
}

// UserTokenKeyConfig is one signing key: HS256 with a secret, or ES256
// with a public key, each inline or from a file.
type UserTokenKeyConfig struct {
	Alg           string `koanf:"alg"`
	Secret        string `koanf:"secret"`
	SecretFile    string `koanf:"secret_file"`
	PublicKeyPEM  string `koanf:"public_key_pem"`
	PublicKeyFile string `koanf:"public_key_file"`
}

// RateLimitConfig is `rate_limit:` in the configuration.
type RateLimitConfig struct {
	APIKey RateConfig `koanf:"api_key"`
	User   RateConfig `koanf:"user"`
	// FailedAuth: failed authentications per client address (an IPv4
	// address or an IPv6 /64); over it the address is refused 429 before
	// its credential is looked up. FailedAuthClients bounds the addresses
	// counted at once (issue 23 item 8).
	FailedAuth        RateConfig `koanf:"failed_auth"`
	FailedAuthClients int        `koanf:"failed_auth_clients"`
	// PublicLinks: requests per client address to the tracked links and
	// open pixels of e-mails, which take no credential (429 over it).
	PublicLinks RateConfig `koanf:"public_links"`
}

// RateConfig is one token bucket; per_second 0 disables it.
type RateConfig struct {
	PerSecond float64 `koanf:"per_second"`
	Burst     int     `koanf:"burst"`
}

// TLSConfig is `tls:`: serve HTTPS with this certificate and key.
type TLSConfig struct {
	CertFile string `koanf:"cert_file"`
	KeyFile  string `koanf:"key_file"`
}

// secret returns an inline value or a file's content (trailing newline
// trimmed), refusing both. what names the setting, never its value.
func secret(what, inline, file string) (string, error) {
	switch {
	case inline != "" && file != "":
		return "", fmt.Errorf("config: set %s or %s_file, not both", what, what)
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("config: %s_file: %w", what, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return inline, nil
}

// keys builds the API key checker over st.
func (c *AuthConfig) keys(st store.APIKeys) (*auth.Keys, error) {
	boot, err := secret("auth.bootstrap_key", c.BootstrapKey, c.BootstrapKeyFile)
	if err != nil {
		return nil, err
	}
	k, err := auth.NewKeys(auth.KeysConfig{Store: st, Bootstrap: boot, CacheTTL: c.KeyCacheTTL,
		NegativeCacheTTL: c.NegativeCacheTTL, NegativeCacheSize: c.NegativeCacheSize})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return k, nil
}

// sessions builds the operator console's sessions over st, signing in
// with keys. It refuses a zero or negative duration, an idle timeout
// longer than the lifetime and a lifetime beyond auth.MaxSessionLifetime,
// naming the setting.
func (c ConsoleConfig) sessions(st store.ConsoleSessions, keys *auth.Keys) (*auth.Sessions, error) {
	switch {
	case c.SessionIdle <= 0:
		return nil, fmt.Errorf("config: console.session_idle: %s must be a positive duration (a console session not used for this long ends)", c.SessionIdle)
	case c.SessionLifetime <= 0:
		return nil, fmt.Errorf("config: console.session_lifetime: %s must be a positive duration (a console session ends this long after sign-in)", c.SessionLifetime)
	case c.SessionLifetime > auth.MaxSessionLifetime:
		return nil, fmt.Errorf("config: console.session_lifetime: %s is longer than the most allowed, %s", c.SessionLifetime, auth.MaxSessionLifetime)
	case c.SessionIdle > c.SessionLifetime:
		return nil, fmt.Errorf("config: console.session_idle (%s) must not be longer than console.session_lifetime (%s)", c.SessionIdle, c.SessionLifetime)
	}
	s, err := auth.NewSessions(auth.SessionsConfig{Store: st, Keys: keys, IdleTimeout: c.SessionIdle, Lifetime: c.SessionLifetime})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return s, nil
}

// userTokens builds the user token verifier, or nil when no key is
// configured (user tokens are then refused).
func (c *UserTokensConfig) userTokens() (*auth.UserTokens, error) {
	if len(c.Keys) == 0 {
		return nil, nil
	}
	kids := make([]string, 0, len(c.Keys))
	for kid := range c.Keys {
		kids = append(kids, kid)
	}
	slices.Sort(kids)
	cfg := auth.UserTokenConfig{Issuer: c.Issuer, Audience: c.Audience, MaxLifetime: c.MaxLifetime, Leeway: c.Leeway}
	for _, kid := range kids {
		k := c.Keys[kid]
		where := "auth.user_tokens.keys." + kid
		sec, err := secret(where+".secret", k.Secret, k.SecretFile)
		if err != nil {
			return nil, err
		}
		pub, err := secret(where+".public_key_pem", k.PublicKeyPEM, k.PublicKeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Keys = append(cfg.Keys, auth.UserTokenKey{ID: kid, Algorithm: strings.ToUpper(k.Alg), Secret: []byte(sec), PublicKeyPEM: []byte(pub)})
	}
	v, err := auth.NewUserTokens(cfg)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return v, nil
}

func (c RateLimitConfig) httpapi() httpapi.RateLimitConfig {
	return httpapi.RateLimitConfig{
		APIKey: httpapi.RateLimit{PerSecond: c.APIKey.PerSecond, Burst: c.APIKey.Burst},
		User:   httpapi.RateLimit{PerSecond: c.User.PerSecond, Burst: c.User.Burst},

		FailedAuth:        httpapi.RateLimit{PerSecond: c.FailedAuth.PerSecond, Burst: c.FailedAuth.Burst},
		PublicLinks:       httpapi.RateLimit{PerSecond: c.PublicLinks.PerSecond, Burst: c.PublicLinks.Burst},
		FailedAuthClients: c.FailedAuthClients,
	}
}

// tlsConfig loads the certificate at start-up, so a bad file fails the
// start rather than the first handshake. Nil when TLS is not configured.
func (c TLSConfig) tlsConfig() (*tls.Config, error) {
	if c.CertFile == "" && c.KeyFile == "" {
		return nil, nil
	}
	if c.CertFile == "" || c.KeyFile == "" {
		return nil, errors.New("config: TLS needs both --tls-cert and --tls-key (tls.cert_file, tls.key_file)")
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("config: TLS certificate %s / key %s: %w", c.CertFile, c.KeyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// checkDevListen refuses a non-loopback address in dev mode, where
// authentication is off.
func checkDevListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--dev turns authentication off and binds to loopback only; --listen %s is not a loopback address: use 127.0.0.1:PORT, or run without --dev and with an API key (herald keys create)", addr)
}

// requireKey refuses to serve an API nobody can call, and tells the
// operator exactly how to make one.
func requireKey(ctx context.Context, keys *auth.Keys, cfg Config) error {
	ok, err := keys.Configured(ctx)
	if err != nil {
		return fmt.Errorf("checking for API keys: %w", err)
	}
	if ok {
		return nil
	}
	db := redact.DSN(cfg.Database)
	return fmt.Errorf(`no API key is configured, so nobody could call the API. Create one (it talks to the database directly and prints the key once):

    herald keys create --name admin --scope admin --database %s

or set a bootstrap key from a secret store: HERALD_BOOTSTRAP_API_KEY=$(openssl rand -hex 32).
On a laptop, run "herald serve --dev" instead (loopback only, no authentication)`, db)
}
