package maintenance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Locker is the part of the store a cluster lock needs.
type Locker interface {
	TryLock(ctx context.Context, name, owner string, now, until time.Time) (bool, error)
	Unlock(ctx context.Context, name, owner string, until time.Time) error
}

// ErrLocked reports that another instance holds the lock (or held it
// within its lock-at-least window), so fn did not run.
var ErrLocked = errors.New("maintenance: lock held elsewhere")

// RunLocked runs fn on at most one instance of the cluster at a time, the
// way ShedLock does for scheduled jobs (S3.7: a daily job locked at most
// 1 h and at least 5 min):
//
//   - the lock is taken until now+atMost, so a crashed holder blocks others
//     for at most that long;
//   - fn's context ends at now+atMost, so fn never outlives the lock;
//   - on return the lock is kept until lockedAt+atLeast (or released at
//     once if that has passed), so instances whose clocks or schedules
//     differ slightly do not run the job a second time.
//
// It returns ErrLocked if another instance holds the lock.
func RunLocked(ctx context.Context, l Locker, owner, name string, now func() time.Time, atMost, atLeast time.Duration, fn func(context.Context) error) error {
	if atMost <= 0 || atLeast < 0 || atLeast > atMost {
		return fmt.Errorf("maintenance: lock %q: need 0 <= lock-at-least (%v) <= lock-at-most (%v) and lock-at-most > 0", name, atLeast, atMost)
	}
	lockedAt := now()
	ok, err := l.TryLock(ctx, name, owner, lockedAt, lockedAt.Add(atMost))
	if err != nil {
		return fmt.Errorf("maintenance: lock %q: %w", name, err)
	}
	if !ok {
		return ErrLocked
	}
	runCtx, cancel := context.WithTimeout(ctx, atMost)
	fnErr := fn(runCtx)
	cancel()
	until := lockedAt.Add(atLeast)
	if t := now(); t.After(until) {
		until = t
	}
	// The unlock must happen even if ctx was cancelled meanwhile.
	if err := l.Unlock(context.WithoutCancel(ctx), name, owner, until); err != nil {
		return errors.Join(fnErr, fmt.Errorf("maintenance: unlock %q: %w", name, err))
	}
	return fnErr
}
