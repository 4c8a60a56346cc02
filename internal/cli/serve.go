package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store/sqlite"
)

// devProject is the FCM project id the dev-mode emulator serves.
const devProject = "herald-dev"

func newServeCmd(e *env) *cobra.Command {
	var dev bool
	var listen, database, emulatorAddr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API and the delivery workers",
		Long: `Run Herald: the HTTP API and the delivery workers, on the embedded SQLite store.

--dev also starts the built-in FCM emulator (on --emulator-addr) and wires the FCM
provider to it, so everything works on a laptop with no credentials. Every message
the emulator accepts is logged; GET /emulator/messages on the emulator lists them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(e.configPath, e.environ)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("listen") {
				cfg.Listen = listen
			}
			if cmd.Flags().Changed("database") {
				cfg.Database = database
			}
			if cmd.Flags().Changed("emulator-addr") {
				cfg.EmulatorAddr = emulatorAddr
			}
			return serve(cmd.Context(), e, cfg, dev)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dev, "dev", false, "development mode: start the FCM emulator and send to it")
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "HTTP API address (config listen, env HERALD_LISTEN)")
	f.StringVar(&database, "database", "herald.db", "SQLite database file (config database, env HERALD_DATABASE)")
	f.StringVar(&emulatorAddr, "emulator-addr", "127.0.0.1:8081", "where --dev starts the FCM emulator (config emulator_addr)")
	return cmd
}

func serve(ctx context.Context, e *env, cfg Config, dev bool) error {
	log, err := newLogger(e.stderr, cfg.Log)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", cfg.Database, err)
	}

	hc, err := cfg.clientConfig()
	if err != nil {
		return err
	}
	hc.Store = st
	hc.Logger = log
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hc.Registerer = reg

	creds, err := cfg.FCM.credentials()
	if err != nil {
		return err
	}
	fcmCfg := fcm.Config{CredentialsJSON: creds, ProjectID: cfg.FCM.ProjectID, Endpoint: cfg.FCM.Endpoint}
	if dev {
		em, err := startDevEmulator(cfg.EmulatorAddr, log)
		if err != nil {
			return err
		}
		defer em.Close()
		fcmCfg = fcm.Config{CredentialsJSON: em.ServiceAccountJSON(devProject), Endpoint: em.URL()}
	}
	if len(fcmCfg.CredentialsJSON) > 0 {
		p, err := fcm.New(fcmCfg)
		if err != nil {
			return fmt.Errorf("fcm: %w", err)
		}
		hc.Providers = map[string]herald.Provider{"fcm": p}
	} else {
		log.Warn("no push provider configured: push triggers are refused until fcm.credentials_file is set (or run with --dev)")
	}

	client, err := herald.NewClient(hc)
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Config{
		Client: client, Logger: log, MaxBodyBytes: cfg.MaxBodyBytes,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("herald listening", "addr", "http://"+ln.Addr().String(), "database", cfg.Database, "dev", dev, "loopback_only", isLoopback(ln.Addr()))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	log.Info("herald stopping")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	stopErr := client.Stop(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, shutErr, stopErr)
}

// openStore opens the database named by dsn. PostgreSQL arrives with the
// scale-out issue; until then only SQLite paths are accepted.
func openStore(ctx context.Context, dsn string) (*sqlite.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return nil, errors.New("database: PostgreSQL is not supported yet; use a SQLite file path")
	}
	path := strings.TrimPrefix(dsn, "sqlite:")
	if path == "" {
		return nil, errors.New("database: empty path")
	}
	return sqlite.Open(ctx, path, sqlite.Options{})
}

func isLoopback(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return false
}
