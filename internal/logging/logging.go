// Package logging holds the slog handlers Herald's components log through
// (S2.7, issue 30 item 6). Every background component — the delivery
// worker, the reminder scheduler, the campaign and rule runners, the
// leader's services, the Kafka consumer, the HTTP API — logs through a
// logger that carries its name as the attribute Key, so a handler knows
// whose record it handles before the record is built: Debug turns debug
// output on for some components only, Report hands the errors they log to
// an embedder's hook (an error tracker such as Sentry).
package logging

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
)

// Key is the attribute a component's logger carries its name under.
const Key = "component"

// Debug returns a handler that passes inner the records at base or above
// and, of the named components, every record from debug up. inner must
// accept debug records (be built with slog.LevelDebug); base is the level
// of every other component.
func Debug(inner slog.Handler, base slog.Leveler, components []string) slog.Handler {
	return &debugHandler{inner: inner, base: base, on: slices.Clone(components)}
}

type debugHandler struct {
	inner slog.Handler
	base  slog.Leveler
	on    []string // the components whose debug records pass; never written
	debug bool     // this logger's component is one of them
}

func (h *debugHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l < h.base.Level() && !(h.debug && l >= slog.LevelDebug) {
		return false
	}
	return h.inner.Enabled(ctx, l)
}

func (h *debugHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.inner.Handle(ctx, r)
}

func (h *debugHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.inner = h.inner.WithAttrs(as)
	if c, ok := component(as); ok {
		n.debug = slices.Contains(h.on, c)
	}
	return &n
}

func (h *debugHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.inner = h.inner.WithGroup(name)
	return &n
}

// Report returns a handler that passes every record to inner as inner
// decides, and calls fn for each record at warn or above that carries an
// error under the key "err" — the way every component logs a failure —
// whatever inner's level: with the component's name ("" for a logger
// without one) and the error, wrapped in the record's message so it says
// what failed (errors.Is and errors.As still see the cause). fn runs on
// the logging goroutine: it must not block. fn nil returns inner.
func Report(inner slog.Handler, fn func(ctx context.Context, component string, err error)) slog.Handler {
	if fn == nil {
		return inner
	}
	return &reportHandler{inner: inner, fn: fn}
}

type reportHandler struct {
	inner     slog.Handler
	fn        func(ctx context.Context, component string, err error)
	component string
}

func (h *reportHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h *reportHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var cause error
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				cause, _ = a.Value.Resolve().Any().(error)
				return false
			}
			return true
		})
		if cause != nil {
			h.fn(ctx, h.component, fmt.Errorf("%s: %w", r.Message, cause))
		}
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h *reportHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.inner = h.inner.WithAttrs(as)
	if c, ok := component(as); ok {
		n.component = c
	}
	return &n
}

func (h *reportHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.inner = h.inner.WithGroup(name)
	return &n
}

// component finds the component's name among attributes given to With.
func component(as []slog.Attr) (string, bool) {
	for _, a := range as {
		if a.Key == Key {
			return a.Value.String(), true
		}
	}
	return "", false
}
