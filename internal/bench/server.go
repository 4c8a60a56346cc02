package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heraldhq/herald"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/sqlite"
)

// inProcess is a Herald server built in this process the way `herald
// serve` builds one (store, FCM provider, Client, HTTP API on loopback),
// but without the CLI's security middleware: it listens on 127.0.0.1 only
// and needs no API key.
type inProcess struct {
	url     string
	store   store.Store
	api     *herald.Client // serves the HTTP API
	workers *herald.Client // runs the workers; nil while a backlog fills
	hc      herald.Config
	srv     *http.Server
	cleanup []func()
	// hooks is the webhook receiver emulator (Config.Webhooks), or nil.
	hooks *webhookemu.Emulator
}

// startInProcess opens the store and serves the API. With paused, the
// workers do not run until resume: the queue fills first (a backlog run).
func startInProcess(ctx context.Context, cfg *Config, em *fcmemu.Emulator, paused bool) (*inProcess, error) {
	s := &inProcess{}
	ok := false
	defer func() {
		if !ok {
			s.close(context.Background())
		}
	}()
	st, err := openStore(ctx, cfg, s)
	if err != nil {
		return nil, err
	}
	s.store = st
	if err := st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("herald-bench"), Endpoint: em.URL()})
	if err != nil {
		return nil, err
	}
	s.hc = herald.Config{
		Store: st, Providers: map[string]herald.Provider{"fcm": push},
		MaxAttempts: cfg.MaxAttempts, Worker: cfg.Worker, Retry: cfg.Retry,
		// Pruning scans the tables; a benchmark measures the queue.
		MaintenanceInterval: -1,
		Logger:              cfg.Logger,
	}
	if cfg.DigestWindow > 0 {
		// One digest per user (no key), collected, its message the count
		// and the first trigger's title.
		s.hc.Types = map[string]herald.TypeConfig{benchType: {Digest: &herald.DigestConfig{
			Window: cfg.DigestWindow.String(), MaxItems: cfg.DigestMaxItems,
			Title: "{{.Count}} bench notifications", Body: "{{.Title}}"}}}
	}
	if cfg.Webhooks {
		if err := s.startWebhooks(ctx, cfg.WebhookEvents); err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
	}
	// Unpaused, one Client serves the API and runs the workers, so an
	// enqueue wakes them at once, as in `herald serve`. Paused, the API
	// Client has no workers and resume starts a second Client.
	api := s.hc
	api.DisableWorkers = paused
	reg := prometheus.NewRegistry()
	api.Registerer = reg
	if s.api, err = herald.NewClient(api); err != nil {
		return nil, err
	}
	if !paused {
		if err := s.api.Start(ctx); err != nil {
			return nil, err
		}
		s.workers = s.api
	}
	// Loopback only and gone with the benchmark: no credentials needed.
	h, err := httpapi.New(httpapi.Config{Client: s.api, Logger: cfg.Logger, Auth: httpapi.AuthConfig{Disabled: true},
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	go s.srv.Serve(ln) //nolint:errcheck // returns ErrServerClosed at close
	ok = true
	return s, nil
}

// resume starts the workers of a paused server: a second Client on the
// same store, which claims the backlog at once.
func (s *inProcess) resume(ctx context.Context) error {
	w, err := herald.NewClient(s.hc)
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	s.workers = w
	return nil
}

// close stops the workers and the API and removes a temporary database.
func (s *inProcess) close(ctx context.Context) error {
	var errs []error
	if s.srv != nil {
		errs = append(errs, s.srv.Shutdown(ctx))
	}
	if s.workers != nil {
		errs = append(errs, s.workers.Stop(ctx))
	}
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
	return errors.Join(errs...)
}

// openStore opens the configured database: PostgreSQL in a fresh schema
// (dropped at close unless KeepData), or SQLite in a temporary file.
func openStore(ctx context.Context, cfg *Config, s *inProcess) (store.Store, error) {
	if strings.HasPrefix(cfg.Database, "postgres://") || strings.HasPrefix(cfg.Database, "postgresql://") {
		schema := cfg.DatabaseSchema
		if schema == "" {
			schema = fmt.Sprintf("herald_bench_%d", time.Now().UnixNano())
			if !cfg.KeepData {
				s.cleanup = append(s.cleanup, func() { dropSchema(cfg.Database, schema) })
			}
		}
		return postgres.Open(ctx, cfg.Database, postgres.Options{Schema: schema, MaxConns: 20})
	}
	path := strings.TrimPrefix(cfg.Database, "sqlite:")
	if path == "" {
		dir, err := os.MkdirTemp("", "herald-bench")
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "bench.db")
		if !cfg.KeepData {
			s.cleanup = append(s.cleanup, func() { os.RemoveAll(dir) })
		}
	}
	return sqlite.Open(ctx, path, sqlite.Options{})
}

// dropSchema removes a benchmark's PostgreSQL schema.
func dropSchema(dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`) //nolint:errcheck // best effort at exit
}

// startWebhooks starts the webhook receiver emulator on loopback and
// registers one endpoint subscribed to every event type pointed at it,
// signing with a fresh secret the emulator verifies; the Clients may
// reach loopback (callout.allow), as serve --dev's may.
func (s *inProcess) startWebhooks(ctx context.Context, events []string) error {
	if events == nil {
		events = []string{} // every type
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	em, err := webhookemu.New(webhookemu.Config{Secrets: []string{secret}})
	if err != nil {
		return err
	}
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		return err
	}
	s.hooks = em
	s.cleanup = append(s.cleanup, func() { em.Close() })
	s.hc.Callout.Allow = append(s.hc.Callout.Allow, netip.MustParsePrefix("127.0.0.0/8"))
	now := time.Now().UTC()
	return s.store.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: "wh_bench",
		URL: em.URL() + "/hooks/bench", Description: "herald bench's receiver", Events: events, Enabled: true,
		CreatedAt: now, UpdatedAt: now}, Secret: secret})
}

// digestCounts reads every digest of the bench type back: how many, and
// how many of them were sent and are not failed.
func (s *inProcess) digestCounts(ctx context.Context) (total, sent int, err error) {
	f := herald.DigestFilter{Type: benchType, Limit: 200}
	for {
		page, err := s.api.ListDigests(ctx, f)
		if err != nil {
			return total, sent, err
		}
		for _, d := range page.Digests {
			total++
			if d.State == store.DigestSent {
				sent++
			}
		}
		if page.NextCursor == "" {
			return total, sent, nil
		}
		f.Cursor = page.NextCursor
	}
}
