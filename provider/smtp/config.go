package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"strings"
	"time"
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
	// Username and Password authenticate with AUTH PLAIN; no
	// authentication if Username is empty. Password is a secret: Config's
	// String, Format and LogValue never print it.
	Username string
	Password string
	// TLS is TLSStartTLS (the default), TLSImplicit or TLSNone.
	TLS string
	// From is the sender, an address with an optional display name:
	// "Acme <noreply@acme.example>".
	From string
	// HeloName is the name sent with EHLO; "localhost" if empty.
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
	from *mail.Address
	tls  *tls.Config
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
	if c.Username == "" && c.Password != "" {
		return nil, errors.New("smtp: Password is set but Username is empty")
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
	if r.HeloName == "" {
		r.HeloName = "localhost"
	}
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

// String describes c without its password.
func (c Config) String() string {
	pw := "none"
	if c.Password != "" {
		pw = "[redacted]"
	}
	return fmt.Sprintf("smtp.Config{Host:%q Port:%d Username:%q Password:%s TLS:%q From:%q HeloName:%q Timeout:%v}",
		c.Host, c.Port, c.Username, pw, c.TLS, c.From, c.HeloName, c.Timeout)
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
		slog.String("tls", c.TLS),
		slog.String("from", c.From),
		slog.Duration("timeout", c.Timeout),
	)
}
