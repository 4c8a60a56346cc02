package policy

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Prefetch does, once for a claimed batch, what Check would otherwise do
// per delivery with a round trip each: it reads the preferences of every
// user of jobs in one call and, when the Limiter is a BatchLimiter, counts
// the batch's daily caps in one call, as of now. jobs are the deliveries
// that will reach the policy (the caller leaves out one it will not send
// whatever the policy says, which must not spend a slot of the cap); their
// delivery ids are distinct, as a claim's are.
//
// A delivery is counted here only when every step before the cap is
// decided without a write: its preferences were read, they and quiet
// hours let it through, and it has no dedupe key (de-duplication takes a
// lock, and a duplicate must never spend a slot). Its decision is then
// taken as of now, the claim's time, and Check returns it; every other
// delivery is decided by Check as before, and counts on its own. The
// counts are made in the order of jobs, so of two notifications of one
// user at the edge of the cap the first is sent and the second blocked.
//
// An error leaves Check to do what failed on its own: a failed preference
// read returns nothing, a failed count returns the preferences.
func (e *Engine) Prefetch(ctx context.Context, jobs []heraldtype.Job, now time.Time) (*Prefetched, error) {
	seen := make(map[string]bool, len(jobs))
	ids := make([]string, 0, len(jobs))
	for i := range jobs {
		if n := jobs[i].Notification; n != nil && !seen[n.UserID] {
			seen[n.UserID] = true
			ids = append(ids, n.UserID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	prefs, err := e.cfg.Source.GetPreferencesMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("policy: preferences: %w", err)
	}
	pre := &Prefetched{Preferences: prefs}
	bl, ok := e.cfg.Limiter.(BatchLimiter)
	if !ok {
		return pre, nil
	}
	var counts []heraldtype.DailyCount
	var counted []int // the index in jobs of each count
	var locs []*time.Location
	for i := range jobs {
		c, loc, ok := e.batchCount(ctx, &jobs[i], pre, now)
		if ok {
			counts, counted, locs = append(counts, c), append(counted, i), append(locs, loc)
		}
	}
	if len(counts) == 0 {
		return pre, nil
	}
	oks, err := bl.CountDailyBatch(ctx, counts)
	if err != nil {
		return pre, fmt.Errorf("policy: daily cap: %w", err)
	}
	pre.decided = make(map[int64]Decision, len(counts))
	for k, ok := range oks {
		d := Decision{Verdict: Allow}
		if !ok {
			d = capReached(counts[k], locs[k])
		}
		pre.decided[jobs[counted[k]].Delivery.ID] = d
	}
	return pre, nil
}

// batchCount is the daily count of job, and its user's time zone, when
// Prefetch may count it (see there): every step before the cap is decided
// without a write and lets it through, and the cap applies.
func (e *Engine) batchCount(ctx context.Context, job *heraldtype.Job, pre *Prefetched, now time.Time) (heraldtype.DailyCount, *time.Location, bool) {
	n := job.Notification
	if n == nil || n.DedupeKey != "" {
		return heraldtype.DailyCount{}, nil, false
	}
	prefs, ok := pre.preferences(n.UserID)
	if !ok {
		return heraldtype.DailyCount{}, nil, false
	}
	// An error here is Check's to report: it runs the same steps again.
	s, _, done, err := e.screen(ctx, job, prefs, now)
	if err != nil || done {
		return heraldtype.DailyCount{}, nil, false
	}
	c, capped := e.dailyCount(&s, now)
	return c, s.loc, capped
}
