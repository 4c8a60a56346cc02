package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"os"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// TLS modes of Config.TLS.
const (
	// TLSStartTLS connects in plain text and upgrades with STARTTLS before
	// authenticating; the server must offer it (submission, port 587).
	TLSStartTLS = "starttls"
	// TLSImplicit speaks TLS from the first byte (submissions, port 465).
	TLSImplicit = "tls"
	// TLSNone never encrypts. It sends the password in the clear, so it is
	// only for a local emulator or test server.
	TLSNone = "none"
)

// Defaults of Config.
const (
	DefaultPort         = 587
	DefaultImplicitPort = 465
	// DefaultTimeout bounds one Send: connecting, TLS, authentication and
	// the SMTP dialogue.
	DefaultTimeout = 30 * time.Second
)

// Config configures a Client. Host and From are required.
type Config struct {
	// Host is the submission server's host name; it is also the name its
	// TLS certificate is checked against.
	Host string
	// Port is DefaultPort (587), or DefaultImplicitPort (465) with
	// TLSImplicit, if zero.
	Port int
	// Username and Password authenticate (Auth picks the mechanism); no
	// authentication if Username is empty. Username is also the mailbox
	// XOAUTH2 authenticates as. Password is a secret: Config's String,
	// Format and LogValue never print it.
	Username string
	Password string
	// Auth is the AUTH mechanism: AuthAuto (the default: the strongest
	// the server offers, see mechanisms), AuthPlain, AuthLogin,
	// AuthCramMD5 or AuthXOAuth2. A named one the server does not offer
	// fails the send with a permanent smtp_config error.
	Auth string
	// AllowInsecureAuth lets PLAIN, LOGIN and XOAUTH2, which send a
	// reusable secret, run on an unencrypted connection (TLSNone). Off by
	// default: only for a local emulator or a connection secured some
	// other way (a tunnel). CRAM-MD5 never needs it.
	AllowInsecureAuth bool
	// OAuth2 is the token endpoint XOAUTH2 gets its tokens from; its
	// secrets are never printed.
	OAuth2 OAuth2
	// TokenSource, instead of OAuth2, supplies XOAUTH2 tokens from an
	// embedding program (for example google.CredentialsFromJSON with
	// domain-wide delegation). It should cache its tokens itself
	// (oauth2.ReuseTokenSource).
	TokenSource oauth2.TokenSource
	// TLS is TLSStartTLS (the default), TLSImplicit or TLSNone.
	TLS string
	// From is the sender, an address with an optional display name:
	// "Acme <noreply@acme.example>".
	From string
	// HeloName is the name sent with EHLO/HELO: the sending host's fully
	// qualified name, or an address literal ("[192.0.2.1]"). Some servers
	// refuse or score as spam a name that is not one. If empty, the
	// machine's host name when it is fully qualified, else "localhost".
	HeloName string
	// Timeout bounds one Send; DefaultTimeout if zero.
	Timeout time.Duration
	// TLSConfig overrides the TLS settings (minimum version, client
	// certificates). Its ServerName defaults to Host.
	TLSConfig *tls.Config
	// RootCAs, if set, are the only CAs trusted for the server's
	// certificate: tests and `herald emulate smtp` users pass the
	// emulator's (Emulator.CertPool).
	RootCAs *x509.CertPool
	// Now is the clock, time.Now if nil. It dates the messages.
	Now func() time.Time
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	from   *mail.Address
	tls    *tls.Config
	tokens *tokenCache // XOAUTH2's tokens; nil without OAuth2 or TokenSource
}

// validate checks c and fills in defaults. Error messages name the bad
// setting but never quote the password.
func (c Config) validate() (*resolved, error) {
	r := &resolved{Config: c}
	if c.Host == "" || strings.ContainsAny(c.Host, " \t/[]@") || strings.Contains(c.Host, ":") && net.ParseIP(c.Host) == nil {
		return nil, fmt.Errorf("smtp: Host %q must be a host name or IP address, without a port", c.Host)
	}
	switch r.TLS {
	case "":
		r.TLS = TLSStartTLS
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, fmt.Errorf("smtp: TLS %q is not %q, %q or %q", c.TLS, TLSStartTLS, TLSImplicit, TLSNone)
	}
	switch {
	case r.Port < 0 || r.Port > 65535:
		return nil, fmt.Errorf("smtp: Port %d is out of range", r.Port)
	case r.Port == 0 && r.TLS == TLSImplicit:
		r.Port = DefaultImplicitPort
	case r.Port == 0:
		r.Port = DefaultPort
	}
	if err := r.validateAuth(); err != nil {
		return nil, err
	}
	if c.From == "" {
		return nil, errors.New("smtp: From is required")
	}
	from, err := mail.ParseAddress(c.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: From %q is not an e-mail address: %v", c.From, err)
	}
	r.from = from
	switch {
	case r.Timeout < 0:
		return nil, fmt.Errorf("smtp: Timeout %v is negative", r.Timeout)
	case r.Timeout == 0:
		r.Timeout = DefaultTimeout
	}
	if err := r.validateHelo(); err != nil {
		return nil, err
	}
	r.tokens = newTokenCache(c.OAuth2, c.TokenSource, r.Timeout)
	if c.TLSConfig != nil {
		r.tls = c.TLSConfig.Clone()
	} else {
		r.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if r.tls.ServerName == "" {
		r.tls.ServerName = c.Host
	}
	if c.RootCAs != nil {
		r.tls.RootCAs = c.RootCAs
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}

// validateAuth checks the credentials and the mechanism, and fills in
// Auth's default.
func (r *resolved) validateAuth() error {
	hasOAuth := r.OAuth2.set() || r.TokenSource != nil
	switch {
	case r.Username == "" && (r.Password != "" || hasOAuth):
		return errors.New("smtp: Password, OAuth2 or TokenSource is set but Username is empty")
	case r.Username != "" && r.Password == "" && !hasOAuth:
		return errors.New("smtp: Username is set without a Password, OAuth2 or TokenSource")
	case r.OAuth2.set() && r.TokenSource != nil:
		return errors.New("smtp: set OAuth2 or TokenSource, not both")
	}
	if r.OAuth2.set() {
		if err := r.OAuth2.validate(); err != nil {
			return err
		}
	}
	r.Auth = strings.ToLower(strings.TrimSpace(r.Auth))
	if r.Auth == "" {
		r.Auth = AuthAuto
	}
	if r.Auth == AuthAuto {
		return nil
	}
	m, ok := mechanismOf(r.Auth)
	switch {
	case !ok:
		return fmt.Errorf("smtp: Auth %q is not %q, %q, %q, %q or %q", r.Auth, AuthAuto, AuthPlain, AuthLogin, AuthCramMD5, AuthXOAuth2)
	case r.Username == "":
		return fmt.Errorf("smtp: Auth %q needs a Username", r.Auth)
	case m.oauth && !hasOAuth:
		return fmt.Errorf("smtp: Auth %q needs OAuth2 (a token endpoint) or a TokenSource", r.Auth)
	case !m.oauth && r.Password == "":
		return fmt.Errorf("smtp: Auth %q needs a Password", r.Auth)
	case m.cleartext && r.TLS == TLSNone && !r.AllowInsecureAuth:
		return fmt.Errorf("smtp: Auth %q would send a reusable secret unencrypted with TLS %q; set AllowInsecureAuth to allow it (a local emulator only)", r.Auth, TLSNone)
	}
	return nil
}

// validateHelo checks HeloName, or picks the default.
func (r *resolved) validateHelo() error {
	if r.HeloName == "" {
		r.HeloName = "localhost"
		if h, err := os.Hostname(); err == nil && strings.Contains(h, ".") && validHelo(h) {
			r.HeloName = h
		}
		return nil
	}
	if !validHelo(r.HeloName) {
		return fmt.Errorf("smtp: HeloName %q is not a host name or an address literal such as [192.0.2.1]", r.HeloName)
	}
	return nil
}

// validHelo reports whether s can follow EHLO (RFC 5321 §4.1.1.1): a
// domain of letters, digits, hyphens and dots, or a bracketed address
// literal.
func validHelo(s string) bool {
	if len(s) > 255 {
		return false
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		lit := strings.TrimPrefix(s[1:len(s)-1], "IPv6:")
		return net.ParseIP(lit) != nil
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// String describes c without its password.
func (c Config) String() string {
	pw := "none"
	if c.Password != "" {
		pw = "[redacted]"
	}
	oauth := "none"
	switch {
	case c.TokenSource != nil:
		oauth = "TokenSource"
	case c.OAuth2.set():
		oauth = fmt.Sprintf("{TokenURL:%q ClientID:%q ClientSecret:[redacted] RefreshToken:[redacted]}", c.OAuth2.TokenURL, c.OAuth2.ClientID)
	}
	return fmt.Sprintf("smtp.Config{Host:%q Port:%d Username:%q Password:%s Auth:%q OAuth2:%s TLS:%q From:%q HeloName:%q Timeout:%v}",
		c.Host, c.Port, c.Username, pw, c.Auth, oauth, c.TLS, c.From, c.HeloName, c.Timeout)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the password.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the password out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("host", c.Host),
		slog.Int("port", c.Port),
		slog.String("username", c.Username),
		slog.Bool("password_set", c.Password != ""),
		slog.String("auth", c.Auth),
		slog.String("oauth2_token_url", c.OAuth2.TokenURL),
		slog.String("helo_name", c.HeloName),
		slog.String("tls", c.TLS),
		slog.String("from", c.From),
		slog.Duration("timeout", c.Timeout),
	)
}
