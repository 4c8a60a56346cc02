package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// DefaultRollupInterval is how often the worker adds what it counted to
// the delivery rollup unless Config.RollupInterval says otherwise: the
// overview's last minute is this late at most, and the store gets one
// small write per interval and instance, whatever the throughput.
const DefaultRollupInterval = 30 * time.Second

// maxRollupKeys bounds the counts held between flushes (minutes ×
// channels × outcomes × codes). Past it a new error code is counted as
// "other": a provider answering with ever new codes cannot grow memory,
// and a database that refuses the flush for long keeps the counts
// bounded too.
const maxRollupKeys = 4096

// rollupOther is the code of the failures counted past maxRollupKeys.
const rollupOther = "other"

// rollup counts the outcomes the worker decided, per minute, channel,
// outcome and error code, in memory, and adds them to the store's
// delivery rollup once per interval (store.AddDeliveryMinutes). It is
// what the console's overview reads instead of counting deliveries: the
// hot path pays a map increment per outcome, never a write.
type rollup struct {
	mu     sync.Mutex
	counts map[rollupKey]int64
}

type rollupKey struct {
	minute  int64 // Unix seconds of the minute
	channel heraldtype.Channel
	outcome store.RollupOutcome
	code    string
}

func newRollup() *rollup { return &rollup{counts: map[rollupKey]int64{}} }

// record counts o, the outcome of a delivery of channel ch. Only attempts
// count: a send accepted (or an inbox item written) is sent; a failure,
// retried or not, is failed; the policy's decisions and released leases
// are not attempts.
func (r *rollup) record(ch heraldtype.Channel, o *store.Outcome) {
	var outcome store.RollupOutcome
	code := ""
	switch o.Transition().(type) {
	case store.Sent, store.InboxSent:
		outcome = store.RollupSent
	case store.Retry, store.Dead, store.Unknown:
		outcome, code = store.RollupFailed, o.Row().ErrorCode
	default:
		return
	}
	k := rollupKey{minute: o.At.Unix() / 60 * 60, channel: ch, outcome: outcome, code: code}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.counts[k]; !ok && len(r.counts) >= maxRollupKeys && k.code != "" {
		k.code = rollupOther
	}
	r.counts[k]++
}

// take removes and returns every count as rows.
func (r *rollup) take() []store.DeliveryMinute {
	r.mu.Lock()
	counts := r.counts
	r.counts = map[rollupKey]int64{}
	r.mu.Unlock()
	rows := make([]store.DeliveryMinute, 0, len(counts))
	for k, n := range counts {
		rows = append(rows, store.DeliveryMinute{Minute: time.Unix(k.minute, 0).UTC(), Channel: k.channel,
			Outcome: k.outcome, ErrorCode: k.code, Count: n})
	}
	return rows
}

// putBack returns rows a flush could not write, to go with the next one.
func (r *rollup) putBack(rows []store.DeliveryMinute) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range rows {
		k := rollupKey{minute: row.Minute.Unix(), channel: row.Channel, outcome: row.Outcome, code: row.ErrorCode}
		if _, ok := r.counts[k]; !ok && len(r.counts) >= maxRollupKeys && k.code != "" {
			k.code = rollupOther
		}
		r.counts[k] += row.Count
	}
}

// flushRollup adds the counts to the store; on failure they are kept for
// the next flush.
func (w *Worker) flushRollup(ctx context.Context) error {
	rows := w.rollup.take()
	if len(rows) == 0 {
		return nil
	}
	sctx, cancel := w.storeCtx(ctx)
	defer cancel()
	if err := w.cfg.Store.AddDeliveryMinutes(sctx, w.cfg.Owner, rows); err != nil {
		w.rollup.putBack(rows)
		return err
	}
	return nil
}

// rollupLoop flushes the rollup every RollupInterval until ctx ends. A
// failed flush is logged and its counts go with the next one.
func (w *Worker) rollupLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.RollupInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := w.flushRollup(ctx); err != nil && ctx.Err() == nil {
				w.log.Warn("dispatch: adding to the delivery rollup failed; its counts go with the next flush", "err", err)
			}
		}
	}
}

// finalRollup is the last flush when the worker stops, bounded like the
// outcomes' last flush. Counts it cannot write are lost: the overview's
// chart misses them, nothing else does.
func (w *Worker) finalRollup(ctx context.Context) {
	if w.cfg.RollupInterval < 0 {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), finalFlushTimeout)
		defer cancel()
	}
	if err := w.flushRollup(ctx); err != nil {
		w.log.Warn("dispatch: the last addition to the delivery rollup failed; the overview's chart misses it", "err", err)
	}
}
