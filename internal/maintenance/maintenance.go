// Package maintenance runs the cluster-wide housekeeping of Herald on one
// elected leader: the lease reaper, device pruning, expiry of idempotency
// records and retention of finished notifications. Leadership is a cluster
// lock in the store, renewed well before it runs out; a leader that cannot
// renew steps down before its lock could be taken by another instance, so
// two leaders never act at once (River's internal/leadership idea).
//
// It also offers RunLocked, the ShedLock-style lock (lock at most / lock at
// least) that scheduled jobs use so that one instance runs them (S3.7).
package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
)

// LeaderLock is the name of the cluster lock that makes an instance leader.
const LeaderLock = "herald.leader"

// Store is the part of store.Store maintenance uses.
type Store interface {
	TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	Unlock(ctx context.Context, name, owner string, until time.Time) error
	ReapExpiredLeases(ctx context.Context, now time.Time) (store.ReapResult, error)
	PruneDevices(ctx context.Context, cutoff time.Time) (int, error)
	PruneTriggers(ctx context.Context, cutoff time.Time) (int, error)
	PruneFinished(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

var _ Store = store.Store(nil)

// PolicyPruner deletes the delivery policy's expired dedupe locks and
// daily counts (the SQL policy store; Redis expires its keys itself).
type PolicyPruner interface {
	PrunePolicy(ctx context.Context, now time.Time) (int, error)
}

var _ PolicyPruner = store.Store(nil)

// Config configures the Service; zero values take the documented defaults.
type Config struct {
	Store Store
	// Owner identifies this instance in the leader lock (required).
	Owner string
	// LeaderTTL is how long a won or renewed leadership lasts. Default 15 s.
	LeaderTTL time.Duration
	// RenewInterval is how often the lock is taken or renewed. Default
	// LeaderTTL/3, so two renewals may fail before leadership lapses.
	RenewInterval time.Duration
	// ReapInterval is how often the leader reclaims expired leases.
	// Default 5 s.
	ReapInterval time.Duration
	// PruneInterval is how often the leader prunes. Default 1 h.
	PruneInterval time.Duration
	// DeviceMaxAge prunes devices not seen for this long (0: never).
	DeviceMaxAge time.Duration
	// IdempotencyRetention expires idempotency records (0: never).
	IdempotencyRetention time.Duration
	// Retention deletes notifications finished this long ago (0: never).
	Retention time.Duration
	// Policy, when set, is pruned of expired policy rows on every prune.
	Policy PolicyPruner
	// Vacuum, when set, is asked every VacuumInterval whether the queue
	// needs vacuuming (store.QueueVacuumer), in the background so a long
	// VACUUM never delays a leadership renewal.
	Vacuum store.QueueVacuumer
	// VacuumInterval is how often the leader asks. Default 10 s.
	VacuumInterval time.Duration
	Now            func() time.Time
	Logger         *slog.Logger
	Metrics        *metrics.Metrics
}

// pruneBatch bounds one retention delete so a large backlog is removed in
// short transactions that never hold the database for long.
const pruneBatch = 1000

// Service is the leader-elected maintenance loop.
type Service struct {
	cfg Config
	log *slog.Logger

	mu          sync.Mutex
	leaderUntil time.Time // zero when not leader
	lastReap    time.Time
	lastPrune   time.Time
	lastVacuum  time.Time
	vacuuming   bool
	background  sync.WaitGroup

	stop context.CancelFunc
	done chan struct{}
}

// New validates cfg and applies defaults.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Owner == "" {
		return nil, errors.New("maintenance: Store and Owner are required")
	}
	if cfg.LeaderTTL == 0 {
		cfg.LeaderTTL = 15 * time.Second
	}
	if cfg.RenewInterval == 0 {
		cfg.RenewInterval = cfg.LeaderTTL / 3
	}
	if cfg.RenewInterval <= 0 || cfg.RenewInterval >= cfg.LeaderTTL {
		return nil, fmt.Errorf("maintenance: RenewInterval %v must be positive and shorter than LeaderTTL %v", cfg.RenewInterval, cfg.LeaderTTL)
	}
	if cfg.ReapInterval == 0 {
		cfg.ReapInterval = 5 * time.Second
	}
	if cfg.PruneInterval == 0 {
		cfg.PruneInterval = time.Hour
	}
	if cfg.VacuumInterval == 0 {
		cfg.VacuumInterval = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New(nil)
	}
	return &Service{cfg: cfg, log: cfg.Logger}, nil
}

// Start runs the loop in the background until Stop.
func (s *Service) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.RenewInterval)
		defer t.Stop()
		for {
			if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("maintenance failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the loop and, if this instance leads, gives leadership up at
// once so another instance takes over without waiting for the TTL.
func (s *Service) Stop(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	s.stop()
	<-s.done
	s.background.Wait()
	s.stop = nil
	if !s.IsLeader() {
		return nil
	}
	s.setLeader(time.Time{})
	return s.cfg.Store.Unlock(ctx, LeaderLock, s.cfg.Owner, s.cfg.Now())
}

// IsLeader reports whether this instance holds leadership now. It turns
// false as soon as the last renewal's lock could have expired, even if the
// renewal loop is stuck, so a stalled leader never acts.
func (s *Service) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Now().Before(s.leaderUntil)
}

func (s *Service) setLeader(until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leaderUntil = until
}

// Tick runs one cycle: take or renew leadership, then, as leader, reap and
// prune when they are due. Tests call it directly with an injected clock.
func (s *Service) Tick(ctx context.Context) error {
	was := s.IsLeader()
	now := s.cfg.Now()
	// The lock is held until now+TTL, but this instance only considers
	// itself leader until now+TTL-RenewInterval: a renewal that is late by
	// up to one interval can't overlap a successor.
	// A renewal, like a reap, is bounded by the TTL: a database that
	// stopped answering fails it (and the instance steps down) instead of
	// holding the loop forever.
	lctx, cancel := context.WithTimeout(ctx, s.cfg.LeaderTTL)
	ok, err := s.cfg.Store.TryLock(lctx, LeaderLock, s.cfg.Owner, now, now.Add(s.cfg.LeaderTTL))
	cancel()
	if err != nil || !ok {
		s.setLeader(time.Time{})
		if was {
			s.log.Warn("maintenance: stepped down as leader", "owner", s.cfg.Owner, "err", err)
		}
		return err
	}
	s.setLeader(now.Add(s.cfg.LeaderTTL - s.cfg.RenewInterval))
	if !was {
		s.log.Info("maintenance: elected leader", "owner", s.cfg.Owner)
	}
	return s.leaderWork(ctx, now)
}

func (s *Service) leaderWork(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	reap := now.Sub(s.lastReap) >= s.cfg.ReapInterval
	prune := now.Sub(s.lastPrune) >= s.cfg.PruneInterval
	vacuum := s.cfg.Vacuum != nil && !s.vacuuming && now.Sub(s.lastVacuum) >= s.cfg.VacuumInterval
	if vacuum {
		s.vacuuming, s.lastVacuum = true, now
	}
	s.mu.Unlock()
	if vacuum {
		s.background.Go(func() {
			defer func() {
				s.mu.Lock()
				s.vacuuming = false
				s.mu.Unlock()
			}()
			if err := s.VacuumQueue(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("maintenance failed", "err", err)
			}
		})
	}
	var errs []error
	if reap {
		if err := s.reap(ctx, now); err != nil {
			errs = append(errs, err)
		} else {
			s.mu.Lock()
			s.lastReap = now
			s.mu.Unlock()
		}
	}
	if prune && s.IsLeader() {
		if err := s.prune(ctx, now); err != nil {
			errs = append(errs, err)
		} else {
			s.mu.Lock()
			s.lastPrune = now
			s.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// VacuumQueue asks the store to vacuum its queue if it needs it, once.
func (s *Service) VacuumQueue(ctx context.Context) error {
	if s.cfg.Vacuum == nil {
		return nil
	}
	start := time.Now()
	did, err := s.cfg.Vacuum.VacuumQueue(ctx)
	if err != nil {
		return fmt.Errorf("vacuum queue: %w", err)
	}
	if did {
		s.log.Info("maintenance: vacuumed the queue", "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// reap reclaims deliveries whose worker died mid-send (S4.2, S1.3).
func (s *Service) reap(ctx context.Context, now time.Time) error {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.LeaderTTL)
	defer cancel()
	r, err := s.cfg.Store.ReapExpiredLeases(rctx, now)
	if err != nil {
		return fmt.Errorf("reap expired leases: %w", err)
	}
	s.cfg.Metrics.Requeued.Add(float64(r.Requeued))
	s.cfg.Metrics.Unknown.Add(float64(r.Unknown))
	if r.Requeued > 0 || r.Unknown > 0 {
		s.log.Warn("maintenance: reclaimed expired leases", "requeued", r.Requeued, "unknown", r.Unknown)
	}
	return nil
}

// PruneResult counts what one prune removed.
type PruneResult struct {
	Devices, Triggers, Notifications int
	// Policy counts expired dedupe locks and daily counts deleted.
	Policy int
}

func (s *Service) prune(ctx context.Context, now time.Time) error {
	r, err := s.Prune(ctx, now)
	if r != (PruneResult{}) {
		s.log.Info("maintenance: pruned", "devices", r.Devices, "idempotency_records", r.Triggers, "notifications", r.Notifications,
			"policy_rows", r.Policy)
	}
	return err
}

// Prune removes stale devices (S0.2 token hygiene: FCM drops tokens idle
// for 270 days), expired idempotency records and finished notifications
// past retention, once.
func (s *Service) Prune(ctx context.Context, now time.Time) (PruneResult, error) {
	var r PruneResult
	var err error
	if s.cfg.DeviceMaxAge > 0 {
		if r.Devices, err = s.cfg.Store.PruneDevices(ctx, now.Add(-s.cfg.DeviceMaxAge)); err != nil {
			return r, fmt.Errorf("prune devices: %w", err)
		}
	}
	if s.cfg.IdempotencyRetention > 0 {
		if r.Triggers, err = s.cfg.Store.PruneTriggers(ctx, now.Add(-s.cfg.IdempotencyRetention)); err != nil {
			return r, fmt.Errorf("prune idempotency records: %w", err)
		}
	}
	if s.cfg.Policy != nil {
		if r.Policy, err = s.cfg.Policy.PrunePolicy(ctx, now); err != nil {
			return r, fmt.Errorf("prune policy locks and counts: %w", err)
		}
	}
	if s.cfg.Retention > 0 {
		for ctx.Err() == nil {
			n, err := s.cfg.Store.PruneFinished(ctx, now.Add(-s.cfg.Retention), pruneBatch)
			r.Notifications += n
			if err != nil {
				return r, fmt.Errorf("prune finished notifications: %w", err)
			}
			if n < pruneBatch {
				break
			}
		}
	}
	return r, ctx.Err()
}
