package twilio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Default credentials of an Emulator configured without any, so that
// `herald emulate twilio` and `serve --dev` work out of the box.
const (
	DefaultAccountSID = "AC00000000000000000000000000000000"
	DefaultAuthToken  = "emulator-auth-token"
	// DefaultAPIKeySID and DefaultAPIKeySecret are the API key the
	// emulator accepts beside the auth token when configured with none.
	DefaultAPIKeySID    = "SK00000000000000000000000000000000"
	DefaultAPIKeySecret = "emulator-api-key-secret"
)

// Config configures an Emulator. The zero value is ready to use
// with the default credentials.
type Config struct {
	// AccountSID and AuthToken are the only credentials the emulator
	// accepts; DefaultAccountSID and DefaultAuthToken if
	// empty. The auth token also signs status callbacks.
	AccountSID string
	AuthToken  string
	// APIKeySID and APIKeySecret are an API key of the account, accepted
	// as Basic-auth credentials beside AccountSID and AuthToken, as Twilio
	// accepts both; DefaultAPIKeySID and DefaultAPIKeySecret if empty.
	// Callbacks are still signed with AuthToken, as Twilio signs them.
	APIKeySID    string
	APIKeySecret string
	// FromNumbers, if set, are the only From values the emulator accepts
	// (others get 21606, as a number the account does not own). Any From is
	// accepted if empty.
	FromNumbers []string
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the accepted messages kept (the oldest are
	// dropped); 100,000 if zero.
	MaxRecorded int
	// CallbackClient posts status callbacks; a client with a 10 s timeout
	// if nil.
	CallbackClient *http.Client
	// Now is the clock, time.Now if nil.
	Now func() time.Time
	// Logger, if set, logs every accepted message (serve --dev uses it so
	// a newcomer sees the SMS arrive).
	Logger *slog.Logger
}

// Received is one message the emulator accepted.
type Received struct {
	SID                 string    `json:"sid"`
	AccountSID          string    `json:"account_sid"`
	To                  string    `json:"to"`
	From                string    `json:"from,omitempty"`
	MessagingServiceSID string    `json:"messaging_service_sid,omitempty"`
	Body                string    `json:"body"`
	StatusCallback      string    `json:"status_callback,omitempty"`
	ReceivedAt          time.Time `json:"received_at"`
	// Status is the last status reported: "queued" (or "accepted" through
	// a Messaging Service) until the status callbacks have run, then
	// "delivered", or the Outcome SetOutcome gave the number.
	Status string `json:"status"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	Accepted uint64 `json:"accepted"`
	// Rejected counts error answers by Twilio error code.
	Rejected map[int]uint64 `json:"rejected"`
	// EarlyRetries counts sends to a number that arrived before the
	// Retry-After the emulator gave that number had passed. A well-behaved
	// sender keeps it at zero.
	EarlyRetries uint64 `json:"early_retries"`
	// CallbacksSent and CallbacksFailed count status callback POSTs that
	// got a 2xx answer and those that did not.
	CallbacksSent   uint64 `json:"callbacks_sent"`
	CallbacksFailed uint64 `json:"callbacks_failed"`
}

// Emulator is an in-process Twilio Messages API: Basic authentication,
// Twilio's validation and error bodies, recording of accepted messages,
// fault injection, STOP (opt-out) simulation and signed status callbacks.
// It is an http.Handler; Start serves it on a port. Routes:
//
//	POST   /2010-04-01/Accounts/{AccountSid}/Messages.json   create a message
//	GET    /emulator/messages[?to=]                          accepted messages
//	DELETE /emulator/messages                                Reset
//	GET|PUT|DELETE /emulator/faults                          fault injection (Faults)
//	PUT|DELETE /emulator/opt-outs/{number}                   OptOut / OptIn
//	PUT|DELETE /emulator/outcomes/{number}                   SetOutcome / ClearOutcome
//	GET    /emulator/stats                                   Stats
type Emulator struct {
	cfg Config
	mux *http.ServeMux

	// Status callbacks run in goroutines bound to ctx; Close cancels them
	// and waits.
	ctx       context.Context
	cancel    context.CancelFunc
	callbacks sync.WaitGroup

	http emulator.Server // the listener and its base URL

	faults *fault.Engine[Faults, NumberFault, int] // faults, latency and the shared counters

	mu       sync.Mutex // guards closed, optedOut and outcomes; never held while sleeping or posting
	closed   bool       // set by Close: no new status callbacks start
	optedOut map[string]bool
	outcomes map[string]Outcome // by To number: how its messages end

	// Stats.CallbacksSent and CallbacksFailed, zeroed with faults' counters.
	callbacksSent, callbacksFailed *fault.Counter

	rec *emulator.Recorder[Received] // accepted messages
}

// New returns an Emulator; call Start to serve it, or mount it as an
// http.Handler.
func New(cfg Config) *Emulator {
	if cfg.AccountSID == "" {
		cfg.AccountSID = DefaultAccountSID
	}
	if cfg.AuthToken == "" {
		cfg.AuthToken = DefaultAuthToken
	}
	if cfg.APIKeySID == "" {
		cfg.APIKeySID, cfg.APIKeySecret = DefaultAPIKeySID, DefaultAPIKeySecret
	}
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 100_000, cfg.Now)
	if cfg.CallbackClient == nil {
		cfg.CallbackClient = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Emulator{
		cfg:      cfg,
		ctx:      ctx,
		cancel:   cancel,
		faults:   fault.New(cfg.Seed, faultSpec),
		optedOut: make(map[string]bool),
		outcomes: make(map[string]Outcome),
		rec:      emulator.NewRecorder[Received](cfg.MaxRecorded),
	}
	e.callbacksSent, e.callbacksFailed = e.faults.Counter(), e.faults.Counter()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2010-04-01/Accounts/{account}/Messages.json", e.handleCreate)
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "to"}.Register(mux)
	mux.HandleFunc("PUT /emulator/opt-outs/{number}", func(w http.ResponseWriter, r *http.Request) {
		e.OptOut(r.PathValue("number"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /emulator/opt-outs/{number}", func(w http.ResponseWriter, r *http.Request) {
		e.OptIn(r.PathValue("number"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /emulator/outcomes/{number}", e.handlePutOutcome)
	mux.HandleFunc("DELETE /emulator/outcomes/{number}", func(w http.ResponseWriter, r *http.Request) {
		e.ClearOutcome(r.PathValue("number"))
		w.WriteHeader(http.StatusNoContent)
	})
	e.mux = mux
	return e
}

// APIKeySID is the API key SID the emulator accepts.
func (e *Emulator) APIKeySID() string { return e.cfg.APIKeySID }

// APIKeySecret is the secret of the API key the emulator accepts.
func (e *Emulator) APIKeySecret() string { return e.cfg.APIKeySecret }

// AccountSID is the account SID the emulator accepts.
func (e *Emulator) AccountSID() string { return e.cfg.AccountSID }

// AuthToken is the auth token the emulator accepts and signs callbacks with.
func (e *Emulator) AuthToken() string { return e.cfg.AuthToken }

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("twilio", addr, e, nil, nil)
}

// Serve serves on l in the background until Close, and returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("twilio", l, e, nil, nil)
}

// URL is the emulator's base URL ("" before Start or Serve).
func (e *Emulator) URL() string { return e.http.URL() }

// Close stops a server started by Start or Serve, cancels status callbacks
// still in flight and waits for them.
func (e *Emulator) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	err := e.http.Close()
	e.callbacks.Wait()
	return err
}

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries,
		CallbacksSent: e.callbacksSent.Load(), CallbacksFailed: e.callbacksFailed.Load()}
}

// Reset forgets recorded messages, counters and the Retry-After each number
// was given. Faults and opt-outs stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

// setStatus updates the recorded status of message sid, if still kept.
func (e *Emulator) setStatus(sid, status string) {
	e.rec.Update(func(m *Received) bool {
		if m.SID != sid {
			return false
		}
		m.Status = status
		return true
	})
}

// newSID mints a message SID shaped like Twilio's: "SM" and 32 hex digits.
func newSID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails (Go ≥ 1.24).
	return "SM" + hex.EncodeToString(b[:])
}

// jsonContentType is the Content-Type of Twilio's JSON answers.
const jsonContentType = "application/json; charset=utf-8"

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	emulator.WriteJSON(w, status, jsonContentType, v)
}
