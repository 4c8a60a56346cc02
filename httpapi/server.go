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
//	POST   /v1/tokens                             the app registers its own device (user token)
//	POST   /v1/tokens/heartbeat                   the app's heartbeat for its own device (user token)
//	POST   /v1/receipts                           the app's receipts: delivered, opened, dismissed, clicked
//	GET    /v1/users/{id}/inbox[/stream]          the in-app inbox, and its SSE stream (S4.5)
//	GET    /v1/users/{id}/inbox/ws                the same stream over a WebSocket (S3.6)
//	POST   /v1/users/{id}/inbox/read[-all]        mark inbox items read
//	POST   /v1/users/{id}/inbox/seen              mark inbox items seen
//	POST   /v1/users/{id}/inbox/{item_id}/archive archive an inbox item
//	POST   /v1/users/{id}/inbox/{item_id}/click   record a click (marks it seen and read)
//	GET    /v1/users/{id}/preferences             a user's delivery preferences (S3.11)
//	PUT    /v1/users/{id}/preferences             replace them
//	GET    /v1/users/{id}/notifications           a user's notification history (S3.9)
//	GET    /v1/users/{id}/explain                 why the user did or did not get a notification
//	GET    /v1/notifications                      the history: ?type=&status=&from=&to= (S3.9)
//	GET    /v1/engagement                         sent, delivered, opened, clicked and rates by group
//	GET    /v1/types[/{type}]                     declared notification types
//	PUT    /v1/types/{type}                       declare a notification type (admin)
//	PUT    /v1/types/{type}/templates             save its templates as the next version (admin)
//	GET    /v1/types/{type}/templates             its templates: the latest, or ?version=N
//	GET    /v1/types/{type}/templates/versions    its saved versions, newest first
//	POST   /v1/types/{type}/preview               render every channel and locale (and a user's)
//	POST   /v1/types/{type}/test-send             send it to one named user from its templates
//	POST   /v1/notifications                      trigger notifications (Idempotency-Key)
//	GET    /v1/notifications/{id}                 a notification's deliveries and attempts
//	POST   /v1/notifications/cancel               cancel by id or cancellation key, synchronously
//	GET    /v1/deliveries                         list deliveries, e.g. dead letters (S0.4)
//	GET    /v1/deliveries/{id}                    one delivery with its attempts (its timeline)
//	POST   /v1/deliveries/{id}/replay             replay one dead or unknown delivery (S4.6)
//	POST   /v1/deliveries/replay                  replay every dead delivery matching a filter
//	GET    /healthz                               the process is alive
//	GET    /readyz                                the store answers
//	GET    /v1/suppressions                       suppressed sms / email addresses
//	DELETE /v1/suppressions/{channel}/{address}   lift a suppression
//	GET    /t/o/{token}                           an e-mail's open pixel (records opened)
//	GET    /t/c/{token}                           a tracked link: records clicked, redirects to the link
//	GET    /metrics                               Config.Metrics, when set
//	GET    /openapi.yaml, /openapi.json           this API's contract (api/openapi.yaml)
//	GET    /sdk/v1/{file}, /sdk/integrity         the web SDK (package websdk) and its SRI hashes
//	GET    /sdk/example                           the web SDK's example page (serve --dev only)
//
// The list is a summary; api/openapi.yaml is the whole of it, and the
// route test holds the two together.
//
// Every route declares who may call it (routes, auth.go): a server API
// key with a scope, a user token for its own user, or nobody (health).
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
	"path"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tracing"
)

// DefaultMaxBodyBytes bounds a request body unless Config.MaxBodyBytes says
// otherwise. A trigger for the maximum 1000 recipients with 128-byte ids
// and 2000-character title and body fits well inside it.
const DefaultMaxBodyBytes = 1 << 20

// DefaultReadTimeout bounds how long a request body may take to arrive
// unless Config.ReadTimeout says otherwise: a client on a slow mobile link
// sends a 1 MiB body in a few seconds; one that takes longer than this is
// holding the connection on purpose.
const DefaultReadTimeout = 30 * time.Second

// DefaultWriteTimeout bounds the handling and writing of a response unless
// Config.WriteTimeout says otherwise. The longest handler, a trigger for
// 1000 recipients, takes well under a second.
const DefaultWriteTimeout = 60 * time.Second

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
	// Auth authenticates callers: server API keys, user tokens, or
	// (development only) nobody. See auth.go and README: Security.
	Auth AuthConfig
	// RateLimit limits requests per API key and per user; zero values do
	// not limit.
	RateLimit RateLimitConfig
	// ReadTimeout bounds how long a request body may take to arrive,
	// counted from the start of the request; a slower body is refused with
	// 408 request_timeout. The inbox stream, which has no body, is exempt.
	// Default DefaultReadTimeout; negative: no limit.
	ReadTimeout time.Duration
	// WriteTimeout bounds the handling and writing of a response, counted
	// from the start of the request; a connection that does not take its
	// response in time is closed. The inbox stream bounds each write by it
	// instead (see StreamConfig). Default DefaultWriteTimeout; negative: no
	// limit.
	WriteTimeout time.Duration
	// Streams bounds the inbox's SSE streams: lifetime, credential checks,
	// and how many per user and per API key.
	Streams StreamConfig
	// CORS lets web pages of the listed origins call the API (cors.go).
	CORS CORSConfig
	// StoreTimeout bounds the store work of a request: the credential
	// lookup, and then the handler's calls, each (deadline.go), not the
	// arrival of its body, which is read before the handler runs. When it
	// passes the caller gets 503 unavailable with Retry-After, saying the
	// store did not answer, instead of waiting as long as its own client
	// does on a database that went silent (a network partition). The inbox
	// stream and the health probes are exempt (/readyz has its own 2 s).
	// Default DefaultStoreTimeout; negative: no limit.
	StoreTimeout time.Duration
	// ReadyChecks are what GET /readyz asks beside the store: components
	// that can be stuck while the process lives, such as the Kafka intake
	// (issue 30 item 1). A check's error is the probe's message (503
	// unavailable), so it must name what is stuck without internals.
	ReadyChecks []ReadyCheck
	// Console is the operator console (package console), served under
	// /console/; nil leaves it unrouted. It signs its own users in, with
	// sessions instead of bearer keys, so the API's guard does not apply
	// to it (consoleAccess); the request id, the deadlines, the store
	// timeout and the access log do.
	Console http.Handler
	// SDKExample serves the web SDK's example page at /sdk/example
	// (serve --dev); otherwise that path answers 404.
	SDKExample bool
}

// ReadyCheck is one condition of readiness; nil means ready.
type ReadyCheck func(ctx context.Context) error

// Server is Herald's HTTP API as an http.Handler.
type Server struct {
	client  *herald.Client
	log     *slog.Logger
	maxBody int64
	mux     *http.ServeMux
	auth    AuthConfig
	limits  *limiters
	// readTimeout and writeTimeout are the per-request deadlines (0: none).
	readTimeout, writeTimeout time.Duration
	// storeTimeout bounds a request's store work (0: none; deadline.go).
	storeTimeout time.Duration
	readyChecks  []ReadyCheck
	streams      *streams
	corsCfg      CORSConfig
	// sdkExampleOn serves /sdk/example (Config.SDKExample).
	sdkExampleOn bool
	// tracer records a span per request; nil when the Client does not
	// trace (tracing.go).
	tracer trace.Tracer
	// rules records every route's access rule, for the tests that check
	// that no route is left open by accident.
	rules map[string]access
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
	if cfg.Auth.Keys == nil && !cfg.Auth.Disabled {
		return nil, errors.New("httpapi: Config.Auth.Keys is required (Auth.Disabled is for local development only)")
	}
	limits, err := newLimiters(cfg.RateLimit)
	if err != nil {
		return nil, err
	}
	if err := checkCORS(cfg.CORS); err != nil {
		return nil, err
	}
	s := &Server{client: cfg.Client, log: cfg.Logger, maxBody: cfg.MaxBodyBytes, mux: http.NewServeMux(),
		auth: cfg.Auth, limits: limits, rules: map[string]access{},
		readTimeout:  orDefault(cfg.ReadTimeout, DefaultReadTimeout),
		writeTimeout: orDefault(cfg.WriteTimeout, DefaultWriteTimeout), streams: newStreams(cfg.Streams),
		corsCfg: cfg.CORS, sdkExampleOn: cfg.SDKExample, storeTimeout: orDefault(cfg.StoreTimeout, DefaultStoreTimeout), readyChecks: cfg.ReadyChecks,
		tracer: tracing.Tracer(cfg.Client.TracerProvider())}
	s.routes(cfg.Metrics, cfg.Console)
	return s, nil
}

// handlerFunc is a handler that returns its error for the one error writer
// (Caddy's style): a handler never writes an error response itself.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers a route with its access rule (auth.go): the rule runs
// before the handler, and a route cannot be registered without one. Its
// store work is bounded by Config.StoreTimeout (deadline.go).
func (s *Server) handle(pattern string, a access, h handlerFunc) {
	s.register(pattern, a, h, true, 0)
}

// handleWaiting registers a bounded route whose handler may also wait,
// up to wait, for work outside the store (a cancel waiting for the sends
// in flight): its handler's deadline is Config.StoreTimeout + wait.
func (s *Server) handleWaiting(pattern string, a access, h handlerFunc, wait time.Duration) {
	s.register(pattern, a, h, true, wait)
}

// handleUnbounded registers a route whose store work is not bounded by
// Config.StoreTimeout: the inbox stream, which lives for as long as its
// user reads it, and the probes, which have bounds of their own.
func (s *Server) handleUnbounded(pattern string, a access, h handlerFunc) {
	s.register(pattern, a, h, false, 0)
}

func (s *Server) register(pattern string, a access, h handlerFunc, bounded bool, wait time.Duration) {
	if !a.valid() {
		panic("httpapi: route " + pattern + " has no access rule")
	}
	s.rules[pattern] = a
	s.mux.HandleFunc(pattern, s.traced(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !bounded {
			r, err := s.guard(w, r, a)
			if err != nil {
				refuseBody(w, r)
			} else {
				err = h(w, r)
			}
			if err != nil {
				s.writeError(w, r, err)
			}
			return
		}
		// The store deadline of the guard, then (deadline.go) the body,
		// then the store deadline of the handler.
		base := r.Context()
		gctx, cancel := s.storeCtx(base)
		g, err := s.guard(w, r.WithContext(gctx), a)
		if err != nil {
			refuseBody(w, g)
			s.writeError(w, g, err)
			cancel()
			return
		}
		p := g.Context().Value(principalKey{})
		cancel()
		s.readBody(w, r)
		hctx, cancel := s.storeCtxPlus(context.WithValue(base, principalKey{}, p), wait)
		defer cancel()
		r = r.WithContext(hctx)
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}))
}

// routes registers every route with who may call it (README: Security has
// the same table). A user token may call the routes marked userOrScope for
// its own user id, and the app routes; everything else needs a server API
// key with the scope.
func (s *Server) routes(metrics, console http.Handler) {
	s.handle("PUT /v1/users/{id}", needScope(auth.ScopeUsersWrite), s.putUser)
	s.handle("GET /v1/users/{id}", needScope(auth.ScopeUsersRead), s.getUser)
	s.handle("POST /v1/users/{id}/devices", userOrScope(auth.ScopeDevicesWrite), s.registerDevice)
	s.handle("GET /v1/users/{id}/devices", userOrScope(auth.ScopeDevicesRead), s.listDevices)
	s.handle("DELETE /v1/users/{id}/devices/{device_id}", userOrScope(auth.ScopeDevicesWrite), s.deleteDevice)
	s.handle("POST /v1/devices/{device_id}/heartbeat", needScope(auth.ScopeDevicesWrite), s.heartbeat)
	s.handle("POST /v1/tokens", userOnlyAccess(), s.registerOwnDevice)
	s.handle("POST /v1/tokens/heartbeat", userOnlyAccess(), s.heartbeatOwnDevice)
	s.handle("POST /v1/receipts", userTokenOrScope(auth.ScopeReceiptsWrite), s.recordReceipts)
	s.handle("GET /v1/users/{id}/inbox", userOrScope(auth.ScopeInboxRead), s.listInbox)
	s.handleUnbounded("GET /v1/users/{id}/inbox/stream", userOrScope(auth.ScopeInboxRead).withQueryToken(), s.streamInbox)
	s.handleUnbounded("GET /v1/users/{id}/inbox/ws", userOrScope(auth.ScopeInboxRead).withQueryToken(), s.streamInboxWS)
	s.handle("POST /v1/users/{id}/inbox/read", userOrScope(auth.ScopeInboxWrite), s.markInboxRead)
	s.handle("POST /v1/users/{id}/inbox/read-all", userOrScope(auth.ScopeInboxWrite), s.markAllInboxRead)
	s.handle("POST /v1/users/{id}/inbox/seen", userOrScope(auth.ScopeInboxWrite), s.markInboxSeen)
	s.handle("POST /v1/users/{id}/inbox/{item_id}/archive", userOrScope(auth.ScopeInboxWrite), s.archiveInboxItem)
	s.handle("POST /v1/users/{id}/inbox/{item_id}/click", userOrScope(auth.ScopeInboxWrite), s.clickInboxItem)
	s.handle("GET /v1/users/{id}/preferences", userOrScope(auth.ScopePreferencesRead), s.getPreferences)
	s.handle("PUT /v1/users/{id}/preferences", userOrScope(auth.ScopePreferencesWrite), s.putPreferences)
	s.handle("GET /v1/users/{id}/notifications", userOrScope(auth.ScopeNotificationsRead), s.listUserHistory)
	s.handle("GET /v1/users/{id}/explain", needScope(auth.ScopeNotificationsRead), s.explain)
	s.handle("GET /v1/notifications", needScope(auth.ScopeNotificationsRead), s.listHistory)
	s.handle("GET /v1/engagement", needScope(auth.ScopeNotificationsRead), s.engagement)
	s.handle("GET /v1/types", needScope(auth.ScopeNotificationsRead), s.listTypes)
	s.handle("GET /v1/types/{type}", needScope(auth.ScopeNotificationsRead), s.getType)
	s.handle("PUT /v1/types/{type}", needScope(auth.ScopeAdmin), s.putType)
	s.handle("PUT /v1/types/{type}/templates", needScope(auth.ScopeAdmin), s.putTemplates)
	s.handle("GET /v1/types/{type}/templates", needScope(auth.ScopeNotificationsRead), s.getTemplates)
	s.handle("GET /v1/types/{type}/templates/versions", needScope(auth.ScopeNotificationsRead), s.listTemplateVersions)
	s.handle("POST /v1/types/{type}/preview", needScope(auth.ScopeNotificationsRead), s.previewTemplates)
	s.handle("POST /v1/types/{type}/test-send", needScope(auth.ScopeNotificationsWrite), s.testSend)
	s.handle("POST /v1/notifications", needScope(auth.ScopeNotificationsWrite), s.trigger)
	s.handleWaiting("POST /v1/notifications/cancel", needScope(auth.ScopeNotificationsWrite), s.cancel, s.client.CancelWait())
	s.handle("GET /v1/notifications/{id}", needScope(auth.ScopeNotificationsRead), s.getNotification)
	s.handle("GET /v1/digests", needScope(auth.ScopeNotificationsRead), s.listDigests)
	s.handle("GET /v1/digests/{id}", needScope(auth.ScopeNotificationsRead), s.getDigest)
	s.handle("GET /v1/deliveries", needScope(auth.ScopeDeliveriesRead), s.listDeliveries)
	s.handle("GET /v1/deliveries/{id}", needScope(auth.ScopeDeliveriesRead), s.getDelivery)
	s.handle("POST /v1/deliveries/{id}/replay", needScope(auth.ScopeDeliveriesAdmin), s.replayDelivery)
	s.handle("POST /v1/deliveries/replay", needScope(auth.ScopeDeliveriesAdmin), s.replayDeliveries)
	s.handle("PUT /v1/reminders/{key}", needScope(auth.ScopeRemindersWrite), s.putReminder)
	s.handle("GET /v1/reminders/{key}", needScope(auth.ScopeRemindersRead), s.getReminder)
	s.handle("DELETE /v1/reminders/{key}", needScope(auth.ScopeRemindersWrite), s.deleteReminder)
	s.handle("GET /v1/reminders", needScope(auth.ScopeRemindersRead), s.listReminders)
	s.handle("POST /v1/reminders/cancel", needScope(auth.ScopeRemindersWrite), s.cancelReminders)
	s.handle("GET /v1/users/{id}/reminders", needScope(auth.ScopeRemindersRead), s.listUserReminders)
	s.handle("POST /v1/events", needScope(auth.ScopeEventsWrite), s.postEvent)
	s.handle("GET /v1/events/dead", needScope(auth.ScopeEventsRead), s.listDeadEvents)
	s.handle("GET /v1/events/dead/{id}", needScope(auth.ScopeEventsRead), s.getDeadEvent)
	s.handle("POST /v1/events/dead/{id}/replay", needScope(auth.ScopeEventsWrite), s.replayDeadEvent)
	s.handle("POST /v1/events/dead/replay", needScope(auth.ScopeEventsWrite), s.replayDeadEvents)
	s.handle("POST /v1/interests", needScope(auth.ScopeInterestsWrite), s.postInterests)
	s.handle("GET /v1/users/{id}/interests", needScope(auth.ScopeInterestsRead), s.listInterests)
	s.handle("PUT /v1/rules/{name}", needScope(auth.ScopeRulesWrite), s.putRule)
	s.handle("GET /v1/rules/{name}", needScope(auth.ScopeRulesRead), s.getRule)
	s.handle("DELETE /v1/rules/{name}", needScope(auth.ScopeRulesWrite), s.deleteRule)
	s.handle("GET /v1/rules", needScope(auth.ScopeRulesRead), s.listRules)
	s.handle("POST /v1/rules/{name}/dry-run", needScope(auth.ScopeRulesRead), s.dryRunRule)
	s.handle("GET /v1/rules/{name}/runs", needScope(auth.ScopeRulesRead), s.listRuleRuns)
	s.handle("PUT /v1/campaigns/{name}", needScope(auth.ScopeCampaignsWrite), s.putCampaign)
	s.handle("GET /v1/campaigns/{name}", needScope(auth.ScopeCampaignsRead), s.getCampaign)
	s.handle("DELETE /v1/campaigns/{name}", needScope(auth.ScopeCampaignsWrite), s.deleteCampaign)
	s.handle("GET /v1/campaigns", needScope(auth.ScopeCampaignsRead), s.listCampaigns)
	s.handle("POST /v1/campaigns/{name}/run", needScope(auth.ScopeCampaignsWrite), s.runCampaign)
	s.handle("GET /v1/campaigns/{name}/runs", needScope(auth.ScopeCampaignsRead), s.listCampaignRuns)
	s.handle("POST /v1/webhooks", needScope(auth.ScopeWebhooksWrite), s.createWebhook)
	s.handle("GET /v1/webhooks", needScope(auth.ScopeWebhooksRead), s.listWebhooks)
	s.handle("GET /v1/webhooks/{id}", needScope(auth.ScopeWebhooksRead), s.getWebhook)
	s.handle("PATCH /v1/webhooks/{id}", needScope(auth.ScopeWebhooksWrite), s.updateWebhook)
	s.handle("DELETE /v1/webhooks/{id}", needScope(auth.ScopeWebhooksWrite), s.deleteWebhook)
	s.handle("POST /v1/webhooks/{id}/rotate", needScope(auth.ScopeWebhooksWrite), s.rotateWebhookSecret)
	s.handle("GET /v1/webhooks/{id}/messages", needScope(auth.ScopeWebhooksRead), s.listWebhookMessages)
	s.handle("POST /v1/webhooks/{id}/replay", needScope(auth.ScopeWebhooksWrite), s.replayWebhookMessages)
	s.handleUnbounded("POST /v1/webhooks/{id}/test", needScope(auth.ScopeWebhooksWrite), s.testWebhook)
	s.handle("GET /v1/suppressions", needScope(auth.ScopeSuppressionsRead), s.listSuppressions)
	s.handle("DELETE /v1/suppressions/{channel}/{address}", needScope(auth.ScopeSuppressionsWrite), s.deleteSuppression)
	s.handleUnbounded("GET /healthz", openAccess(), s.healthz)
	s.handleUnbounded("GET /readyz", openAccess(), s.readyz)
	// The contract (api/openapi.yaml) is public, like documentation.
	s.handle("GET /openapi.yaml", openAccess(), s.openAPIYAML)
	s.handle("GET /openapi.json", openAccess(), s.openAPIJSON)
	// The VAPID public key is public by design: a web page needs it to
	// subscribe before it has any credential.
	s.handle("GET /v1/webpush/vapid-public-key", openAccess(), s.vapidPublicKey)
	// The web SDK (package websdk) is public code a page loads before it
	// has any credential, like the VAPID key.
	s.handle("GET /sdk/v1/{file}", openAccess(), s.sdkFile)
	s.handle("GET /sdk/integrity", openAccess(), s.sdkIntegrity)
	s.handle("GET /sdk/example", openAccess(), s.sdkExample)
	// One-click unsubscribe (RFC 8058): the signed token is the credential.
	s.handle("GET /v1/unsubscribe/{token}", openAccess(), s.getUnsubscribe)
	s.handle("POST /v1/unsubscribe/{token}", openAccess(), s.postUnsubscribe)
	// E-mail tracking: the signed token is what the routes act on; limited
	// per client address, since each may write a receipt (issue 35 item 2).
	s.handle("GET /t/o/{token}", publicLinkAccess(), s.trackOpen)
	s.handle("GET /t/c/{token}", publicLinkAccess(), s.trackClick)
	// Twilio's status callbacks carry its signature, not an API key; the
	// handler verifies it (twiliostatus.go).
	s.handle("POST /v1/providers/twilio/status", openAccess(), s.twilioStatus)
	if console != nil {
		s.mountConsole(console)
	}
	if metrics != nil {
		a := needScope(auth.ScopeMetricsRead)
		if s.auth.OpenMetrics {
			a = openAccess()
		}
		s.handleUnbounded("GET /metrics", a, func(w http.ResponseWriter, r *http.Request) error {
			metrics.ServeHTTP(w, r)
			return nil
		})
	}
}

// ServeHTTP assigns a request id, routes the request, turns a panic into a
// 500 and writes one access log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r)
	rw := &statusWriter{ResponseWriter: w}
	rw.Header().Set("X-Request-Id", id)
	s.setDeadlines(rw, start)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	h, pattern := s.mux.Handler(r)
	if s.cors(rw, r) {
		pattern = "cors preflight"
	}
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
	if pattern == "cors preflight" {
		return
	}
	if pattern == "" || !cleanPath(r.URL.EscapedPath()) {
		pattern = ""
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
	if !cleanPath(r.URL.EscapedPath()) {
		// ServeMux would redirect to the cleaned path with an HTML body; an
		// API client asked for a path that does not exist.
		writeJSON(w, http.StatusNotFound, ErrorBody{Code: heraldtype.ENOTFOUND, Message: "no such endpoint"})
		return
	}
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

// orDefault reads a Config duration: zero is the default, negative is no
// limit (returned as zero).
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// setDeadlines bounds the request's body and its response (Config's
// ReadTimeout and WriteTimeout) on the connection. They are set here, per
// request, rather than as the http.Server's ReadTimeout and WriteTimeout so
// that the inbox stream can lift them (streamInbox): a server-wide read
// timeout would cancel every stream after it, and a write timeout would
// cut it. A writer without deadlines (a test recorder) is left alone.
func (s *Server) setDeadlines(w http.ResponseWriter, start time.Time) {
	rc := http.NewResponseController(w)
	if s.readTimeout > 0 {
		_ = rc.SetReadDeadline(start.Add(s.readTimeout))
	}
	if s.writeTimeout > 0 {
		_ = rc.SetWriteDeadline(start.Add(s.writeTimeout))
	}
}

// refuseBody makes a refused request's answer go out without waiting for
// its body. net/http reads what is left of an unread body (up to 256 KiB)
// before it writes the status line, to keep the connection for the next
// request; a stranger trickling a body would hold the answer, and the
// connection, for as long as it likes. Closing the connection instead
// skips that read, and the expired read deadline ends the one net/http
// makes after the handler. HTTP/2 resets the stream by itself.
func refuseBody(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 || r.ContentLength == 0 {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

// cleanPath reports whether p is what ServeMux routes without a redirect:
// rooted, no "." or ".." segment, no empty segment ("//").
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return c == p || c+"/" == p && p != "//"
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
	for _, check := range s.readyChecks {
		if err := check(ctx); err != nil {
			s.log.LogAttrs(r.Context(), slog.LevelWarn, "not ready",
				slog.String("request_id", requestIDFrom(r.Context())), slog.String("err", err.Error()))
			return heraldtype.Errorf(heraldtype.EUNAVAILABLE, "%s", err.Error())
		}
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
