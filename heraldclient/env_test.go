package heraldclient_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
	"github.com/heraldhq/herald/store/sqlite"
)

// fakeProvider accepts every send.
type fakeProvider struct {
	mu   sync.Mutex
	sent int
}

func (p *fakeProvider) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent++
	return "msg-" + m.Key, nil
}

// server is a real Herald: httpapi over herald.Client on a temp-file
// SQLite store, with workers delivering to a fake provider, served by
// httptest.
type server struct {
	*httptest.Server
	herald   *herald.Client
	api      *httpapi.Server
	keys     *auth.Keys
	adminKey string
	provider *fakeProvider
}

type serverOptions struct {
	// front, when set, wraps the API's handler (a fault injector).
	front func(http.Handler) http.Handler
	// heartbeat is the inbox stream's heartbeat interval.
	heartbeat time.Duration
	// rateLimit is the server's rate limit.
	rateLimit httpapi.RateLimitConfig
	// streams bounds the server's inbox streams.
	streams httpapi.StreamConfig
	// historyScan is the server's Limits.HistoryScan (0: the default).
	historyScan int
}

// startServer starts a real Herald for one test, or for TestMain (t nil:
// the caller closes it).
func startServer(tb testing.TB, dir string, o serverOptions) (*server, func()) {
	ctx := context.Background()
	fail := func(err error) {
		if tb != nil {
			tb.Helper()
			tb.Fatal(err)
		}
		panic(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "h.db"), sqlite.Options{})
	if err != nil {
		fail(err)
	}
	if err := st.Migrate(ctx); err != nil {
		fail(err)
	}
	p := &fakeProvider{}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hc, err := herald.NewClient(herald.Config{
		Store:               st,
		Providers:           map[string]herald.Provider{"fcm": p},
		MaintenanceInterval: -1,
		Worker:              herald.WorkerConfig{PollInterval: 20 * time.Millisecond, ReapInterval: time.Second},
		Logger:              logger,
		InboxHeartbeat:      o.heartbeat,
		Limits:              herald.Limits{HistoryScan: o.historyScan},
	})
	if err != nil {
		fail(err)
	}
	if err := hc.Start(ctx); err != nil {
		fail(err)
	}
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st})
	if err != nil {
		fail(err)
	}
	_, admin, err := keys.Create(ctx, "test-admin", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		fail(err)
	}
	tokens, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: []auth.UserTokenKey{{ID: "app1", Algorithm: auth.AlgHS256, Secret: userTokenSecret}}})
	if err != nil {
		fail(err)
	}
	api, err := httpapi.New(httpapi.Config{Client: hc, Logger: logger, Auth: httpapi.AuthConfig{Keys: keys, UserTokens: tokens},
		RateLimit: o.rateLimit, Streams: o.streams})
	if err != nil {
		fail(err)
	}
	var h http.Handler = api
	h = validated(tb, h)
	if o.front != nil {
		h = o.front(h)
	}
	ts := httptest.NewServer(h)
	ts.Config.RegisterOnShutdown(api.CloseStreams)
	stop := func() {
		api.CloseStreams()
		ts.CloseClientConnections()
		ts.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = hc.Stop(sctx)
		_ = st.Close()
	}
	if tb != nil {
		tb.Cleanup(stop)
	}
	return &server{Server: ts, herald: hc, api: api, keys: keys, adminKey: admin, provider: p}, stop
}

var userTokenSecret = []byte("test-user-token-secret-0123456789abcdef")

// userToken signs a user token for sub, valid for an hour, as an app's
// backend would.
func userToken(tb testing.TB, sub string) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "app1"
	s, err := tok.SignedString(userTokenSecret)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer starts a real Herald for the test.
func newServer(t *testing.T, o serverOptions) *server {
	t.Helper()
	s, _ := startServer(t, t.TempDir(), o)
	return s
}

// validated wraps h with the OpenAPI document's validator: every request
// the client sends and every answer it receives must be what
// api/openapi.yaml documents, or the test fails. The server of TestMain
// (tb nil) reports to mainTB, which fails the run.
func validated(tb testing.TB, h http.Handler) http.Handler {
	if tb == nil {
		tb = &mainT
	}
	return apitest.Handler(tb, h)
}

// mainTB collects the validator's reports about the examples' server,
// which has no *testing.T; TestMain fails the run if there are any.
type mainTB struct {
	testing.TB // nil: only the methods below are called
	mu         sync.Mutex
	errors     []string
}

var mainT mainTB

func (m *mainTB) Helper() {}

func (m *mainTB) Errorf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errors = append(m.errors, fmt.Sprintf(format, args...))
}

func (m *mainTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

func (m *mainTB) failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.errors...)
}

// client is a heraldclient.Client for s with its admin key and fast
// retries.
func (s *server) client(t *testing.T, opts ...heraldclient.Option) *heraldclient.Client {
	t.Helper()
	base := []heraldclient.Option{heraldclient.WithAPIKey(s.adminKey),
		heraldclient.WithRetry(heraldclient.RetryPolicy{Attempts: 4, BaseBackoff: 5 * time.Millisecond, MaxBackoff: 2 * time.Second})}
	c, err := heraldclient.New(s.URL, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
