package webhook

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The stream: the events of the log past an endpoint's cursor (issue 35
// item 5; store/webhookstream.go, docs/ARCHITECTURE.md "The event log").
// A stream's batch is sent at once, one ordering key's events one after
// another; what it came to is one store write: the cursor moved past the
// batch, and only the events that need a retry copied into the retry
// table.

// maxKeyRun bounds one ordering key's events in a stream batch: they are
// sent one after another, so the stream's lease (streamLease) must outlast
// that many sends. A batch is cut before the event that would exceed it;
// the rest is read again by the next batch.
const maxKeyRun = 4

// streamLease is how long a stream claim holds its endpoint: a key's run
// of sends, each bounded by Timeout, and the time to record the batch.
func (d *Dispatcher) streamLease() time.Duration { return maxKeyRun*d.cfg.Timeout + 15*time.Second }

// Stream is what the Dispatcher needs of the store for the log.
type Stream interface {
	ClaimWebhookStream(ctx context.Context, p store.WebhookStreamClaim) (*store.WebhookStream, error)
	AdvanceWebhookStream(ctx context.Context, a store.WebhookStreamAdvance) (applied, disabled bool, err error)
}

// claimStreams claims endpoints' streams while this instance has room,
// marks each endpoint busy and starts its batch's sends; it returns how
// many events it took.
func (d *Dispatcher) claimStreams(ctx context.Context, wg *sync.WaitGroup) (int, error) {
	taken := 0
	for {
		d.flightMu.Lock()
		room := min(d.cfg.BatchSize-d.inFlight, d.cfg.MaxInFlightPerEndpoint)
		skip := make([]string, 0, len(d.busy))
		for e := range d.busy {
			skip = append(skip, e)
		}
		d.flightMu.Unlock()
		if room <= 0 {
			return taken, nil
		}
		now := d.cfg.Now()
		cctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
		st, err := d.cfg.Store.ClaimWebhookStream(cctx, store.WebhookStreamClaim{Owner: d.cfg.Owner, Now: now,
			LeaseUntil: now.Add(d.streamLease()), Limit: room, Skip: skip})
		cancel()
		if err != nil || st == nil {
			return taken, err
		}
		st.Events = cutKeyRuns(st.Events)
		d.flightMu.Lock()
		d.busy[st.EndpointID] += len(st.Events)
		d.inFlight += len(st.Events)
		d.flightMu.Unlock()
		taken += len(st.Events)
		sctx := context.WithoutCancel(ctx)
		d.sending.Add(1)
		wg.Go(func() {
			defer d.sending.Done()
			d.sendStream(sctx, st)
		})
	}
}

// cutKeyRuns ends the batch before the first event that would make its
// key's run longer than maxKeyRun.
func cutKeyRuns(events []store.WebhookLogEvent) []store.WebhookLogEvent {
	runs := map[string]int{}
	for i, e := range events {
		if runs[e.OrderingKey]++; runs[e.OrderingKey] > maxKeyRun {
			return events[:i]
		}
	}
	return events
}

// streamResult is what became of one event of a batch.
type streamResult int

const (
	streamSent   streamResult = iota
	streamFailed              // its send failed
	streamHeld                // an earlier event of its key waits in the retry table, or failed in this batch
)

// sendStream sends a stream's batch and records what it came to.
func (d *Dispatcher) sendStream(ctx context.Context, st *store.WebhookStream) {
	defer func() {
		d.flightMu.Lock()
		d.inFlight -= len(st.Events)
		if d.busy[st.EndpointID] -= len(st.Events); d.busy[st.EndpointID] <= 0 {
			delete(d.busy, st.EndpointID)
		}
		d.flightMu.Unlock()
		d.Notify()
	}()
	results := make([]streamResult, len(st.Events))
	answers := make([]Answer, len(st.Events))
	took := make([]time.Duration, len(st.Events))
	var keys []string
	runs := map[string][]int{}
	for i, e := range st.Events {
		if _, ok := runs[e.OrderingKey]; !ok {
			keys = append(keys, e.OrderingKey)
		}
		runs[e.OrderingKey] = append(runs[e.OrderingKey], i)
	}
	target := Target{URL: st.URL, Secrets: st.Secrets}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			held := st.Held[k]
			for _, i := range runs[k] {
				if held {
					results[i] = streamHeld
					continue
				}
				start := time.Now()
				a := Send(ctx, d.cfg.Client, target, st.Events[i].WebhookMessage, d.cfg.Now, d.cfg.Timeout)
				answers[i], took[i] = a, time.Since(start)
				if a.Err == nil {
					results[i] = streamSent
					d.observeStream(st.Events[i].Type, OutcomeSent, took[i])
					continue
				}
				results[i], held = streamFailed, true
			}
		})
	}
	wg.Wait()
	d.recordStream(ctx, st, results, answers, took)
}

// recordStream turns a batch's results into its advance and applies it:
// the cursor past the batch; a failed event copied into the retry table
// with its answer, due again after the backoff (or dead past RetryFor
// after it occurred), as a failed message of the retry table would be;
// the events held behind a failure or a retry copied there too, due now
// (the retry claim keeps them behind it).
func (d *Dispatcher) recordStream(ctx context.Context, st *store.WebhookStream, results []streamResult, answers []Answer,
	took []time.Duration) {
	now := d.cfg.Now()
	a := store.WebhookStreamAdvance{EndpointID: st.EndpointID, Owner: d.cfg.Owner, At: now,
		Through: st.Events[len(st.Events)-1].Position()}
	for i, r := range results {
		e := st.Events[i]
		switch r {
		case streamSent:
			a.Sent = true
		case streamHeld:
			a.Moves = append(a.Moves, store.WebhookMove{Event: e, State: heraldtype.WebhookPending, RunAt: now, FirstAt: e.OccurredAt})
		case streamFailed:
			a.Failed = true
			ans := answers[i]
			m := store.WebhookMove{Event: e, Attempt: 1, FirstAt: e.OccurredAt, LastStatus: ans.Status, LastError: ans.Err.Error()}
			deadline := e.OccurredAt.Add(d.cfg.RetryFor)
			outcome := OutcomeRetried
			switch {
			case ans.Status == http.StatusGone:
				// Held with the endpoint's others until it is enabled again.
				a.Disable, m.State, m.RunAt, m.Attempt, outcome = "the endpoint answered 410 Gone", heraldtype.WebhookPending, now, 0, OutcomeHeld
			case !now.Before(deadline):
				m.State, outcome = heraldtype.WebhookDead, OutcomeDead
			default:
				m.State, m.RunAt = heraldtype.WebhookPending, now.Add(max(d.backoff(1), ans.RetryAfter))
				if m.RunAt.After(deadline) {
					m.RunAt = deadline // one last attempt at the end of the window
				}
			}
			d.observeStream(e.Type, outcome, took[i])
			a.Moves = append(a.Moves, m)
		}
	}
	if a.Failed && d.cfg.DisableAfter > 0 {
		a.DisableFailingSince = now.Add(-d.cfg.DisableAfter)
		a.FailingReason = "failed continuously for longer than " + d.cfg.DisableAfter.String()
	}
	d.advance(ctx, a)
}

// advance applies a; a lease lost meanwhile (another instance streams the
// endpoint now) leaves the batch to it: sent again, at least once.
func (d *Dispatcher) advance(ctx context.Context, a store.WebhookStreamAdvance) {
	cctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
	applied, disabled, err := d.cfg.Store.AdvanceWebhookStream(cctx, a)
	cancel()
	switch {
	case err != nil:
		d.cfg.Logger.Error("webhook: recording a stream's batch failed", "endpoint", a.EndpointID, "err", err)
	case !applied:
		d.cfg.Logger.Warn("webhook: a stream's lease ended before its batch was recorded", "endpoint", a.EndpointID)
	case disabled:
		reason := a.Disable
		if reason == "" {
			reason = a.FailingReason
		}
		d.cfg.Logger.Warn("webhook: endpoint disabled", "endpoint", a.EndpointID, "reason", reason)
	}
}

// observeStream tells Config.Observe of an outcome of the stream.
func (d *Dispatcher) observeStream(eventType, outcome string, took time.Duration) {
	if d.cfg.Observe != nil {
		d.cfg.Observe(eventType, outcome, took)
	}
}
