package dispatch

import (
	"context"
	"sync"
	"time"
)

// flight is a claimed delivery this worker is still working on.
type flight struct {
	leaseUntil time.Time
	// lost is set when the store refused to extend the lease: another
	// worker or the reaper has the delivery, so this worker must not start
	// its send, and an outcome it records is ignored by the store.
	lost bool
}

// flights tracks the leases of in-flight deliveries for the heartbeat.
type flights struct {
	mu sync.Mutex
	m  map[int64]*flight
}

func newFlights() *flights { return &flights{m: make(map[int64]*flight)} }

func (f *flights) add(id int64, leaseUntil time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[id] = &flight{leaseUntil: leaseUntil}
}

func (f *flights) remove(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, id)
}

// lease returns the current end of a delivery's lease and whether it was
// lost.
func (f *flights) lease(id int64) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[id]
	if !ok {
		return time.Time{}, true
	}
	return fl.leaseUntil, fl.lost
}

// due returns the deliveries whose lease is past half-life at now.
func (f *flights) due(now time.Time, half time.Duration) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []int64
	for id, fl := range f.m {
		if !fl.lost && fl.leaseUntil.Sub(now) <= half {
			ids = append(ids, id)
		}
	}
	return ids
}

// extended records the result of ExtendLeases: the ids in got now hold their
// lease until until; the other asked ids are lost. It returns the lost ids.
func (f *flights) extended(asked, got []int64, until time.Time) []int64 {
	ok := make(map[int64]bool, len(got))
	for _, id := range got {
		ok[id] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var lost []int64
	for _, id := range asked {
		fl, inFlight := f.m[id]
		if !inFlight {
			continue // finished meanwhile; its outcome decides
		}
		if ok[id] {
			fl.leaseUntil = until
			continue
		}
		fl.lost = true
		lost = append(lost, id)
	}
	return lost
}

func (f *flights) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.m)
}

// heartbeat extends, in one ExtendLeases call, the leases of in-flight
// deliveries that are past half-life, so a slow send (or one waiting on a
// throttled provider) is not reaped and sent twice.
func (w *Worker) heartbeat(ctx context.Context) {
	now := w.cfg.Now()
	ids := w.flights.due(now, w.cfg.LeaseDuration/2)
	if len(ids) == 0 {
		return
	}
	until := now.Add(w.cfg.LeaseDuration)
	ectx, cancel := w.storeCtx(ctx)
	defer cancel()
	got, err := w.cfg.Store.ExtendLeases(ectx, w.cfg.Owner, ids, until)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("dispatch: extending leases failed; retrying next beat", "deliveries", len(ids), "err", err)
		}
		return
	}
	for _, id := range w.flights.extended(ids, got, until) {
		w.log.Warn("dispatch: lease lost; the delivery's outcome will be ignored", "delivery_id", id, "owner", w.cfg.Owner)
	}
}

// heartbeatLoop beats four times per lease, so a lease is extended after
// half of it has passed and well before it ends.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.LeaseDuration / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.heartbeat(ctx)
		}
	}
}
