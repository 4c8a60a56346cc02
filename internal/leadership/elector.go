// Package leadership elects one leader among the Herald instances that
// share a store and runs the leader-only services on it (River's
// internal/leadership). Leadership is the herald.leader cluster lock,
// renewed well before it runs out; a leader that cannot renew steps down
// before its lock could be taken by another instance, so two leaders never
// act at once. The services themselves (the lease reaper, pruning, the
// queue vacuum, …) live in internal/maintenance and elsewhere; the elector
// only decides when each may run.
package leadership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Lock is the name of the cluster lock that makes an instance leader.
const Lock = "herald.leader"

// DefaultTTL is how long a won or renewed leadership lasts by default.
const DefaultTTL = 15 * time.Second

// Locker is the part of the store leadership needs: a cluster lock with an
// owner and an expiry (store.Store's TryLock and Unlock).
type Locker interface {
	TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	Unlock(ctx context.Context, name, owner string, until time.Time) error
}

// Config configures an Elector; zero values take the documented defaults.
type Config struct {
	Locker Locker
	// Owner identifies this instance in the leader lock (required).
	Owner string
	// TTL is how long a won or renewed leadership lasts. Default
	// DefaultTTL (15 s).
	TTL time.Duration
	// RenewInterval is how often the lock is taken or renewed. Default
	// TTL/3, so two renewals may fail before leadership lapses.
	RenewInterval time.Duration
	// Services run on the leader, each on its own interval. A service
	// whose Interval is zero is disabled and never runs.
	Services []Service
	// Daemons run on the leader for its whole term (see Daemon). They
	// start only on an elector started with Start: an elector ticked by
	// hand (tests with an injected clock) runs the Services alone.
	Daemons []Daemon
	Now     func() time.Time
	Logger  *slog.Logger
}

// Elector takes and renews the leader lock and, while it holds it, runs
// the registered services in the background.
type Elector struct {
	cfg      Config
	log      *slog.Logger
	services []*scheduled

	mu          sync.Mutex
	leaderUntil time.Time // zero when not leader
	// endTerm ends the context the services of the current term run
	// with; nil between terms.
	endTerm context.CancelFunc
	term    context.Context
	running sync.WaitGroup

	// daemonsOn is set by Start; daemonUp marks the daemons running (by
	// index of cfg.Daemons), daemons waits for them. Guarded by mu.
	daemonsOn bool
	daemonUp  []bool
	daemons   sync.WaitGroup

	stop context.CancelFunc
	done chan struct{}
}

// New validates cfg and applies defaults.
func New(cfg Config) (*Elector, error) {
	if cfg.Locker == nil || cfg.Owner == "" {
		return nil, errors.New("leadership: Locker and Owner are required")
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.RenewInterval == 0 {
		cfg.RenewInterval = cfg.TTL / 3
	}
	if cfg.RenewInterval <= 0 || cfg.RenewInterval >= cfg.TTL {
		return nil, fmt.Errorf("leadership: RenewInterval %v must be positive and shorter than TTL %v", cfg.RenewInterval, cfg.TTL)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	e := &Elector{cfg: cfg, log: cfg.Logger, daemonUp: make([]bool, len(cfg.Daemons))}
	names := map[string]bool{}
	for _, d := range cfg.Daemons {
		if d == nil {
			return nil, errors.New("leadership: a nil daemon")
		}
		if names[d.Name()] {
			return nil, fmt.Errorf("leadership: two services named %q", d.Name())
		}
		names[d.Name()] = true
	}
	for _, s := range cfg.Services {
		switch {
		case s == nil:
			return nil, errors.New("leadership: a nil service")
		case names[s.Name()]:
			return nil, fmt.Errorf("leadership: two services named %q", s.Name())
		case s.Interval() < 0:
			return nil, fmt.Errorf("leadership: service %s: negative interval %v (zero disables it)", s.Name(), s.Interval())
		}
		names[s.Name()] = true
		if s.Interval() > 0 {
			e.services = append(e.services, &scheduled{Service: s})
		}
	}
	return e, nil
}

// Start takes part in the election in the background until Stop.
func (e *Elector) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	e.mu.Lock()
	e.daemonsOn = true
	e.mu.Unlock()
	e.done = make(chan struct{})
	go func() {
		defer close(e.done)
		t := time.NewTicker(e.cfg.RenewInterval)
		defer t.Stop()
		for {
			if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
				e.log.Error("leadership: cannot take or renew the leader lock", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop leaves the election, stops the running services and, if this
// instance leads, gives leadership up at once so another instance takes
// over without waiting for the TTL.
func (e *Elector) Stop(ctx context.Context) error {
	if e.stop == nil {
		return nil
	}
	e.stop()
	<-e.done
	e.stop = nil
	e.running.Wait()
	leader := e.IsLeader()
	e.stepDown()
	e.mu.Lock()
	e.daemonsOn = false
	e.mu.Unlock()
	e.daemons.Wait()
	if !leader {
		return nil
	}
	return e.cfg.Locker.Unlock(ctx, Lock, e.cfg.Owner, e.cfg.Now())
}

// IsLeader reports whether this instance holds leadership now. It turns
// false as soon as the last renewal's lock could have expired, even if the
// renewal loop is stuck, so a stalled leader never acts.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.Now().Before(e.leaderUntil)
}

// Tick runs one election round: take or renew the lock, then, as leader,
// start every service that is due and not still running, in the
// background. Tests call it directly with an injected clock, and Wait for
// the services it started.
func (e *Elector) Tick(ctx context.Context) error {
	was := e.IsLeader()
	now := e.cfg.Now()
	// The lock is held until now+TTL, but this instance only considers
	// itself leader until now+TTL-RenewInterval: a renewal that is late by
	// up to one interval can't overlap a successor.
	// A renewal is bounded by the TTL: a database that stopped answering
	// fails it (and the instance steps down) instead of holding the loop
	// forever.
	lctx, cancel := context.WithTimeout(ctx, e.cfg.TTL)
	ok, err := e.cfg.Locker.TryLock(lctx, Lock, e.cfg.Owner, now, now.Add(e.cfg.TTL))
	cancel()
	if err != nil || !ok {
		if ended := e.stepDown(); was || ended {
			e.log.Warn("leadership: stepped down as leader", "owner", e.cfg.Owner, "err", err)
		}
		return err
	}
	e.mu.Lock()
	e.leaderUntil = now.Add(e.cfg.TTL - e.cfg.RenewInterval)
	if e.endTerm == nil {
		e.term, e.endTerm = context.WithCancel(ctx)
	}
	term := e.term
	due := e.due(now)
	e.startDaemons(term)
	e.mu.Unlock()
	if !was {
		e.log.Info("leadership: elected leader", "owner", e.cfg.Owner)
	}
	for _, s := range due {
		e.running.Go(func() { e.run(term, s, now) })
	}
	return nil
}

// stepDown ends leadership and the context of the services still running,
// and reports whether a term was in progress.
func (e *Elector) stepDown() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leaderUntil = time.Time{}
	if e.endTerm == nil {
		return false
	}
	e.endTerm()
	e.term, e.endTerm = nil, nil
	return true
}

// startDaemons starts, for the term, every daemon not running. The
// caller holds e.mu.
func (e *Elector) startDaemons(term context.Context) {
	if !e.daemonsOn {
		return
	}
	for i, d := range e.cfg.Daemons {
		if e.daemonUp[i] {
			continue
		}
		e.daemonUp[i] = true
		e.daemons.Go(func() {
			defer func() {
				e.mu.Lock()
				e.daemonUp[i] = false
				e.mu.Unlock()
			}()
			d.Run(term)
		})
	}
}

// Wait waits until no service started so far is running (daemons aside:
// they run for the term). A caller that
// ticks by hand calls it between ticks, never concurrently with one.
func (e *Elector) Wait() { e.running.Wait() }
