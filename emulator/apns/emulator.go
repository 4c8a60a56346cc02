package apns

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Config configures an Emulator. The zero value is ready to use.
type Config struct {
	// Topics are the bundle ids the emulator accepts as apns-topic; any
	// well-formed topic if empty. Others are answered TopicDisallowed.
	Topics []string
	// AcceptUnknownKeys accepts provider tokens signed by keys the
	// emulator does not know (their signature is not checked), so a
	// client configured with a real .p8 key can be pointed at it.
	// Otherwise only keys from RegisterKey and NewProviderKey are valid.
	AcceptUnknownKeys bool
	// EnforceTokenUpdateInterval answers TooManyProviderTokenUpdates when
	// a key presents a new provider token less than 20 minutes after the
	// previous one, as APNs may. Off by default: several senders sharing
	// a key (a cluster, a restart) legitimately mint more often.
	EnforceTokenUpdateInterval bool
	// Hosts are extra DNS names or IP addresses for the emulator's TLS
	// certificate, besides localhost, 127.0.0.1 and ::1 (e.g. a container
	// name other services reach it by).
	Hosts []string
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the accepted messages kept (the oldest are
	// dropped); 100,000 if zero.
	MaxRecorded int
	// Now is the clock that judges provider tokens' iat and dates
	// recordings, time.Now if nil. (TLS certificates are checked against
	// the real clock.)
	Now func() time.Time
	// Logger, if set, logs every accepted message (serve --dev uses it so
	// a newcomer sees the push arrive).
	Logger *slog.Logger
}

// Received is one message the emulator accepted.
type Received struct {
	// APNsID is the apns-id the emulator answered with: the request's, or
	// one it generated.
	APNsID     string    `json:"apns_id"`
	Token      string    `json:"token"`
	Topic      string    `json:"topic"`
	PushType   string    `json:"push_type,omitempty"`
	Priority   int       `json:"priority"`
	Expiration int64     `json:"expiration,omitempty"`
	CollapseID string    `json:"collapse_id,omitempty"`
	TeamID     string    `json:"team_id"`
	KeyID      string    `json:"key_id"`
	Proto      string    `json:"proto"`
	ReceivedAt time.Time `json:"received_at"`
	// Payload is the request body, exactly as sent.
	Payload json.RawMessage `json:"payload"`
	// Warnings name what APNs accepts but a device would not show as
	// intended (a background push carrying an alert, say).
	Warnings []string `json:"warnings,omitempty"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	Accepted uint64 `json:"accepted"`
	// Rejected counts error answers by reason.
	Rejected map[string]uint64 `json:"rejected"`
	// EarlyRetries counts sends to a device token that arrived before the
	// Retry-After the emulator gave that token had passed. A well-behaved
	// sender keeps it at zero.
	EarlyRetries uint64 `json:"early_retries"`
	// ProviderTokens counts the distinct provider tokens (JWTs) that
	// authenticated a request: a sender that caches its token as Apple
	// asks keeps it near one per key per 50 minutes.
	ProviderTokens uint64 `json:"provider_tokens"`
	// Connections counts TLS connections accepted.
	Connections uint64 `json:"connections"`
}

// Emulator is an in-process APNs server over TLS and HTTP/2: provider
// token (JWT) verification, Apple's header and payload validation and error
// answers, recording of accepted messages and fault injection. It is an
// http.Handler; Start serves it with its own self-signed certificate,
// which clients trust through CertPool (Config.RootCAs). Routes:
//
//	POST   /3/device/{token}          APNs (HTTP/2 only)
//	GET    /emulator/messages[?token=] accepted messages
//	DELETE /emulator/messages          Reset
//	GET|PUT|DELETE /emulator/faults    fault injection (Faults)
//	GET    /emulator/stats             Stats
//	GET    /emulator/ca.pem            the certificate to trust
//	POST   /emulator/keys[?team_id=]   a new provider key (.p8, key id, team id)
type Emulator struct {
	cfg    Config
	mux    *http.ServeMux
	cert   tls.Certificate
	caPEM  []byte
	topics map[string]bool

	// keyMu guards the provider keys and tokens. Lock order: keyMu, then
	// mu (authenticate counts new tokens while holding keyMu).
	keyMu    sync.Mutex
	keys     map[string]emuKey        // by key id
	verified map[string]verifiedToken // by JWT: signature already checked
	lastJWT  map[string]jwtSeen       // by key id: the latest token presented

	http emulator.Server // the TLS listener and its base URL

	faults *engine // faults, latency and the shared counters

	mu             sync.Mutex // guards the two below
	providerTokens uint64
	connections    uint64

	rec *emulator.Recorder[Received] // accepted messages
}

// New returns an Emulator with a freshly generated TLS certificate;
// call Start to serve it.
func New(cfg Config) (*Emulator, error) {
	if cfg.MaxRecorded <= 0 {
		cfg.MaxRecorded = 100_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cert, caPEM, err := selfSignedCert(cfg.Hosts)
	if err != nil {
		return nil, err
	}
	e := &Emulator{
		cfg:      cfg,
		cert:     cert,
		caPEM:    caPEM,
		topics:   make(map[string]bool, len(cfg.Topics)),
		keys:     make(map[string]emuKey),
		verified: make(map[string]verifiedToken),
		lastJWT:  make(map[string]jwtSeen),
		faults:   fault.New(cfg.Seed, faultSpec),
		rec:      emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	for _, t := range cfg.Topics {
		e.topics[t] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/3/device/{token}", e.handleSend)
	mux.HandleFunc("/3/device/", func(w http.ResponseWriter, _ *http.Request) { e.fail(w, ReasonMissingDeviceToken) })
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { e.fail(w, ReasonBadPath) })
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "token"}.Register(mux)
	mux.HandleFunc("GET /emulator/ca.pem", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Write(e.caPEM) //nolint:errcheck // the client hung up; nothing to do.
	})
	mux.HandleFunc("POST /emulator/keys", e.handleNewKey)
	e.mux = mux
	return e, nil
}

// selfSignedCert makes the emulator's TLS certificate: a P-256 key and a
// self-signed certificate for localhost, the loopback addresses and hosts.
// It is its own CA, so trusting it is one AppendCertsFromPEM.
func selfSignedCert(hosts []string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apns emulator: generating the TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apns emulator: generating a serial number: %w", err)
	}
	// The certificate is checked by TLS against the real clock, never the
	// emulator's (possibly fake) one.
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Herald APNs emulator", Organization: []string{"Herald"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		switch ip := net.ParseIP(h); {
		case ip != nil:
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		case validHostname(h):
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		default:
			return tls.Certificate{}, nil, fmt.Errorf("apns emulator: host %q is neither an IP address nor a DNS name", h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apns emulator: creating the TLS certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apns emulator: parsing the TLS certificate: %w", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// validHostname reports whether h can be a certificate's DNS name.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// CertPool returns a new pool holding the emulator's certificate: use it as
// Config.RootCAs.
func (e *Emulator) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(e.cert.Leaf)
	return p
}

// CACertPEM returns the emulator's certificate in PEM, for clients outside
// this process (curl --cacert, another language's APNs library).
func (e *Emulator) CACertPEM() []byte { return append([]byte(nil), e.caPEM...) }

// TLSConfig returns the server TLS configuration Start uses, for serving
// the Emulator from your own server: the emulator's certificate, with h2
// offered by ALPN.
func (e *Emulator) TLSConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{e.cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
}

// ServeHTTP serves the emulator's routes. APNs requests are only accepted
// over HTTP/2, so mount it on a TLS server with HTTP/2 enabled.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves TLS with
// HTTP/2 in the background until Close. It returns the base URL, also given
// by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("apns", addr, e, e.TLSConfig(), e.countConnections)
}

// Serve serves TLS with HTTP/2 on l in the background until Close, and
// returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("apns", l, e, e.TLSConfig(), e.countConnections)
}

// countConnections counts new connections (Stats.Connections): IdleTimeout
// and Shutdown answers must make the client open a new one.
func (e *Emulator) countConnections(srv *http.Server) {
	srv.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			e.mu.Lock()
			e.connections++
			e.mu.Unlock()
		}
	}
}

// URL is the emulator's base URL ("" before Start or Serve).
func (e *Emulator) URL() string { return e.http.URL() }

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error { return e.http.Close() }

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries,
		ProviderTokens: e.providerTokens, Connections: e.connections}
}

// Reset forgets recorded messages, counters and the Retry-After each token
// was given. Faults and keys stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
	e.mu.Lock()
	e.providerTokens, e.connections = 0, 0
	e.mu.Unlock()
}

// jsonContentType is the Content-Type of APNs' JSON answers.
const jsonContentType = "application/json"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	emulator.WriteJSON(w, status, jsonContentType, v)
}
