package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/store"
)

// consoleSessions is the console's sign-in outside --dev: sessions opened
// with an API key of the admin or console scope, kept in the database
// beside the keys. It is nil until those sessions are wired in, and then
// the console is served by serve --dev only.
func consoleSessions(_ store.Store) console.Sessions { return nil }

// newConsole builds the operator console served at /console/, or nil when
// it cannot be signed in to (no sessions outside --dev). kafkaLag reports
// the Kafka intake's lag; nil when this process runs no intake.
func newConsole(cfg Config, client *herald.Client, st store.Store, dev bool, log *slog.Logger,
	kafkaLag func(context.Context) (int64, bool)) (http.Handler, error) {
	if cfg.Console.Refresh <= 0 {
		return nil, fmt.Errorf("config: console.refresh: %s must be a positive duration (at least 1s)", cfg.Console.Refresh)
	}
	ccfg := console.Config{Client: client, Dev: dev, Refresh: cfg.Console.Refresh, Logger: log, KafkaLag: kafkaLag}
	if !dev {
		ccfg.Sessions = consoleSessions(st)
		if ccfg.Sessions == nil {
			log.Info("the console at /console/ is served with --dev only in this build")
			return nil, nil
		}
	}
	c, err := console.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return c, nil
}
