package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/store"
)

// overviewMinutes is how far back the overview's per-minute figures go.
const overviewMinutes = 60

// overviewCodes bounds the overview's failures by error code.
const overviewCodes = 20

// Overview reads the delivery pipeline at a glance (the console's
// overview): the deliveries waiting and being sent by channel, the oldest
// due one, the dead letters and dead events, the rule runs in progress,
// how late the reminder scheduler is, and the sent and failed deliveries
// of each minute of the last hour with the failures by error code. It
// reads partial indexes and the per-minute rollup the dispatchers keep
// (Config.Rollup), never the history, so it stays cheap with millions of
// deliveries; counts stop at heraldtype.OverviewCountCap.
//
// The last hour's minutes come from the rollup, which each instance adds
// to once per Config.Rollup.FlushInterval: the current minute fills in
// as the instances flush.
func (c *Client) Overview(ctx context.Context) (heraldtype.Overview, error) {
	now := c.now().UTC()
	first := now.Truncate(time.Minute).Add(-(overviewMinutes - 1) * time.Minute)
	o, err := c.store.Overview(ctx, store.OverviewParams{Now: now, Since: first,
		Cap: heraldtype.OverviewCountCap, MaxCodes: overviewCodes})
	if err != nil {
		return heraldtype.Overview{}, err
	}
	o.At = now
	o.Minutes = fillMinutes(o.Minutes, first, overviewMinutes)
	if o.Queue == nil {
		o.Queue = []heraldtype.QueueCount{}
	}
	if o.FailuresByCode == nil {
		o.FailuresByCode = []heraldtype.CodeCount{}
	}
	return o, nil
}

// fillMinutes returns n minutes from first, with the counts of those the
// rollup had and zero for the others.
func fillMinutes(have []heraldtype.MinuteCount, first time.Time, n int) []heraldtype.MinuteCount {
	byMinute := make(map[int64]heraldtype.MinuteCount, len(have))
	for _, m := range have {
		byMinute[m.Minute.Unix()] = m
	}
	out := make([]heraldtype.MinuteCount, n)
	for i := range out {
		at := first.Add(time.Duration(i) * time.Minute)
		m := byMinute[at.Unix()]
		m.Minute = at
		out[i] = m
	}
	return out
}

// DefaultRollupInterval is how often each instance adds what it counted
// to the delivery rollup unless WorkerConfig.RollupInterval says
// otherwise.
const DefaultRollupInterval = dispatch.DefaultRollupInterval

// DefaultRollupRetention is how long the delivery rollup's minutes are
// kept unless WorkerConfig.RollupRetention says otherwise: the overview
// reads the last hour; a day leaves room to look back.
const DefaultRollupRetention = 24 * time.Hour
