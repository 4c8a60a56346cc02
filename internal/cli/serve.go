package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/redact"
	"github.com/heraldhq/herald/kafkaapi"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/sqlite"
)

// devProject is the FCM project id the dev-mode emulator serves.
const devProject = "herald-dev"

func newServeCmd(e *env) *cobra.Command {
	var dev bool
	var listen, database, emulatorAddr, tlsCert, tlsKey, policyStore string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API and the delivery workers",
		Long: `Run Herald: the HTTP API and the delivery workers, on the embedded SQLite store.

--dev also starts the built-in provider emulators (FCM on --emulator-addr, APNs, Web Push,
Twilio and SMTP on the dev.* addresses), a recommendation service a campaign's fetch can
call (dev.recommend_addr) and a Kafka broker (dev.kafka_addr), and wires every provider to
them, so everything works on a laptop with no credentials. Push is routed as in production:
Android to FCM, iOS to APNs, web to Web Push (push_routing changes it; the start-up log
says where each platform goes). The start-up log names every emulator with the URLs of
its received messages (GET /emulator/messages; DELETE clears them), its fault injection
(PUT /emulator/faults) and its counters (GET /emulator/stats); see docs/emulators.md
(testing with the emulators). Every message an emulator accepts is also logged. --dev also
serves the web SDK's example page at /sdk/example (docs/web-sdk.md).

Without --dev every API call needs a key (herald keys create, or HERALD_BOOTSTRAP_API_KEY), and
serve refuses to start until one exists. --dev binds to loopback only and turns authentication
off. --tls-cert and --tls-key serve HTTPS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// load is also what a SIGHUP reload reads (rotate.go): the
			// flags win over the file and the environment every time.
			load := func() (Config, error) {
				cfg, err := loadConfig(e.configPath, e.environ)
				if err != nil {
					return cfg, err
				}
				if cmd.Flags().Changed("listen") {
					cfg.Listen = listen
				}
				if cmd.Flags().Changed("database") {
					cfg.Database = database
				}
				if cmd.Flags().Changed("emulator-addr") {
					cfg.Dev.FCMAddr = emulatorAddr
				}
				if cmd.Flags().Changed("policy-store") {
					cfg.PolicyStore = policyStore
				}
				if cmd.Flags().Changed("tls-cert") {
					cfg.TLS.CertFile = tlsCert
				}
				if cmd.Flags().Changed("tls-key") {
					cfg.TLS.KeyFile = tlsKey
				}
				return cfg, nil
			}
			return serve(cmd.Context(), e, load, dev)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dev, "dev", false, "development mode: start every provider emulator and send to them")
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "HTTP API address (config listen, env HERALD_LISTEN)")
	f.StringVar(&database, "database", "herald.db", "SQLite file or postgres:// URL (config database, env HERALD_DATABASE_URL)")
	f.StringVar(&policyStore, "policy-store", "", "where the delivery policy keeps dedupe locks and daily counts: empty for the database, or redis://host:6379/0 (config policy_store)")
	f.StringVar(&tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file (config tls.cert_file)")
	f.StringVar(&tlsKey, "tls-key", "", "the certificate's PEM private key file (config tls.key_file)")
	f.StringVar(&emulatorAddr, "emulator-addr", "127.0.0.1:8081", "where --dev starts the FCM emulator (config dev.fcm_addr; the other emulators: dev.*)")
	return cmd
}

func serve(ctx context.Context, e *env, load func() (Config, error), dev bool) error {
	cfg, err := load()
	if err != nil {
		return err
	}
	log, err := newLogger(e.stderr, cfg.Log)
	if err != nil {
		return err
	}
	if dev {
		if err := checkDevListen(cfg.Listen); err != nil {
			return err
		}
	}
	tlsCfg, err := cfg.TLS.tlsConfig()
	if err != nil {
		return err
	}
	userTokens, err := cfg.Auth.UserTokens.userTokens()
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("database %s: %w", redact.DSN(cfg.Database), err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", redact.DSN(cfg.Database), err)
	}

	keys, err := cfg.Auth.keys(st)
	if err != nil {
		return err
	}
	if !dev {
		if err := requireKey(ctx, keys, cfg); err != nil {
			return err
		}
	}

	hc, err := cfg.clientConfig()
	if err != nil {
		return err
	}
	hc.Store = st
	hc.Logger = log
	// The API's listener is bound before the e-mail links are configured:
	// in --dev without http.public_url their base is the address actually
	// bound, so a --listen port of 0 gives links that reach this server.
	tcp, err := listenAPI(cfg.Listen)
	if err != nil {
		return err
	}
	tcpOwned := false
	defer func() {
		if !tcpOwned {
			tcp.Close()
		}
	}()
	if dev {
		cfg.Listen = tcp.Addr().String()
	}
	if hc.Unsubscribe, err = cfg.unsubscribe(dev, log); err != nil {
		return err
	}
	if hc.EmailTracking, err = cfg.emailTracking(dev); err != nil {
		return err
	}
	if hc.Callout, err = cfg.callout(dev); err != nil {
		return err
	}
	limiter, closeLimiter, err := openPolicyStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeLimiter()
	hc.PolicyLimiter = limiter
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hc.Registerer = reg
	tp, stopTracing, err := cfg.Tracing.tracerProvider(log)
	if err != nil {
		return err
	}
	// Runs last of all: the spans of the last sends are flushed.
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if err := stopTracing(fctx); err != nil {
			log.Warn("tracing: flushing spans at shutdown failed", "err", err)
		}
	}()
	hc.TracerProvider = tp

	wired, err := cfg.providers(dev, log)
	if err != nil {
		return err
	}
	for _, cl := range wired.closers {
		defer cl.Close()
	}
	providers, routing := wired.byName, wired.routing
	if len(providers) == 0 {
		log.Warn("no provider configured: triggers are refused until one is (see docs/configuration.md), or run with --dev")
	}
	hc.Providers, hc.PushRouting = providers, routing
	// SIGHUP re-reads the configuration and rotates provider credentials
	// (issue 21 item 7). Registered before serve says it listens, so a
	// SIGHUP after that line never terminates the process.
	rot := newRotator(cfg, load, providers, log)
	stopReload := reloadOnSIGHUP(ctx, func() { _ = rot.Reload() })
	defer stopReload()
	// Each platform's provider is in the start-up log (issue 32 item 1): in
	// --dev iOS reaches the APNs emulator and web the Web Push emulator, as
	// a production configuration with all three providers routes them.
	logRouting(log, routing)

	client, err := herald.NewClient(hc)
	if err != nil {
		return err
	}
	if dev {
		wh, err := cfg.startDevWebhook(ctx, st, log)
		if err != nil {
			return err
		}
		defer wh.Close()
	}
	var intake atomic.Pointer[kafkaapi.Consumer]
	// The console's overview shows the intake's lag when this process
	// runs one (brokers configured, or --dev's broker); it starts below.
	var kafkaLag func(context.Context) (int64, bool)
	if len(cfg.Kafka.Brokers) > 0 || dev {
		kafkaLag = func(context.Context) (int64, bool) {
			if c := intake.Load(); c != nil {
				return c.Lag()
			}
			return 0, false
		}
	}
	con, err := newConsole(cfg, client, st, keys, dev, client.Logger(herald.ComponentHTTP), kafkaLag)
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Config{
		Console: con,
		// The web SDK's example page is a newcomer's, against --dev's
		// open API; a production server does not serve it.
		SDKExample: dev,
		Client:     client, Logger: client.Logger(herald.ComponentHTTP), MaxBodyBytes: cfg.MaxBodyBytes,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
		Auth: httpapi.AuthConfig{Keys: keys, UserTokens: userTokens, Disabled: dev,
			OpenMetrics: !cfg.Auth.MetricsAuth},
		RateLimit:   cfg.RateLimit.httpapi(),
		ReadTimeout: off(cfg.HTTP.ReadTimeout), WriteTimeout: off(cfg.HTTP.WriteTimeout),
		StoreTimeout: off(cfg.HTTP.StoreTimeout),
		Streams:      cfg.HTTP.streams(),
		CORS:         httpapi.CORSConfig{AllowedOrigins: cfg.HTTP.CORSAllowedOrigins},
		// The Kafka intake starts after the server is built; until then
		// (and when it is off) it has nothing to report.
		ReadyChecks: []httpapi.ReadyCheck{func(ctx context.Context) error {
			if c := intake.Load(); c != nil {
				return c.Ready(ctx)
			}
			return nil
		}},
	})
	if err != nil {
		return err
	}
	connCfg := cfg.HTTP.conn()
	connCfg.TLS = tlsCfg
	tcpOwned = true // the server closes it from here on; on its error, below
	srv, ln, err := httpapi.NewHTTPServer(api, tcp, connCfg)
	if err != nil {
		tcp.Close()
		return err
	}
	srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	srv.RegisterOnShutdown(api.CloseStreams)
	if err := client.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	stopKafka, cons, err := startKafka(ctx, cfg, dev, client, reg, log)
	if err != nil {
		ln.Close()
		return errors.Join(err, client.Stop(context.WithoutCancel(ctx)))
	}
	intake.Store(cons)
	scheme := "http://"
	if tlsCfg != nil {
		scheme = "https://"
	}
	if dev {
		log.Warn("dev mode: authentication is OFF — a request without credentials acts as admin; listening on loopback only",
			"addr", ln.Addr().String())
	}
	log.Info("herald listening", "addr", scheme+ln.Addr().String(), "database", redact.DSN(cfg.Database), "dev", dev,
		"loopback_only", isLoopback(ln.Addr()), "tls", tlsCfg != nil, "auth", !dev, "user_tokens", userTokens != nil,
		"bootstrap_key", keys.HasBootstrap())

	errc := make(chan error, 1)
	go func() {
		if tlsCfg != nil {
			errc <- srv.ServeTLS(ln, "", "") // the certificate is in TLSConfig
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	// A stop says what it did (issue 22 item 7): the worker logs how many
	// sends in flight finished, how many deliveries went back to the queue
	// and how many are left to the lease reaper; "herald stopped" is the
	// last line.
	stopReload()
	log.Info("herald stopping", "shutdown_timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	// The intake stops before the Client: its last offsets are committed
	// for records whose work the Client finished.
	stopKafka()
	stopErr := client.Stop(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err = errors.Join(err, shutErr, stopErr); err != nil {
		log.Error("herald stopped", "err", err)
		return err
	}
	log.Info("herald stopped")
	return nil
}

// openStore opens the database named by dsn: a PostgreSQL URL, or a
// SQLite file path (optionally prefixed sqlite:).
func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	dsn := cfg.Database
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres.Open(ctx, dsn, postgres.Options{Schema: cfg.DatabaseSchema, MaxConns: int32(cfg.DatabaseMaxConns),
			EnqueueConcurrency: cfg.DatabaseEnqueueConcurrency})
	}
	if keywordDSN.MatchString(dsn) {
		// Taken for a file name, it would create a SQLite database named
		// after the connection string, password included (issue 18).
		return nil, fmt.Errorf("database: %s is a PostgreSQL keyword/value connection string; give a postgres:// URL "+
			"(a SQLite path that starts so takes the sqlite: prefix)", redact.DSN(dsn))
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path == "" {
		return nil, errors.New("database: empty path")
	}
	return sqlite.Open(ctx, path, sqlite.Options{})
}

// keywordDSN matches a libpq keyword/value connection string
// ("host=db user=herald password=…").
var keywordDSN = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|service|connect_timeout|options)\s*=`)

func isLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return false
}
