package policy

import (
	"context"
	"fmt"
	"sync"
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
// A delivery is counted here only when its preferences were read, they
// and quiet hours let it through, and the cap applies; one with a dedupe
// key takes its lock first (the batch's locks at once, before any count:
// a duplicate never spends a slot) and is counted only if it holds it.
// Its decision is then taken as of now, the claim's time, and Check
// returns it; every other delivery is decided by Check as before. The
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
	cands := e.batchCandidates(ctx, jobs, pre, now)
	pre.decided = make(map[int64]Decision, len(cands))
	e.dedupeBatch(ctx, cands, pre, now)
	var counts []heraldtype.DailyCount
	var counted []*candidate
	for _, c := range cands {
		if !c.drop {
			counts, counted = append(counts, c.count), append(counted, c)
		}
	}
	if len(counts) == 0 {
		return pre, nil
	}
	oks, err := bl.CountDailyBatch(ctx, counts)
	if err != nil {
		return pre, fmt.Errorf("policy: daily cap: %w", err)
	}
	for k, ok := range oks {
		d := Decision{Verdict: Allow}
		if !ok {
			d = capReached(counts[k], counted[k].s.loc)
		}
		pre.decided[counted[k].id] = d
	}
	return pre, nil
}

// candidate is a delivery Prefetch may count: every step before the cap
// lets it through without a write, and the cap applies.
type candidate struct {
	id    int64
	s     subject
	count heraldtype.DailyCount
	// drop: not counted by the batch (its dedupe lock was refused, which
	// decided it, or failed, which leaves it to Check).
	drop bool
}

// batchCandidates are the deliveries of jobs Prefetch may count, in order.
func (e *Engine) batchCandidates(ctx context.Context, jobs []heraldtype.Job, pre *Prefetched, now time.Time) []*candidate {
	var out []*candidate
	for i := range jobs {
		n := jobs[i].Notification
		if n == nil {
			continue
		}
		// A type the cap does not apply to is Check's alone: screening it
		// here would only be done twice (every trigger of an uncapped
		// type, the common case).
		if t, err := e.cfg.Types.Type(ctx, n.Type); err != nil || !t.CountsTowardCapFor(n.Source) {
			continue
		}
		prefs, ok := pre.preferences(n.UserID)
		if !ok {
			continue
		}
		// An error here is Check's to report: it runs the same steps again.
		s, _, done, err := e.screen(ctx, &jobs[i], prefs, now)
		if err != nil || done {
			continue
		}
		if c, capped := e.dailyCount(&s, now); capped {
			out = append(out, &candidate{id: jobs[i].Delivery.ID, s: s, count: c})
		}
	}
	return out
}

// maxDedupeInFlight bounds the dedupe locks a batch takes at once.
const maxDedupeInFlight = 8

// dedupeBatch takes the dedupe locks of the candidates that have a dedupe
// key before any is counted (a duplicate never spends a slot): one round
// trip per key, up to maxDedupeInFlight keys concurrently; the candidates
// of one key in batch order, so the first of them wins. A refused lock
// decides its delivery (duplicate); a failed one leaves it to Check,
// uncounted.
func (e *Engine) dedupeBatch(ctx context.Context, cands []*candidate, pre *Prefetched, now time.Time) {
	if bl, ok := e.cfg.Limiter.(DedupeBatchLimiter); ok {
		e.dedupeAtOnce(ctx, bl, cands, pre, now)
		return
	}
	byKey := map[string][]*candidate{}
	var keys []string
	for _, c := range cands {
		if n := c.s.n; n.DedupeKey != "" {
			k := DedupeKey(n.UserID, n.Type, n.DedupeKey)
			if byKey[k] == nil {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], c)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	// At most maxDedupeInFlight keys at once: each holds a store
	// connection for its round trip, and a batch of a thousand distinct
	// keys must not take the pool from the claims and outcomes.
	slots := make(chan struct{}, maxDedupeInFlight)
	for _, k := range keys {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			for _, c := range byKey[k] {
				d, ok, err := e.dedupe(ctx, &c.s, now)
				if ok {
					continue
				}
				c.drop = true
				if err == nil {
					mu.Lock()
					pre.decided[c.id] = d
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// dedupeAtOnce is dedupeBatch in one call of a DedupeBatchLimiter: the
// candidates' locks in batch order, so of two notifications with one key
// the first wins. A failed call leaves every candidate with a key to
// Check, uncounted.
func (e *Engine) dedupeAtOnce(ctx context.Context, bl DedupeBatchLimiter, cands []*candidate, pre *Prefetched, now time.Time) {
	var locks []heraldtype.DedupeLock
	var keyed []*candidate
	for _, c := range cands {
		if c.s.n.DedupeKey != "" {
			locks, keyed = append(locks, dedupeLock(&c.s)), append(keyed, c)
		}
	}
	if len(locks) == 0 {
		return
	}
	oks, err := bl.AcquireDedupeBatch(ctx, locks, now)
	if err != nil || len(oks) != len(keyed) {
		for _, c := range keyed {
			c.drop = true
		}
		return
	}
	for k, ok := range oks {
		if !ok {
			keyed[k].drop = true
			pre.decided[keyed[k].id] = duplicate(&keyed[k].s)
		}
	}
}
