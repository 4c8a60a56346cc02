package bench

import (
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// workerForTests polls often so a test never waits on the 1 s default.
func workerForTests() herald.WorkerConfig {
	return herald.WorkerConfig{PollInterval: 20 * time.Millisecond}
}

// fastRetry retries temporary failures within milliseconds.
func fastRetry() map[heraldtype.ErrorClass]herald.RetryPolicy {
	return map[heraldtype.ErrorClass]herald.RetryPolicy{
		heraldtype.ClassTemporary: {Base: 10 * time.Millisecond, Factor: 2, Max: 50 * time.Millisecond, Jitter: true},
	}
}
