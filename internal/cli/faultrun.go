package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/bench"
)

func newFaultRunCmd(e *env) *cobra.Command {
	var cfg bench.FaultRunConfig
	var restartPG bool
	var restartCmd string
	cmd := &cobra.Command{
		Use:   "faultrun",
		Short: "Prove delivery under faults: provider errors, SIGKILLed Herald, restarted PostgreSQL",
		Long: `Run Herald (this binary, as "serve") against PostgreSQL and an in-process FCM emulator
that answers 20 % UNAVAILABLE, 5 % QUOTA_EXCEEDED with Retry-After 1 s and UNREGISTERED for
2 % of device tokens. While the notifications are delivered, the Herald process is killed
with SIGKILL and restarted --kills times, and PostgreSQL is restarted once.

At the end every delivery must be sent, dead with the right code (UNREGISTERED, or a
temporary code after its last attempt), skipped because its token was invalidated, or
(at_most_once only) unknown because a kill landed mid-send: none lost, no at_most_once
delivery sent twice, and no send earlier than a Retry-After the emulator asked for.

With --webhook-down, a webhook endpoint subscribed to every event type points at a receiver
that refuses every connection for that long from the start; once it is back, Herald is
killed once more while the events arrive. Every event written must then have arrived,
signed, in order per notification, and none may be dead.

The command prints the counts and exits 1 if any check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Database == "" {
				cfg.Database = lookupEnv(e.environ, "HERALD_DATABASE_URL")
			}
			if !strings.HasPrefix(cfg.Database, "postgres://") && !strings.HasPrefix(cfg.Database, "postgresql://") {
				return errors.New("faultrun: --database must be a postgres:// URL (or set HERALD_DATABASE_URL)")
			}
			if cfg.HeraldBin == "" {
				bin, err := os.Executable()
				if err != nil {
					return fmt.Errorf("faultrun: finding the herald binary: %w (use --herald-bin)", err)
				}
				cfg.HeraldBin = bin
			}
			if restartPG {
				c, err := postgresRestartCommand(restartCmd)
				if err != nil {
					return err
				}
				cfg.PostgresRestart = c
			}
			cfg.Out = e.stderr
			rep, err := bench.FaultRun(cmd.Context(), cfg)
			if rep != nil {
				if werr := rep.Write(e.stdout); err == nil {
					err = werr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Database, "database", "", "PostgreSQL URL (env HERALD_DATABASE_URL); the run uses a fresh schema")
	f.BoolVar(&cfg.KeepData, "keep-data", false, "keep the run's PostgreSQL schema for inspection")
	f.StringVar(&cfg.HeraldBin, "herald-bin", "", "herald binary to run as serve (default: this one)")
	f.IntVar(&cfg.Notifications, "notifications", 100_000, "notifications, each to a device of its own")
	f.IntVar(&cfg.Recipients, "recipients", 100, "recipients per trigger")
	f.IntVar(&cfg.Kills, "kills", 3, "how many times Herald is SIGKILLed and restarted")
	f.BoolVar(&restartPG, "restart-postgres", true, "restart PostgreSQL once mid-run (disturbs everything else using it)")
	f.StringVar(&restartCmd, "postgres-restart-cmd", "", "command that restarts PostgreSQL (default: pg_ctlcluster --skip-systemctl-redirect <version> main restart)")
	f.IntVar(&cfg.MaxAttempts, "max-attempts", 10, "attempts per delivery")
	f.DurationVar(&cfg.WebhookDown, "webhook-down", 0, "also send every event as a webhook to a receiver that is down this long from the start (e.g. 10m), with one more SIGKILL while they arrive; 0: no webhooks")
	f.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "give up after this long")
	return cmd
}

// postgresRestartCommand is the given command, or pg_ctlcluster for the
// one cluster version under /etc/postgresql (Debian's layout).
func postgresRestartCommand(given string) ([]string, error) {
	if given != "" {
		return strings.Fields(given), nil
	}
	entries, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(entries) != 1 {
		return nil, errors.New("faultrun: cannot tell the PostgreSQL cluster from /etc/postgresql; give --postgres-restart-cmd or --restart-postgres=false")
	}
	return []string{"pg_ctlcluster", "--skip-systemctl-redirect", entries[0].Name(), "main", "restart"}, nil
}
