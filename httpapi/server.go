// Package httpapi is Herald's HTTP API: a thin JSON transport over
// *herald.Client. Handlers decode the request, call one Client method and
// encode its result; they return errors instead of writing them, and one
// error writer maps every error to the stable catalogue in errors.go
// ({"code","message"[,"field"]} with one code→status map). There is no SQL
// and no business rule here: validation lives in the Client, so the API,
// the CLI and an embedding Go program reject the same inputs the same way.
//
// Routes (net/http ServeMux method and wildcard patterns):
//
//	PUT    /v1/users/{id}                         create or replace a user
//	GET    /v1/users/{id}                         read a user
//	POST   /v1/users/{id}/devices                 register or refresh a device (S0.2)
//	GET    /v1/users/{id}/devices                 list a user's devices
//	DELETE /v1/users/{id}/devices/{device_id}     remove a device
//	POST   /v1/devices/{device_id}/heartbeat      record that a device is alive (S0.2)
//	POST   /v1/notifications                      trigger notifications (Idempotency-Key)
//	GET    /v1/notifications/{id}                 a notification's deliveries and attempts
//	GET    /v1/deliveries                         list deliveries, e.g. dead letters (S0.4)
//	POST   /v1/deliveries/{id}/replay             replay one dead or unknown delivery (S4.6)
//	POST   /v1/deliveries/replay                  replay every dead delivery matching a filter
//	GET    /healthz                               the process is alive
//	GET    /readyz                                the store answers
//	GET    /metrics                               Config.Metrics, when set
package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// DefaultMaxBodyBytes bounds a request body unless Config.MaxBodyBytes says
// otherwise. A trigger for the maximum 1000 recipients with 128-byte ids
// and 2000-character title and body fits well inside it.
const DefaultMaxBodyBytes = 1 << 20

// readyTimeout bounds the store ping of /readyz, so a hung database makes
// the probe fail instead of hang.
const readyTimeout = 2 * time.Second

// Config configures a Server.
type Config struct {
	// Client serves every request. Required.
	Client *herald.Client
	// Logger receives access logs and the details of internal errors.
	// Default slog.Default().
	Logger *slog.Logger
	// Metrics serves GET /metrics (for example promhttp.HandlerFor). Nil
	// leaves /metrics unrouted (404).
	Metrics http.Handler
	// MaxBodyBytes bounds a request body; a larger one is refused with 413
	// request_too_large. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Server is Herald's HTTP API as an http.Handler.
type Server struct {
	client  *herald.Client
	log     *slog.Logger
	maxBody int64
	mux     *http.ServeMux
}

var _ http.Handler = (*Server)(nil)

// New validates cfg and builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("httpapi: Config.Client is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("httpapi: MaxBodyBytes %d must be positive", cfg.MaxBodyBytes)
	}
	s := &Server{client: cfg.Client, log: cfg.Logger, maxBody: cfg.MaxBodyBytes, mux: http.NewServeMux()}
	s.routes(cfg.Metrics)
	return s, nil
}

// handlerFunc is a handler that returns its error for the one error writer
// (Caddy's style): a handler never writes an error response itself.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) routes(metrics http.Handler) {
	handle := func(pattern string, h handlerFunc) {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.writeError(w, r, err)
			}
		})
	}
	handle("PUT /v1/users/{id}", s.putUser)
	handle("GET /v1/users/{id}", s.getUser)
	handle("POST /v1/users/{id}/devices", s.registerDevice)
	handle("GET /v1/users/{id}/devices", s.listDevices)
	handle("DELETE /v1/users/{id}/devices/{device_id}", s.deleteDevice)
	handle("POST /v1/devices/{device_id}/heartbeat", s.heartbeat)
	handle("POST /v1/notifications", s.trigger)
	handle("GET /v1/notifications/{id}", s.getNotification)
	handle("GET /v1/deliveries", s.listDeliveries)
	handle("POST /v1/deliveries/{id}/replay", s.replayDelivery)
	handle("POST /v1/deliveries/replay", s.replayDeliveries)
	handle("GET /healthz", s.healthz)
	handle("GET /readyz", s.readyz)
	if metrics != nil {
		s.mux.Handle("GET /metrics", metrics)
	}
}

// ServeHTTP assigns a request id, routes the request, turns a panic into a
// 500 and writes one access log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r)
	rw := &statusWriter{ResponseWriter: w}
	rw.Header().Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	h, pattern := s.mux.Handler(r)
	defer func() {
		status := rw.status
		if status == 0 {
			status = http.StatusOK
		}
		if pattern == "" {
			pattern = "unmatched"
		}
		// Never the body, the query or headers such as Authorization: the
		// pattern identifies the endpoint without the ids in the path.
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
			slog.String("method", r.Method),
			slog.String("pattern", pattern),
			slog.Int("status", status),
			slog.Duration("duration", time.Since(start)),
			slog.String("request_id", id))
	}()
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { // net/http aborts the response silently; keep its contract
				panic(v)
			}
			s.log.LogAttrs(r.Context(), slog.LevelError, "http handler panicked",
				slog.String("request_id", id),
				slog.String("pattern", pattern),
				slog.Any("panic", v),
				slog.String("stack", string(debug.Stack())))
			if !rw.wroteHeader {
				writeJSON(rw, http.StatusInternalServerError, ErrorBody{Code: heraldtype.EINTERNAL, Message: internalMessage})
			}
		}
	}()
	if pattern == "" {
		s.unmatched(rw, r, h)
		return
	}
	s.mux.ServeHTTP(rw, r)
}

// unmatched answers a request no route matches with a JSON 404, or a JSON
// 405 with the Allow header when the path exists with other methods. The
// ServeMux knows which; its own handler is run against a scratch writer
// only to learn the status and the Allow header.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		writeJSON(w, http.StatusMethodNotAllowed, ErrorBody{
			Code:    EMethodNotAllowed,
			Message: fmt.Sprintf("%s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow")),
		})
		return
	}
	writeJSON(w, http.StatusNotFound, ErrorBody{Code: heraldtype.ENOTFOUND, Message: "no such endpoint"})
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.client.Ready(ctx); err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "not ready",
			slog.String("request_id", requestIDFrom(r.Context())), slog.String("err", err.Error()))
		return heraldtype.Errorf(heraldtype.EUNAVAILABLE, "the store does not answer")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// writeJSON encodes v before writing anything, so an encoding failure can
// still become a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(ErrorBody{Code: heraldtype.EINTERNAL, Message: internalMessage})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the caller is gone if this fails; nothing to do
}

// requestIDKey carries the request id in the request's context.
type requestIDKey struct{}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// requestID reuses a caller's or proxy's X-Request-Id when it is short
// printable ASCII (it goes into logs and a response header), and makes a
// random one otherwise.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		ok := true
		for i := 0; i < len(id); i++ {
			if id[i] <= ' ' || id[i] >= 0x7f {
				ok = false
				break
			}
		}
		if ok {
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}

// statusWriter remembers the status for the access log and whether a
// response was started, so the panic handler does not write twice.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// headerProbe records what ServeMux's 404/405 handler would answer.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }
