package apns

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
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
	// RegisteredTokensOnly makes the emulator strict about device tokens,
	// as APNs is: a well-formed token it never issued (NewDeviceToken,
	// POST /emulator/device-tokens) or registered (RegisterDeviceToken) is
	// answered BadDeviceToken. Off by default, so tests may make up tokens;
	// the syntax (hex, 64 digits or more) and a registered token's topic
	// (DeviceTokenNotForTopic) are checked either way.
	RegisteredTokensOnly bool
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
//	POST   /emulator/device-tokens     issue a device token for {"topic"} (or register {"token"})
//	DELETE /emulator/device-tokens/{token}  unregister it (the app was uninstalled: 410)
type Emulator struct {
	cfg    Config
	mux    *http.ServeMux
	cert   tls.Certificate
	caPEM  []byte
	topics map[string]bool

	// keyMu guards the provider keys and tokens.
	keyMu    sync.Mutex
	keys     map[string]emuKey        // by key id
	verified map[string]verifiedToken // by JWT: signature already checked
	lastJWT  map[string]jwtSeen       // by key id: the latest token presented

	tokenMu      sync.RWMutex
	deviceTokens map[string]deviceTokenState // by lower-case hex token

	http emulator.Server // the TLS listener and its base URL

	faults *fault.Engine[Faults, TokenFault, string] // faults, latency and the shared counters

	// Stats.ProviderTokens and Connections, zeroed with faults' counters.
	providerTokens, connections *fault.Counter

	rec *emulator.Recorder[Received] // accepted messages
}

// New returns an Emulator with a freshly generated TLS certificate;
// call Start to serve it.
func New(cfg Config) (*Emulator, error) {
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 100_000, cfg.Now)
	cert, err := emulator.SelfSignedCert("APNs", cfg.Hosts)
	if err != nil {
		return nil, fmt.Errorf("apns emulator: %w", err)
	}
	e := &Emulator{
		cfg:          cfg,
		cert:         cert,
		caPEM:        emulator.CertPEM(cert),
		topics:       make(map[string]bool, len(cfg.Topics)),
		keys:         make(map[string]emuKey),
		verified:     make(map[string]verifiedToken),
		lastJWT:      make(map[string]jwtSeen),
		deviceTokens: make(map[string]deviceTokenState),
		faults:       fault.New(cfg.Seed, faultSpec),
		rec:          emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	e.providerTokens, e.connections = e.faults.Counter(), e.faults.Counter()
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
	mux.HandleFunc("POST /emulator/device-tokens", e.handleNewDeviceToken)
	mux.HandleFunc("DELETE /emulator/device-tokens/{token}", e.handleDeleteDeviceToken)
	e.mux = mux
	return e, nil
}

// CertPool returns a new pool holding the emulator's certificate: use it as
// Config.RootCAs.
func (e *Emulator) CertPool() *x509.CertPool { return emulator.CertPool(e.cert) }

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
			e.connections.Inc()
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
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries,
		ProviderTokens: e.providerTokens.Load(), Connections: e.connections.Load()}
}

// Reset forgets recorded messages, counters and the Retry-After each token
// was given. Faults and keys stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

// jsonContentType is the Content-Type of APNs' JSON answers.
const jsonContentType = "application/json"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	emulator.WriteJSON(w, status, jsonContentType, v)
}
