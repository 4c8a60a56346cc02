// Package cli is Herald's command line: it reads configuration from files,
// the environment and flags, and wires the store, providers, Client and HTTP
// API together. It is the only package that knows where configuration comes
// from.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/logging"
)

// env is what a command runs with; tests substitute every part of it.
type env struct {
	stdout, stderr io.Writer
	environ        []string
	configPath     string
}

// Main runs the herald command with args and returns the exit code.
func Main(args []string) int {
	tuneGC(os.Getenv("GOGC"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, os.Stdout, os.Stderr, os.Environ())
}

// Run runs the herald command; it is Main without the process globals.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	e := &env{stdout: stdout, stderr: stderr, environ: environ}
	root := newRootCmd(e)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "herald:", errorText(err))
		return 1
	}
	return 0
}

// defaultGCPercent is the garbage collector's target when GOGC is not set.
// Herald's live heap is small (tens of MB) and its allocation rate high (an
// HTTP request and response per push): at Go's default of 100 the
// collector took 9.5 % of a herald bench run's CPU, at 400 2.9 %, for a
// peak heap of 88 MB instead of 51 (docs/PERFORMANCE.md).
const defaultGCPercent = 400

// tuneGC sets the collector's target to defaultGCPercent unless the
// operator chose one with GOGC (which the runtime has then applied).
func tuneGC(gogc string) {
	if gogc == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "herald",
		Short: "Herald delivers notifications: once, on time, and never lost",
		Long: `Herald takes a business event and gets the right message to the right person.

Configuration comes from a YAML file (--config or HERALD_CONFIG), then HERALD_*
environment variables (HERALD_WORKER__BATCH_SIZE sets worker.batch_size), then flags.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&e.configPath, "config", lookupEnv(e.environ, "HERALD_CONFIG"), "YAML configuration file (env HERALD_CONFIG)")
	root.AddCommand(newServeCmd(e), newMigrateCmd(e), newEmulateCmd(e), newSendCmd(e), newUsersCmd(e), newDevicesCmd(e), newTypesCmd(e), newTemplatesCmd(e), newPreferencesCmd(e),
		newInterestsCmd(e), newNotificationsCmd(e), newDeliveriesCmd(e), newRemindersCmd(e), newDigestsCmd(e), newCampaignsCmd(e), newRulesCmd(e), newEventsCmd(e), newWebhooksCmd(e), newWhyCmd(e), newVAPIDCmd(e), newBenchCmd(e), newFaultRunCmd(e), newKeysCmd(e))
	return root
}

func lookupEnv(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// newLogger builds the process logger: JSON (default) or text on stderr.
func newLogger(w io.Writer, c LogConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		return nil, fmt.Errorf("config: log.level %q: use debug, info, warn or error", c.Level)
	}
	for _, name := range c.Debug {
		if !slices.Contains(herald.LogComponents(), name) {
			return nil, fmt.Errorf("config: log.debug: %q is not a component; use %s", name, strings.Join(herald.LogComponents(), ", "))
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	if len(c.Debug) > 0 {
		// The handler writes debug lines; logging.Debug decides whose.
		opts.Level = slog.LevelDebug
	}
	var h slog.Handler
	switch c.Format {
	case "json", "":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("config: log.format %q: use json or text", c.Format)
	}
	if len(c.Debug) > 0 {
		h = logging.Debug(h, level, c.Debug)
	}
	return slog.New(h), nil
}
