package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/bench"
)

func newBenchCmd(e *env) *cobra.Command {
	var cfg bench.Config
	var asJSON bool
	var batch, workerConc int
	var poll time.Duration
	var cpuProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure a Herald server: throughput, trigger → provider latency, CPU and memory",
		Long: `Drive a Herald server through its HTTP API against an FCM emulator run by this
command, and report notifications accepted/s, deliveries sent/s, trigger → provider latency
(p50/p95/p99/max, measured at the emulator) and the server's CPU and peak memory.

Without --server, a server is started in this process: SQLite in a temporary file, or
PostgreSQL with --database postgres://… (a fresh schema, dropped afterwards). CPU and memory
are then those of this whole process (server, emulator and load generator).

With --server, the server must send to this command's emulator: give --emulator-addr and
--credentials-out, then start the server with
  HERALD_FCM__ENDPOINT=http://<emulator-addr> HERALD_FCM__CREDENTIALS_FILE=<credentials-out>
(the command waits for /readyz). CPU and memory come from its /metrics.

--rate runs open loop (triggers on a fixed schedule; latency from the scheduled time);
without it, --concurrency clients run closed loop. --backlog fills the queue with the
workers stopped, then measures the drain (in process only).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Server == "" {
				cfg.Server = lookupEnv(e.environ, "HERALD_SERVER")
			}
			if !cmd.Flags().Changed("api-key") {
				cfg.APIKey = lookupEnv(e.environ, "HERALD_API_KEY")
			}
			cfg.Worker.BatchSize, cfg.Worker.Concurrency, cfg.Worker.PollInterval = batch, workerConc, poll
			cfg.Progress = e.stderr
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("bench: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("bench: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			res, err := bench.Run(cmd.Context(), cfg)
			if res.Notifications > 0 || res.Sent > 0 {
				var werr error
				if asJSON {
					werr = res.WriteJSON(e.stdout)
				} else {
					werr = res.WriteTable(e.stdout)
				}
				if err == nil {
					err = werr
				}
			}
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Server, "server", "", "base URL of a running Herald server (env HERALD_SERVER); empty starts one in process")
	f.StringVar(&cfg.APIKey, "api-key", "", "API key sent as Authorization: Bearer (env HERALD_API_KEY)")
	f.StringVar(&cfg.Database, "database", "", "in-process store: empty for a temporary SQLite file, a SQLite path, or postgres://…")
	f.StringVar(&cfg.DatabaseSchema, "database-schema", "", "PostgreSQL schema (default: a fresh one per run)")
	f.BoolVar(&cfg.KeepData, "keep-data", false, "keep the temporary SQLite file or PostgreSQL schema")
	f.IntVar(&cfg.Users, "users", 1000, "users to register")
	f.IntVar(&cfg.DevicesPerUser, "devices", 1, "android devices per user")
	f.IntVar(&cfg.Notifications, "notifications", 100_000, "notifications (recipients) in total")
	f.IntVar(&cfg.Recipients, "recipients", 1, "recipients (user_ids) per trigger")
	f.IntVar(&cfg.Concurrency, "concurrency", 16, "triggers in flight")
	f.Float64Var(&cfg.Rate, "rate", 0, "open-loop target in notifications/s (0: closed loop)")
	f.BoolVar(&cfg.Backlog, "backlog", false, "fill the queue with the workers stopped, then measure the drain (in process)")
	f.DurationVar(&cfg.Warmup, "warmup", 0, "leave the pushes of the first triggers sent within this long out of the latency figures")
	f.BoolVar(&cfg.Webhooks, "webhooks", false, "register a webhook endpoint for every event type at an in-process receiver, and wait for every delivery's message (in process)")
	f.StringSliceVar(&cfg.WebhookEvents, "webhook-events", nil, "with --webhooks: subscribe the endpoint to these event types only (delivery.finished, notification.status_changed)")
	f.DurationVar(&cfg.DigestWindow, "digest-window", 0, "declare the bench type a digest of this window (one per user): a user's triggers within it become one notification (in process)")
	f.IntVar(&cfg.DigestMaxItems, "digest-max-items", 0, "with --digest-window: send a digest once it holds this many triggers (0: the server's limit)")
	f.Float64Var(&cfg.Faults.Unavailable, "fault-unavailable", 0, "fraction of sends answered 503 UNAVAILABLE")
	f.Float64Var(&cfg.Faults.Internal, "fault-internal", 0, "fraction of sends answered 500 INTERNAL")
	f.Float64Var(&cfg.Faults.Quota, "fault-quota", 0, "fraction of sends answered 429 QUOTA_EXCEEDED")
	f.IntVar(&cfg.Faults.QuotaRetryAfter, "fault-quota-retry-after", 1, "Retry-After seconds of a QUOTA_EXCEEDED answer")
	f.Float64Var(&cfg.Faults.Unregistered, "fault-unregistered", 0, "fraction of device tokens answered UNREGISTERED")
	f.StringVar(&cfg.EmulatorAddr, "emulator-addr", "", "FCM emulator address (default 127.0.0.1:0; required with --server)")
	f.StringVar(&cfg.CredentialsOut, "credentials-out", "", "write the emulator's service-account JSON here (for a --server)")
	f.DurationVar(&cfg.ReadyTimeout, "ready-timeout", 2*time.Minute, "how long to wait for --server's /readyz")
	f.DurationVar(&cfg.DrainTimeout, "drain-timeout", 10*time.Minute, "how long to wait for every delivery to finish")
	f.IntVar(&batch, "worker-batch", 0, "in-process worker.batch_size (0: default)")
	f.IntVar(&workerConc, "worker-concurrency", 0, "in-process worker.concurrency (0: default)")
	f.DurationVar(&poll, "worker-poll", 0, "in-process worker.poll_interval (0: default)")
	f.IntVar(&cfg.MaxAttempts, "max-attempts", 0, "in-process max_attempts (0: default 4)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this whole process (pprof format) to this file")
	return cmd
}
