package leadership

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// Service is one piece of leader-only work: the elector runs it once
// when this instance is elected and then every Interval while it leads,
// in the background, never two runs of one service at once.
//
// A new service plugs in with one line: its value in the Services of the
// elector's Config (herald.NewClient registers Herald's own).
type Service interface {
	// Name names the service in logs ("lease_reaper"); unique per elector.
	Name() string
	// Interval is how often the leader runs the service; zero disables
	// it. The next run is due one interval after the last one started,
	// whether it succeeded or failed.
	Interval() time.Duration
	// RunOnce does the work once, as of now (the clock at the renewal that
	// started it), and says what it did. ctx ends when leadership does.
	RunOnce(ctx context.Context, now time.Time) (Result, error)
}

// Daemon is leader-only work that runs for the leader's whole term
// rather than every Interval: time-driven work whose latency must not be
// the election's tick (the reminder scheduler). Run returns when ctx — the
// term — ends; if it returns earlier, the next renewal starts it again.
// It logs what it does itself.
type Daemon interface {
	Name() string
	Run(ctx context.Context)
}

// Result is what one run of a service did, for the log: counts by name
// ("requeued": 3). The elector logs a run whose counts are not all zero,
// at info level, or as a warning when Warn is set: work that reveals a
// fault elsewhere (a reclaimed lease is a worker that died mid-send).
type Result struct {
	Counts map[string]int
	Warn   bool
}

// empty reports whether the run did nothing worth a log line.
func (r Result) empty() bool {
	for _, n := range r.Counts {
		if n != 0 {
			return false
		}
	}
	return true
}

// scheduled is a registered service and when it last ran; its fields are
// guarded by Elector.mu.
type scheduled struct {
	Service
	lastRun time.Time
	running bool
}

// due marks and returns the services due at now and not running. The
// caller holds e.mu.
func (e *Elector) due(now time.Time) []*scheduled {
	var due []*scheduled
	for _, s := range e.services {
		if s.running || (!s.lastRun.IsZero() && now.Sub(s.lastRun) < s.Interval()) {
			continue
		}
		s.running, s.lastRun = true, now
		due = append(due, s)
	}
	return due
}

// run runs s once and logs what it did or why it failed.
func (e *Elector) run(ctx context.Context, s *scheduled, now time.Time) {
	defer func() {
		e.mu.Lock()
		s.running = false
		e.mu.Unlock()
	}()
	start := time.Now()
	r, err := s.RunOnce(ctx, now)
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		// A run cut short by the end of leadership is no failure.
		if ctx.Err() == nil {
			e.log.Error("leadership: service failed", "service", s.Name(), "err", err, "took", took)
		}
		return
	}
	if r.empty() {
		return
	}
	attrs := []any{"service", s.Name()}
	for _, k := range slices.Sorted(maps.Keys(r.Counts)) {
		attrs = append(attrs, k, r.Counts[k])
	}
	attrs = append(attrs, "took", took)
	level := slog.LevelInfo
	if r.Warn {
		level = slog.LevelWarn
	}
	e.log.Log(ctx, level, "leadership: service ran", attrs...)
}
