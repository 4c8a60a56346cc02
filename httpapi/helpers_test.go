package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// fakeProvider is a Provider whose answer the test chooses. It also
// validates notifications the way FCM does, against a body limit, so the
// trigger-time payload check can be exercised.
type fakeProvider struct {
	mu   sync.Mutex
	fail *heraldtype.SendError // nil: every send succeeds
	sent int
	// maxBody > 0 refuses longer bodies at trigger time.
	maxBody int
	// started, when set, is told each send's key; hold, when set, holds
	// each send until it is closed.
	started chan string
	hold    chan struct{}
}

func (p *fakeProvider) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	if p.started != nil {
		p.started <- m.Key
	}
	if p.hold != nil {
		<-p.hold
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return "", p.fail
	}
	p.sent++
	return "msg-" + m.Key, nil
}

func (p *fakeProvider) ValidateNotification(n *heraldtype.Notification) error {
	if p.maxBody > 0 && len(n.Body) > p.maxBody {
		return heraldtype.Errorf(heraldtype.ETOOLARGE, "the message is larger than the provider's %d-byte limit", p.maxBody)
	}
	return nil
}

var _ herald.NotificationValidator = (*fakeProvider)(nil)

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type env struct {
	t   *testing.T
	srv *httpapi.Server
	// h is srv behind the contract's validator (internal/apitest): the
	// tests send their requests to it, so every exchange is checked
	// against api/openapi.yaml.
	h        http.Handler
	client   *herald.Client
	store    *sqlite.Store
	provider *fakeProvider
	logs     *syncBuffer
	keys     *auth.Keys
	// adminKey is sent by do unless the request names its own
	// Authorization header.
	adminKey string
}

type envOptions struct {
	workers      bool
	maxBodyBytes int64
	metrics      http.Handler
	provider     *fakeProvider
	userTokens   *auth.UserTokens
	rateLimit    httpapi.RateLimitConfig
	openMetrics  bool
	readTimeout  time.Duration
	writeTimeout time.Duration
	heartbeat    time.Duration
	streams      httpapi.StreamConfig
	cors         httpapi.CORSConfig
	// addresses also routes sms and email to the fake provider, so a
	// trigger records deliveries with an address.
	addresses bool
	// now is the Client's clock (time.Now if nil).
	now func() time.Time
	// storeTimeout is the Server's Config.StoreTimeout.
	storeTimeout time.Duration
	// wrapStore, when set, wraps the store the Client and the API keys
	// use, e.g. to make it stall.
	wrapStore func(store.Store) store.Store
	// unsubscribe is the Client's one-click unsubscribe configuration.
	unsubscribe herald.UnsubscribeConfig
	// emailTracking is the Client's e-mail tracking configuration.
	emailTracking herald.EmailTrackingConfig
	// readyChecks are the Server's Config.ReadyChecks.
	readyChecks []httpapi.ReadyCheck
	// console is the Server's Config.Console.
	console http.Handler
	// sdkExample is the Server's Config.SDKExample.
	sdkExample bool
	// calloutAllow is the Client's callout.allow: the internal networks
	// callouts and outbound webhooks may reach.
	calloutAllow []netip.Prefix
}

// newEnv builds a Server over a real Client on a temp-file SQLite store.
// Workers run only when asked, so most tests see deliveries stay pending.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if o.provider == nil {
		o.provider = &fakeProvider{}
	}
	providers := map[string]herald.Provider{"fcm": o.provider}
	if o.addresses {
		providers["twilio"], providers["smtp"] = o.provider, o.provider
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var cs store.Store = s
	if o.wrapStore != nil {
		cs = o.wrapStore(s)
	}
	c, err := herald.NewClient(herald.Config{
		Store:               cs,
		Providers:           providers,
		DisableWorkers:      !o.workers,
		MaintenanceInterval: -1,
		Worker:              herald.WorkerConfig{PollInterval: 20 * time.Millisecond, ReapInterval: time.Second},
		Logger:              logger,
		InboxHeartbeat:      o.heartbeat,
		Now:                 o.now,
		Unsubscribe:         o.unsubscribe,
		EmailTracking:       o.emailTracking,
		Callout:             herald.CalloutConfig{Allow: o.calloutAllow},
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.workers {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Stop(stopCtx); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
	keys, err := auth.NewKeys(auth.KeysConfig{Store: cs})
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := keys.Create(ctx, "test-admin", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Config{Client: c, Logger: logger, Metrics: o.metrics, MaxBodyBytes: o.maxBodyBytes,
		Auth:      httpapi.AuthConfig{Keys: keys, UserTokens: o.userTokens, OpenMetrics: o.openMetrics},
		RateLimit: o.rateLimit, ReadTimeout: o.readTimeout, WriteTimeout: o.writeTimeout, Streams: o.streams,
		StoreTimeout: o.storeTimeout, CORS: o.cors, ReadyChecks: o.readyChecks, Console: o.console,
		SDKExample: o.sdkExample})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, h: apitest.Handler(t, srv), client: c, store: s, provider: o.provider, logs: logs, keys: keys, adminKey: admin}
}

// response is a finished request.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request straight to the handler. body may be a string (sent
// as is) or any other value (JSON-encoded); nil sends no body.
func (e *env) do(method, path string, body any, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+e.adminKey)
	for i := 0; i+1 < len(header); i += 2 {
		if http.CanonicalHeaderKey(header[i]) == "Authorization" {
			req.Header.Del("Authorization") // the request brings its own, or none
		}
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Add(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// expect checks the status and decodes the body into v (unless nil).
func (r response) expect(t *testing.T, status int, v any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decoding %s: %v", r.body, err)
		}
	}
}

// errorBody decodes an error response and checks it is well-formed.
func (r response) errorBody(t *testing.T) httpapi.ErrorBody {
	t.Helper()
	var eb httpapi.ErrorBody
	if err := json.Unmarshal(r.body, &eb); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type %q", ct)
	}
	if eb.Code == "" || eb.Message == "" {
		t.Errorf("error body %s lacks code or message", r.body)
	}
	if got := httpapi.StatusForCode(eb.Code); got != r.status {
		t.Errorf("code %s answered with %d; the catalogue says %d", eb.Code, r.status, got)
	}
	return eb
}

// seedUser creates a user with one Android device.
func (e *env) seedUser(id string) {
	e.t.Helper()
	e.do("PUT", "/v1/users/"+id, map[string]string{"timezone": "Asia/Seoul"}).expect(e.t, 200, nil)
	e.do("POST", "/v1/users/"+id+"/devices", map[string]any{
		"device_id": id + "-phone", "token": "tok-" + id, "platform": "android",
	}).expect(e.t, 200, nil)
}

// waitFor polls cond until it holds or the deadline passes: the workers
// run asynchronously and there is no signal to wait on from outside.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
