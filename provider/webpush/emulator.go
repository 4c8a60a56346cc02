package webpush

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// EmulatorConfig configures an Emulator. The zero value is ready to use.
type EmulatorConfig struct {
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

// DecodePayload decodes the plaintext as Herald's Payload.
func (r Received) DecodePayload() (*Payload, error) {
	var p Payload
	if err := json.Unmarshal([]byte(r.Plaintext), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// EmulatorStats counts what the emulator answered since the last Reset.
type EmulatorStats struct {
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
//	GET    /emulator/stats                EmulatorStats
//
// Topic replacement (RFC 8030 §5.4) does not apply: the emulated browser
// is always online, so every message is delivered at once.
type Emulator struct {
	cfg EmulatorConfig
	mux *http.ServeMux
	seq atomic.Uint64

	subMu sync.RWMutex
	subs  map[string]*emuSubscription // by id

	mu        sync.Mutex // guards everything below; never held while sleeping
	url       string
	server    *http.Server
	faults    Faults
	remaining map[string]int // failures left per subscription fault with Times > 0
	rng       *rand.Rand
	notBefore map[string]time.Time // per subscription id: Retry-After given until
	ring      []Received           // recorded messages, oldest at head once full
	head      int
	stats     EmulatorStats
}

// NewEmulator returns an Emulator; call Start to serve it, or mount it as an
// http.Handler.
func NewEmulator(cfg EmulatorConfig) *Emulator {
	if cfg.MaxRecorded <= 0 {
		cfg.MaxRecorded = 100_000
	}
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	e := &Emulator{
		cfg:       cfg,
		url:       cfg.PublicURL,
		subs:      make(map[string]*emuSubscription),
		remaining: make(map[string]int),
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		notBefore: make(map[string]time.Time),
		stats:     EmulatorStats{Rejected: make(map[string]uint64)},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /push/{id}", e.handlePush)
	mux.HandleFunc("POST /emulator/subscriptions", e.handleNewSubscription)
	mux.HandleFunc("DELETE /emulator/subscriptions/{id}", e.handleExpireSubscription)
	mux.HandleFunc("GET /emulator/messages", e.handleListMessages)
	mux.HandleFunc("DELETE /emulator/messages", func(w http.ResponseWriter, _ *http.Request) {
		e.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.CurrentFaults())
	})
	mux.HandleFunc("PUT /emulator/faults", e.handlePutFaults)
	mux.HandleFunc("DELETE /emulator/faults", func(w http.ResponseWriter, _ *http.Request) {
		e.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /emulator/stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, e.Stats())
	})
	e.mux = mux
	return e
}

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	u, err := e.Serve(l)
	if err != nil {
		l.Close()
	}
	return u, err
}

// Serve serves on l in the background until Close, and returns the base
// URL: https when EmulatorConfig.TLSConfig is set, http otherwise.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.server != nil {
		return "", errors.New("webpush emulator: already serving")
	}
	host, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1" // a wildcard listener is reachable on loopback
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	if e.cfg.TLSConfig != nil {
		// ServeTLS adds "h2" to the offered protocols: real push services
		// speak HTTP/2.
		srv.TLSConfig = e.cfg.TLSConfig.Clone()
		e.url = "https://" + net.JoinHostPort(host, port)
		go srv.ServeTLS(l, "", "") //nolint:errcheck // only returns ErrServerClosed after Close.
	} else {
		e.url = "http://" + net.JoinHostPort(host, port)
		go srv.Serve(l) //nolint:errcheck // only returns ErrServerClosed after Close.
	}
	e.server = srv
	return e.url, nil
}

// URL is the emulator's base URL.
func (e *Emulator) URL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.url
}

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error {
	e.mu.Lock()
	srv := e.server
	e.server = nil
	e.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Messages returns the accepted messages, oldest first.
func (e *Emulator) Messages() []Received {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Received, 0, len(e.ring))
	out = append(out, e.ring[e.head:]...)
	return append(out, e.ring[:e.head]...)
}

// MessagesTo returns the accepted messages posted to endpoint, oldest
// first.
func (e *Emulator) MessagesTo(endpoint string) []Received {
	id := subscriptionID(endpoint)
	var out []Received
	for _, m := range e.Messages() {
		if m.SubscriptionID == id {
			out = append(out, m)
		}
	}
	return out
}

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() EmulatorStats {
	e.subMu.RLock()
	n := len(e.subs)
	e.subMu.RUnlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Rejected = make(map[string]uint64, len(e.stats.Rejected))
	for k, v := range e.stats.Rejected {
		s.Rejected[k] = v
	}
	s.Subscriptions = n
	return s
}

// Reset forgets recorded messages, counters and the Retry-After each
// subscription was given. Subscriptions and faults stay.
func (e *Emulator) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ring = nil
	e.head = 0
	e.stats = EmulatorStats{Rejected: make(map[string]uint64)}
	clear(e.notBefore)
}

// record stores an accepted message; e.mu must be held.
func (e *Emulator) record(m Received) {
	e.stats.Accepted++
	if len(e.ring) < e.cfg.MaxRecorded {
		e.ring = append(e.ring, m)
		return
	}
	e.ring[e.head] = m
	e.head = (e.head + 1) % len(e.ring)
}

func (e *Emulator) handleListMessages(w http.ResponseWriter, r *http.Request) {
	var msgs []Received
	if ep := r.URL.Query().Get("endpoint"); ep != "" {
		msgs = e.MessagesTo(ep)
	} else {
		msgs = e.Messages()
	}
	if msgs == nil {
		msgs = []Received{}
	}
	writeJSON(w, http.StatusOK, msgs)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the answer failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client hung up; nothing to do.
}
