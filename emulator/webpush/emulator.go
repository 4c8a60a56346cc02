package webpush

import (
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Config configures an Emulator. The zero value is ready to use.
type Config struct {
	// PublicURL is the emulator's base URL (scheme://host:port): the
	// prefix of the subscription endpoints it creates, and an origin it
	// accepts as VAPID audience. Start and Serve set it; set it yourself
	// when serving the Emulator from your own http.Server.
	PublicURL string
	// TLSConfig, if set, makes Serve and Start serve HTTPS with it (it
	// must hold a certificate). Real push services are https-only; over
	// plain HTTP the Client needs AllowInsecureEndpoints.
	TLSConfig *tls.Config
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the accepted messages kept (the oldest are
	// dropped); 100,000 if zero.
	MaxRecorded int
	// ClockSkew is how far a VAPID token's exp may lie beyond the 24-hour
	// limit of RFC 8292 §2, for a sender whose clock runs ahead; one
	// minute if zero.
	ClockSkew time.Duration
	// Now is the clock, time.Now if nil. It checks VAPID expiry.
	Now func() time.Time
	// Logger, if set, logs every accepted message with its decrypted
	// payload (serve --dev uses it so a newcomer sees the push arrive).
	Logger *slog.Logger
}

// Received is one push message the emulator accepted and decrypted.
type Received struct {
	// Endpoint is the subscription endpoint the message was posted to.
	Endpoint       string `json:"endpoint"`
	SubscriptionID string `json:"subscription_id"`
	// MessageID is the id in the Location the emulator answered.
	MessageID  string    `json:"message_id"`
	ReceivedAt time.Time `json:"received_at"`
	// TTL, Urgency ("normal" when absent, RFC 8030 §5.3) and Topic are
	// the request's headers.
	TTL     int    `json:"ttl"`
	Urgency string `json:"urgency"`
	Topic   string `json:"topic,omitempty"`
	// Subject and VAPIDKey are the verified VAPID token's sub and the k=
	// public key.
	Subject  string `json:"subject"`
	VAPIDKey string `json:"vapid_key"`
	// BodyBytes is the size of the encrypted body.
	BodyBytes int `json:"body_bytes"`
	// Plaintext is the decrypted payload, as the browser hands it to the
	// service worker.
	Plaintext string `json:"plaintext"`
	// Payload is Plaintext again when it is JSON (Herald's payloads
	// always are), so the listing shows it as an object.
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	Accepted uint64 `json:"accepted"`
	// Rejected counts error answers by reason (see the Reason* constants).
	Rejected map[string]uint64 `json:"rejected"`
	// EarlyRetries counts pushes to a subscription that arrived before
	// the Retry-After the emulator gave it had passed. A well-behaved
	// sender keeps it at zero.
	EarlyRetries uint64 `json:"early_retries"`
	// Subscriptions is the number of subscriptions created (expired ones
	// included).
	Subscriptions int `json:"subscriptions"`
}

// Emulator is an in-process RFC 8030 push service, playing both the push
// service and the browsers subscribed to it: it creates subscriptions
// (keeping their private keys), verifies each push's VAPID token (RFC
// 8292), decrypts its aes128gcm body (RFC 8291), records it, and fails on
// demand. It is an http.Handler; Start serves it on a port. Routes:
//
//	POST   /push/{id}                     RFC 8030 push (201 + Location)
//	POST   /emulator/subscriptions        new subscription, PushSubscription.toJSON() shape;
//	                                      optional body {"applicationServerKey": "..."}
//	DELETE /emulator/subscriptions/{id}   expire it: pushes answer 410 thereafter
//	GET    /emulator/messages[?endpoint=] accepted messages, decrypted
//	DELETE /emulator/messages             Reset
//	GET|PUT|DELETE /emulator/faults       fault injection (Faults)
//	GET    /emulator/stats                Stats
//
// Topic replacement (RFC 8030 §5.4) does not apply: the emulated browser
// is always online, so every message is delivered at once.
type Emulator struct {
	cfg Config
	mux *http.ServeMux
	seq atomic.Uint64

	subMu sync.RWMutex
	subs  map[string]*emuSubscription // by id

	http emulator.Server // the listener and its base URL

	faults *fault.Engine[Faults, SubscriptionFault, string] // faults, latency and the shared counters

	rec *emulator.Recorder[Received] // accepted messages
}

// New returns an Emulator; call Start to serve it, or mount it as an
// http.Handler.
func New(cfg Config) *Emulator {
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 100_000, cfg.Now)
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = time.Minute
	}
	e := &Emulator{
		cfg:    cfg,
		subs:   make(map[string]*emuSubscription),
		faults: fault.New(cfg.Seed, faultSpec),
		rec:    emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /push/{id}", e.handlePush)
	mux.HandleFunc("POST /emulator/subscriptions", e.handleNewSubscription)
	mux.HandleFunc("DELETE /emulator/subscriptions/{id}", e.handleExpireSubscription)
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "endpoint"}.Register(mux)
	e.mux = mux
	return e
}

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("webpush", addr, e, e.cfg.TLSConfig, nil)
}

// Serve serves on l in the background until Close, and returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("webpush", l, e, e.cfg.TLSConfig, nil)
}

// URL is the emulator's base URL: the served one after Start or Serve,
// Config.PublicURL otherwise.
func (e *Emulator) URL() string { return e.http.URLOr(e.cfg.PublicURL) }

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error { return e.http.Close() }

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	e.subMu.RLock()
	n := len(e.subs)
	e.subMu.RUnlock()
	c := e.faults.Counts()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries, Subscriptions: n}
}

// Reset forgets recorded messages, counters and the Retry-After each
// subscription was given. Subscriptions and faults stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

// jsonContentType is the Content-Type of the push service's JSON answers.
const jsonContentType = "application/json; charset=utf-8"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	emulator.WriteJSON(w, status, jsonContentType, v)
}
