package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/internal/leadership"
)

// Pruner is a leader service that deletes what has aged out: one store call
// that removes the rows expired at now and counts them. The four pruners
// (devices, idempotency records, policy rows, finished notifications) are
// each one constructor over it, in a file of its own.
type Pruner struct {
	name     string // the service's name
	counted  string // the key the run's count is logged under
	subject  string // what a failed prune names
	interval time.Duration
	prune    func(ctx context.Context, now time.Time) (int, error)
}

var _ leadership.Service = (*Pruner)(nil)

// agePruner prunes what is older than age (cutoff = now − age) with prune.
// A zero or negative age disables it: it never runs on the leader, and a
// Prune call deletes nothing.
func agePruner(name, counted, subject string, interval, age time.Duration,
	prune func(ctx context.Context, cutoff time.Time) (int, error)) *Pruner {
	return &Pruner{name: name, counted: counted, subject: subject, interval: enabledEvery(interval, age),
		prune: func(ctx context.Context, now time.Time) (int, error) {
			if age <= 0 {
				return 0, nil
			}
			return prune(ctx, now.Add(-age))
		}}
}

// Name implements leadership.Service.
func (p *Pruner) Name() string { return p.name }

// Interval implements leadership.Service.
func (p *Pruner) Interval() time.Duration { return p.interval }

// RunOnce implements leadership.Service.
func (p *Pruner) RunOnce(ctx context.Context, now time.Time) (leadership.Result, error) {
	n, err := p.Prune(ctx, now)
	return leadership.Result{Counts: map[string]int{p.counted: n}}, err
}

// Prune deletes what has expired at now, once, whatever the interval, and
// counts it.
func (p *Pruner) Prune(ctx context.Context, now time.Time) (int, error) {
	n, err := p.prune(ctx, now)
	if err != nil {
		return n, fmt.Errorf("prune %s: %w", p.subject, err)
	}
	return n, nil
}

// enabledEvery is a pruner's interval: zero (disabled) when either the
// interval or the age it prunes at is zero or negative.
func enabledEvery(interval, age time.Duration) time.Duration {
	if interval <= 0 || age <= 0 {
		return 0
	}
	return interval
}

// pruneBatch bounds one delete of a batched pruner, so a large backlog is
// removed in short transactions that never hold the database for long.
const pruneBatch = 1000

// batched prunes with prune in batches of pruneBatch until a batch comes
// back short.
func batched(prune func(ctx context.Context, cutoff time.Time, limit int) (int, error)) func(context.Context, time.Time) (int, error) {
	return func(ctx context.Context, cutoff time.Time) (int, error) {
		total := 0
		for ctx.Err() == nil {
			n, err := prune(ctx, cutoff, pruneBatch)
			total += n
			if err != nil || n < pruneBatch {
				return total, err
			}
		}
		return total, ctx.Err()
	}
}
