package fcm

import (
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Config configures an Emulator. The zero value is ready to use.
type Config struct {
	// PublicURL is the emulator's base URL (scheme://host:port), used as
	// the token_uri of the service accounts it issues. Start sets it; set it
	// yourself when serving the Emulator from your own http.Server.
	PublicURL string
	// AcceptAnyToken accepts any non-empty bearer token for any project,
	// for clients configured with a static token. Otherwise only tokens the
	// emulator issued (POST /token, IssueToken) are accepted.
	AcceptAnyToken bool
	// RegisteredTokensOnly makes the emulator strict about registration
	// tokens, as FCM is: a well-formed token it never issued (NewRegistrationToken,
	// POST /emulator/tokens) or registered (RegisterToken) is answered 404
	// UNREGISTERED. Off by default, so tests and `serve --dev` may use
	// tokens of their own ("tok-1"); the token's syntax is checked either
	// way (ValidRegistrationToken: a URL is INVALID_ARGUMENT).
	RegisteredTokensOnly bool
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the accepted messages kept (the oldest are
	// dropped); 100,000 if zero.
	MaxRecorded int
	// TokenTTL is the lifetime of issued access tokens; 1 h (Google's) if
	// zero.
	TokenTTL time.Duration
	// SigningKey is the RSA key of the service accounts the emulator
	// issues. A fixed key keeps issued credentials valid across restarts;
	// if nil, a 2048-bit key is generated on first use.
	SigningKey *rsa.PrivateKey
	// Now is the clock, time.Now if nil.
	Now func() time.Time
	// Logger, if set, logs every accepted message (serve --dev uses it so
	// a newcomer sees the push arrive).
	Logger *slog.Logger
	// OnAccept, if set, is called with every accepted message (not for
	// validate_only requests), outside the emulator's lock and before the
	// answer is written. Load generators use it to measure latency and
	// count sends without keeping every message (MaxRecorded). It must be
	// safe for concurrent use and quick.
	OnAccept func(Received)
}

// Received is one message the emulator accepted.
type Received struct {
	Project    string    `json:"project"`
	MessageID  string    `json:"message_id"`
	Token      string    `json:"token,omitempty"`
	Topic      string    `json:"topic,omitempty"`
	Condition  string    `json:"condition,omitempty"`
	ReceivedAt time.Time `json:"received_at"`
	// Message is the request's "message" object, exactly as sent.
	Message json.RawMessage `json:"message"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	Accepted uint64 `json:"accepted"`
	// Rejected counts error answers by code: an FcmError code, a Google
	// status when there is none (UNAUTHENTICATED, PERMISSION_DENIED), or
	// the fault name (BAD_GATEWAY, PROJECT_QUOTA).
	Rejected map[string]uint64 `json:"rejected"`
	// EarlyRetries counts sends to a token that arrived before the
	// Retry-After the emulator gave that token had passed. A well-behaved
	// sender keeps it at zero.
	EarlyRetries uint64 `json:"early_retries"`
	// TokensIssued counts access tokens minted by POST /token.
	TokensIssued uint64 `json:"tokens_issued"`
}

// Emulator is an in-process FCM HTTP v1 server: an OAuth2 token endpoint,
// messages:send with FCM's validation and error bodies, recording of
// accepted messages and fault injection. It is an http.Handler; Start
// serves it on a port. Routes:
//
//	POST   /token                                   OAuth2 JWT-bearer grant
//	POST   /v1/projects/{project}/messages:send     FCM HTTP v1
//	GET    /emulator/messages[?token=]              accepted messages
//	DELETE /emulator/messages                       Reset
//	GET|PUT|DELETE /emulator/faults                 fault injection (Faults)
//	GET    /emulator/stats                          Stats
//	GET    /emulator/service-account?project=       a service-account key file
//	POST   /emulator/tokens                         issue a registration token (or register {"token"})
//	DELETE /emulator/tokens/{token}                 unregister a token (the app was uninstalled)
type Emulator struct {
	cfg Config
	mux *http.ServeMux
	seq atomic.Uint64

	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyID   string
	keyPEM  string

	authMu   sync.RWMutex
	accounts map[string]emuAccount // by client_email
	tokens   map[string]emuToken   // by access token

	regMu      sync.RWMutex
	registered map[string]bool // registration tokens issued or registered

	http emulator.Server // the listener and its base URL

	faults *fault.Engine[Faults, TokenFault, string] // faults, latency and the shared counters

	mu        sync.Mutex // guards tokenFail
	tokenFail int        // token endpoint failures left

	tokensIssued *fault.Counter // Stats.TokensIssued, zeroed with faults' counters

	rec *emulator.Recorder[Received] // accepted messages
}

// New returns an Emulator; call Start to serve it, or mount it as an
// http.Handler.
func New(cfg Config) *Emulator {
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 100_000, cfg.Now)
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = time.Hour
	}
	e := &Emulator{
		cfg:        cfg,
		accounts:   make(map[string]emuAccount),
		tokens:     make(map[string]emuToken),
		registered: make(map[string]bool),
		faults:     fault.New(cfg.Seed, faultSpec),
		rec:        emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	e.tokensIssued = e.faults.Counter()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", e.handleToken)
	mux.HandleFunc("POST /v1/projects/{project}/messages:send", e.handleSend)
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "token"}.Register(mux)
	mux.HandleFunc("GET /emulator/service-account", e.handleServiceAccount)
	mux.HandleFunc("POST /emulator/tokens", e.handleNewToken)
	mux.HandleFunc("DELETE /emulator/tokens/{token}", e.handleDeleteToken)
	e.mux = mux
	return e
}

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("fcm", addr, e, nil, nil)
}

// Serve serves on l in the background until Close, and returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("fcm", l, e, nil, nil)
}

// URL is the emulator's base URL: the served one after Start or Serve,
// Config.PublicURL otherwise.
func (e *Emulator) URL() string { return e.http.URLOr(e.cfg.PublicURL) }

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error { return e.http.Close() }

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries, TokensIssued: e.tokensIssued.Load()}
}

// Reset forgets recorded messages, counters and the Retry-After each token
// was given. Faults and issued credentials stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

// nextMessageID mints an id shaped like FCM's ("0:<time>%<hex>").
func (e *Emulator) nextMessageID(now time.Time) string {
	n := e.seq.Add(1)
	return "0:" + strconv.FormatInt(now.UnixMicro(), 10) + "%" + strconv.FormatUint(n, 16)
}

// jsonContentType is the Content-Type of Google's JSON answers.
const jsonContentType = "application/json; charset=UTF-8"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	emulator.WriteJSON(w, status, jsonContentType, v)
}
