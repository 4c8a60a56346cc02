package webhook

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Config configures an Emulator. The zero value is ready to use: it
// records messages without checking their signatures.
type Config struct {
	// Secrets are the signing secrets ("whsec_" and base64, or the base64
	// alone) a message's signature is checked against: a message none of
	// them signed is answered 401 and counted. Empty: messages are
	// recorded unchecked (Received.Verified false).
	Secrets []string
	// Tolerance is how far a message's webhook-timestamp may be from the
	// emulator's clock; 5 minutes if zero, as the specification
	// recommends.
	Tolerance time.Duration
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the messages kept (the oldest are dropped);
	// 10,000 if zero.
	MaxRecorded int
	// Now is the clock, time.Now if nil.
	Now func() time.Time
	// Logger, if set, logs every message answered (serve --dev uses it).
	Logger *slog.Logger
}

// Received is one message the emulator answered.
type Received struct {
	// ID, Timestamp and Type are the message's webhook-id, its
	// webhook-timestamp (seconds) and the "type" of its body.
	ID        string `json:"id"`
	Timestamp int64  `json:"timestamp"`
	Type      string `json:"type,omitempty"`
	// Path is the request path (one emulator, many endpoints).
	Path string `json:"path"`
	// Status is the HTTP status answered.
	Status int `json:"status"`
	// Verified says a configured secret's signature matched.
	Verified bool `json:"verified"`
	// Redelivery says a message with this id had been accepted before
	// (at least once: a receiver de-duplicates by webhook-id).
	Redelivery bool `json:"redelivery,omitempty"`
	// Body is the body as received, byte for byte.
	Body       []byte    `json:"body"`
	ReceivedAt time.Time `json:"received_at"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	// Accepted counts messages answered 204.
	Accepted uint64 `json:"accepted"`
	// Rejected counts messages answered otherwise, by HTTP status: an
	// injected fault, a bad signature (401) or a refused request (400,
	// 405, 413).
	Rejected map[int]uint64 `json:"rejected"`
	// EarlyRetries counts messages to a path that arrived before the
	// Retry-After the emulator gave that path had passed.
	EarlyRetries uint64 `json:"early_retries"`
	// BadSignatures counts messages answered 401.
	BadSignatures uint64 `json:"bad_signatures"`
	// Redeliveries counts accepted messages whose id had been accepted
	// before; Distinct counts the distinct ids accepted.
	Redeliveries uint64 `json:"redeliveries"`
	Distinct     uint64 `json:"distinct"`
	// Dropped counts connections closed unanswered while Down.
	Dropped uint64 `json:"dropped"`
}

// Emulator is a webhook receiver. It is an http.Handler; Start serves it
// on a port. Routes:
//
//	POST   /{path...}                      a message (any path but /emulator/…)
//	GET    /emulator/messages[?path=]      answered messages
//	DELETE /emulator/messages              Reset
//	GET|PUT|DELETE /emulator/faults        fault injection (Faults)
//	GET    /emulator/stats                 Stats
type Emulator struct {
	cfg     Config
	secrets [][]byte
	mux     *http.ServeMux
	http    emulator.Server

	faults                        *fault.Engine[Faults, PathFault, int]
	badSigs, redelivered, dropped *fault.Counter
	rec                           *emulator.Recorder[Received]

	mu   sync.Mutex // guards seen
	seen map[string]bool
}

// New returns an Emulator; call Start to serve it, or mount it as an
// http.Handler. It fails on a secret that does not decode.
func New(cfg Config) (*Emulator, error) {
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = 5 * time.Minute
	}
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 10_000, cfg.Now)
	e := &Emulator{cfg: cfg, faults: fault.New(cfg.Seed, faultSpec), seen: map[string]bool{},
		rec: emulator.NewRecorder[Received](cfg.MaxRecorded)}
	for _, s := range cfg.Secrets {
		k, err := decodeSecret(s)
		if err != nil {
			return nil, err
		}
		e.secrets = append(e.secrets, k)
	}
	e.badSigs, e.redelivered, e.dropped = e.faults.Counter(), e.faults.Counter(), e.faults.Counter()
	mux := http.NewServeMux()
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "path"}.Register(mux)
	mux.HandleFunc("/", e.handleMessage)
	e.mux = mux
	return e, nil
}

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("webhook", addr, e, nil, nil)
}

// Serve serves on l in the background until Close, and returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("webhook", l, e, nil, nil)
}

// URL is the emulator's base URL ("" before Start or Serve); an endpoint's
// URL is it followed by any path.
func (e *Emulator) URL() string { return e.http.URL() }

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error { return e.http.Close() }

// Messages returns the answered messages, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the answered messages of one path.
func (e *Emulator) MessagesTo(path string) []Received {
	return e.rec.Where(func(m Received) bool { return m.Path == path })
}

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	e.mu.Lock()
	distinct := uint64(len(e.seen))
	e.mu.Unlock()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries,
		BadSignatures: e.badSigs.Load(), Redeliveries: e.redelivered.Load(), Distinct: distinct, Dropped: e.dropped.Load()}
}

// Reset forgets recorded messages, the ids seen and the counters. Faults
// stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
	e.mu.Lock()
	clear(e.seen)
	e.mu.Unlock()
}

// jsonContentType is the Content-Type of the emulator's JSON answers.
const jsonContentType = "application/json"
