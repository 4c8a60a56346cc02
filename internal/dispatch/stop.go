package dispatch

import (
	"log/slog"
	"sync/atomic"

	"github.com/heraldhq/herald/store"
)

// stopCounts is what a stop did with the sends in flight when it began
// (issue 22 item 7), for the log line that ends it: an operator who
// pressed Ctrl-C learns whether anything was cut short and what happens
// to it.
type stopCounts struct {
	// draining is set when the stop begins; only sends that end after it
	// are counted.
	draining atomic.Bool
	// finished sends ended with an outcome (sent, retried, dead, …);
	// returned deliveries were handed back to the queue unsent (a throttle
	// wait the stop cut short, store.Released); abandoned sends were cut
	// short by the stop's deadline, or lost their lease, and have no
	// outcome: when the lease expires the reaper returns an at_least_once
	// delivery to the queue and marks an at_most_once one unknown (S1.3).
	finished, returned, abandoned atomic.Int64
}

// count classifies one ended send while the stop drains: o is its outcome,
// recorded reports whether there is one.
func (c *stopCounts) count(o *store.Outcome, recorded bool) {
	if !c.draining.Load() {
		return
	}
	switch _, released := o.Transition().(store.Released); {
	case !recorded:
		c.abandoned.Add(1)
	case released:
		c.returned.Add(1)
	default:
		c.finished.Add(1)
	}
}

// log writes the stop's last line: what became of the sends that were in
// flight, and whether every outcome was recorded (flushErr, what Stop
// returns).
func (c *stopCounts) log(log *slog.Logger, flushErr error) {
	args := []any{"sends_finished", c.finished.Load(), "returned_to_queue", c.returned.Load(),
		"left_to_lease_reaper", c.abandoned.Load()}
	if flushErr != nil {
		log.Error("dispatch: stopped; some outcomes could not be recorded and are left to the lease reaper",
			append(args, "err", flushErr)...)
		return
	}
	log.Info("dispatch: stopped", args...)
}
