package smtp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Config configures an Emulator. The zero value is a plain-text
// server on which any credentials, or none, are accepted.
type Config struct {
	// Username and Password, if Username is set, are the only credentials
	// accepted, and a client must authenticate before MAIL FROM. Without
	// them any credentials pass, with every mechanism.
	Username string
	Password string
	// Mechanisms are the AUTH mechanisms advertised in EHLO, in this
	// order: MechPlain, MechLogin, MechCramMD5, MechXOAuth2 (any case).
	// DefaultMechanisms (all four) if empty. Each checks its own
	// credential: PLAIN and LOGIN the password, CRAM-MD5 its HMAC of a
	// challenge, XOAUTH2 a bearer token (OAuth2Token, VerifyToken).
	Mechanisms []string
	// OAuth2Token is the bearer token XOAUTH2 accepts for Username when
	// VerifyToken is nil. With a Username but neither, XOAUTH2 refuses
	// every token.
	OAuth2Token string
	// VerifyToken, if set, decides which XOAUTH2 bearer tokens are
	// accepted for which user (tests: a token endpoint's current token, so
	// an expired one is refused).
	VerifyToken func(username, token string) bool
	// TLS is TLSNone (the default), TLSStartTLS (STARTTLS offered; AUTH
	// only after it) or TLSImplicit (TLS from the first byte).
	TLS string
	// Certificate is served for TLS; a self-signed certificate for
	// localhost, 127.0.0.1, ::1 and Hostnames if nil (see CertPool).
	Certificate *tls.Certificate
	// Hostnames (DNS names or IP addresses) are added to the self-signed
	// certificate's names; New fails on anything else.
	Hostnames []string
	// Domain is the name in the greeting; "localhost" if empty.
	Domain string
	// MaxMessageBytes bounds one mail (552 beyond it); 10 MiB if zero.
	MaxMessageBytes int64
	// MaxRecorded bounds the mails kept (the oldest are dropped); 10,000 if
	// zero.
	MaxRecorded int
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// Now is the clock, time.Now if nil.
	Now func() time.Time
	// Logger, if set, logs every accepted mail (serve --dev uses it so a
	// newcomer sees the mail arrive) and the server's protocol errors.
	Logger *slog.Logger
}

// Received is one mail the emulator accepted, parsed.
type Received struct {
	// From and To are the envelope (MAIL FROM, RCPT TO).
	From string   `json:"from"`
	To   []string `json:"to"`
	// Subject is the decoded Subject header.
	Subject   string `json:"subject"`
	MessageID string `json:"message_id"`
	// Text and HTML are the decoded text/plain and text/html parts, with
	// LF line ends.
	Text    string              `json:"text"`
	HTML    string              `json:"html,omitempty"`
	Headers map[string][]string `json:"headers"`
	// Size is the raw mail's size in bytes.
	Size int `json:"size"`
	// TLS reports whether the mail arrived over TLS; User is the
	// authenticated user, "" if none, and Mechanism the AUTH mechanism
	// it authenticated with.
	TLS       bool   `json:"tls"`
	User      string `json:"user,omitempty"`
	Mechanism string `json:"mechanism,omitempty"`
	// Helo is the name the client gave in EHLO/HELO.
	Helo       string    `json:"helo"`
	ReceivedAt time.Time `json:"received_at"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	Accepted uint64 `json:"accepted"`
	// Rejected counts error replies by SMTP code (535 for a failed AUTH).
	Rejected map[int]uint64 `json:"rejected"`
}

// Emulator is an in-process SMTP submission server (go-smtp) with
// optional STARTTLS or implicit TLS and AUTH PLAIN, LOGIN, CRAM-MD5 and
// XOAUTH2 (Config.Mechanisms). It parses and records
// what it accepts, and answers scripted SMTP errors per recipient or at a
// rate. A small HTTP side listener (StartHTTP) serves:
//
//	GET    /emulator/messages[?to=]   accepted mails
//	DELETE /emulator/messages         Reset
//	GET|PUT|DELETE /emulator/faults   fault injection (Faults)
//	GET    /emulator/stats            Stats
type Emulator struct {
	cfg     Config
	tls     *tls.Config
	pool    *x509.CertPool
	server  *gosmtp.Server
	httpMux *http.ServeMux
	faults  *fault.Engine[Faults, RecipientFault, int] // faults, latency and the counters

	mu      sync.Mutex // guards everything below; never held while sleeping
	addr    string
	serving bool
	httpURL string
	httpSrv *http.Server

	rec *emulator.Recorder[Received] // accepted mails
}

// New returns an Emulator; call Start to serve SMTP and StartHTTP
// for the side listener. It fails only on a bad TLS setting or Hostnames.
func New(cfg Config) (*Emulator, error) {
	switch cfg.TLS {
	case "":
		cfg.TLS = TLSNone
	case TLSNone, TLSStartTLS, TLSImplicit:
	default:
		return nil, fmt.Errorf("smtp emulator: TLS %q is not %q, %q or %q", cfg.TLS, TLSNone, TLSStartTLS, TLSImplicit)
	}
	mechs, err := mechanisms(cfg.Mechanisms)
	if err != nil {
		return nil, err
	}
	cfg.Mechanisms = mechs
	if cfg.Domain == "" {
		cfg.Domain = "localhost"
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 10 << 20
	}
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 10_000, cfg.Now)
	e := &Emulator{
		cfg:    cfg,
		faults: fault.New(cfg.Seed, faultSpec),
		rec:    emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	if cfg.TLS != TLSNone {
		cert := cfg.Certificate
		if cert == nil {
			c, err := emulator.SelfSignedCert("SMTP", cfg.Hostnames)
			if err != nil {
				return nil, fmt.Errorf("smtp emulator: making a certificate: %w", err)
			}
			cert, e.pool = &c, emulator.CertPool(c)
		}
		e.tls = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
	}
	s := gosmtp.NewServer(gosmtp.BackendFunc(e.newSession))
	s.Domain = cfg.Domain
	s.MaxMessageBytes = cfg.MaxMessageBytes
	s.MaxRecipients = 100
	s.ReadTimeout = time.Minute
	s.WriteTimeout = time.Minute
	// Without TLS there is nothing to wait for; with STARTTLS, AUTH is
	// refused until the upgrade, as real submission servers do.
	s.AllowInsecureAuth = cfg.TLS == TLSNone
	if cfg.TLS == TLSStartTLS {
		s.TLSConfig = e.tls
	}
	s.ErrorLog = serverLog{cfg.Logger}
	e.server = s
	e.httpMux = e.routes()
	return e, nil
}

// Start listens on addr (":0" picks a free port) and serves SMTP in the
// background until Close. It returns the listening "host:port".
func (e *Emulator) Start(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	return e.Serve(l)
}

// Serve serves SMTP on l in the background until Close (wrapping it in TLS
// for TLSImplicit) and returns its "host:port".
func (e *Emulator) Serve(l net.Listener) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.serving {
		return "", errors.New("smtp emulator: already serving")
	}
	hostPort, err := emulator.ReachableAddr(l.Addr())
	if err != nil {
		return "", err
	}
	if e.cfg.TLS == TLSImplicit {
		l = tls.NewListener(l, e.tls)
	}
	e.addr = hostPort
	e.serving = true
	go e.server.Serve(l) //nolint:errcheck // Serve returns only once Close closes the listener.
	return e.addr, nil
}

// Addr is the SMTP "host:port" the emulator listens on.
func (e *Emulator) Addr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.addr
}

// HostPort splits Addr for smtp.Config's Host and Port.
func (e *Emulator) HostPort() (string, int) {
	host, port, _ := net.SplitHostPort(e.Addr())
	p, _ := strconv.Atoi(port)
	return host, p
}

// TLS is the emulator's TLS mode (TLSNone, TLSStartTLS or TLSImplicit),
// the mode a client of it must use.
func (e *Emulator) TLS() string { return e.cfg.TLS }

// Mechanisms are the AUTH mechanisms the emulator advertises, in order.
func (e *Emulator) Mechanisms() []string { return slices.Clone(e.cfg.Mechanisms) }

// CertPool trusts the emulator's self-signed certificate: pass it as
// smtp.Config.RootCAs. It is nil without TLS or with Certificate set.
func (e *Emulator) CertPool() *x509.CertPool { return e.pool }

// StartHTTP serves the side listener's routes on addr until Close and
// returns its base URL, also given by HTTPURL.
func (e *Emulator) StartHTTP(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.httpSrv != nil {
		l.Close()
		return "", errors.New("smtp emulator: HTTP side listener already serving")
	}
	host, port, _ := net.SplitHostPort(l.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	e.httpURL = "http://" + net.JoinHostPort(host, port)
	e.httpSrv = &http.Server{Handler: e.httpMux, ReadHeaderTimeout: 10 * time.Second}
	go e.httpSrv.Serve(l) //nolint:errcheck // Serve only returns ErrServerClosed after Close.
	return e.httpURL, nil
}

// HTTPURL is the side listener's base URL, "" before StartHTTP.
func (e *Emulator) HTTPURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.httpURL
}

// ServeHTTP serves the side listener's routes, for mounting them in your
// own server instead of StartHTTP.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.httpMux.ServeHTTP(w, r) }

// Close stops the SMTP server and the side listener.
func (e *Emulator) Close() error {
	e.mu.Lock()
	serving, hs := e.serving, e.httpSrv
	e.serving, e.httpSrv = false, nil
	e.mu.Unlock()
	var errs []error
	if serving {
		if err := e.server.Close(); err != nil && !errors.Is(err, gosmtp.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if hs != nil {
		errs = append(errs, hs.Close())
	}
	return errors.Join(errs...)
}

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected}
}

// Reset forgets recorded mails and counters. Faults stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

func (e *Emulator) routes() *http.ServeMux {
	mux := http.NewServeMux()
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: "application/json; charset=utf-8", Filter: "to"}.Register(mux)
	return mux
}

// serverLog sends go-smtp's protocol error log to the Logger at debug
// level (a client hanging up mid-dialogue is routine), or nowhere.
type serverLog struct{ l *slog.Logger }

var _ gosmtp.Logger = serverLog{}

func (s serverLog) Printf(format string, v ...any) {
	if s.l != nil {
		s.l.Debug("smtp emulator: " + fmt.Sprintf(format, v...))
	}
}

func (s serverLog) Println(v ...any) {
	if s.l != nil {
		s.l.Debug("smtp emulator: " + strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
	}
}
