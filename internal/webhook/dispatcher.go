package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/poll"
	"github.com/heraldhq/herald/store"
)

// Store is what the Dispatcher needs of the database.
type Store interface {
	ClaimWebhookMessages(ctx context.Context, p store.WebhookClaim) ([]store.WebhookJob, error)
	FinishWebhookMessage(ctx context.Context, f store.WebhookFinish) (applied, disabled bool, err error)
	FinishWebhooksSent(ctx context.Context, fs []store.WebhookFinish) (int, error)
	CountWebhookMessagesPending(ctx context.Context, max int) (int, error)
	Stream
}

// Doer sends a request: *outbound.Client, whose guard admits public
// addresses (and the operator's allowed networks) only and follows no
// redirect.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// The defaults of Config (docs/configuration.md, webhooks.*).
const (
	// DefaultTimeout bounds one send: the specification recommends 15 to
	// 30 seconds.
	DefaultTimeout = 15 * time.Second
	// DefaultRetryBase is the first retry's ceiling; each retry doubles
	// it up to DefaultRetryMaxDelay, and full jitter draws the wait
	// below that ceiling.
	DefaultRetryBase     = 5 * time.Second
	DefaultRetryMaxDelay = time.Hour
	// DefaultRetryFor is how long a message is retried after its first
	// attempt before it is dead.
	DefaultRetryFor = 24 * time.Hour
	// DefaultDisableAfter is how long an endpoint may fail without a
	// success before it is disabled (Svix's figure: five days).
	DefaultDisableAfter = 5 * 24 * time.Hour
	DefaultBatchSize    = 100
	// DefaultMaxInFlightPerEndpoint caps one endpoint's sends in flight
	// on one instance: half a batch, so a receiver is never hit by a
	// whole batch at once and one endpoint never takes the whole batch.
	DefaultMaxInFlightPerEndpoint = 50
	DefaultPollInterval           = time.Second
	// DefaultStoreTimeout bounds a store call: the worker's default too
	// (its lease duration).
	DefaultStoreTimeout = 30 * time.Second
	// DefaultPendingInterval is how often the pending count is read for
	// Config.Pending.
	DefaultPendingInterval = 15 * time.Second
)

// PendingCountCap is where the pending count stops: reading it costs at
// most this many entries of the due index, however deep the backlog.
const PendingCountCap = 100_000

// pendingIdle is how many times as long as the last count the pending
// loop waits, at least, before counting again: a deep backlog, slow to
// count, is counted less often, so the gauge never costs the database
// more than a small share of one connection.
const pendingIdle = 20

// Config configures a Dispatcher. Zero durations and sizes take the
// defaults above.
type Config struct {
	Store Store
	// Client sends; it must be a guarded *outbound.Client in production.
	Client Doer
	// Owner names this instance in leases.
	Owner string
	// Timeout bounds one send (webhooks.timeout).
	Timeout time.Duration
	// RetryBase and RetryMaxDelay shape the backoff: the n-th retry waits
	// a uniformly random time below min(RetryMaxDelay, RetryBase·2^(n-1))
	// (full jitter, so receivers coming back up are not hit by every
	// sender at once).
	RetryBase     time.Duration
	RetryMaxDelay time.Duration
	// RetryFor is how long after its first attempt (or its replay) a
	// message is retried before it is dead (webhooks.retry_for).
	RetryFor time.Duration
	// DisableAfter disables an endpoint that has failed continuously
	// this long (webhooks.disable_after); negative: never.
	DisableAfter time.Duration
	// BatchSize is how many sends this instance has in flight at most:
	// a claim takes what is left of it (webhooks.batch_size).
	BatchSize int
	// MaxInFlightPerEndpoint is how many sends to one endpoint this
	// instance has in flight at most (webhooks.max_in_flight_per_endpoint):
	// a claim takes no more of one endpoint, and none of an endpoint
	// still being sent to, so a slow endpoint is never sent more than
	// this at once and never holds the others. Default
	// DefaultMaxInFlightPerEndpoint.
	MaxInFlightPerEndpoint int
	// PollInterval is how often an idle dispatcher looks for due
	// messages.
	PollInterval time.Duration
	// StoreTimeout bounds each store call (a claim, an outcome), so a
	// connection cut mid-call cannot hold the loop — or the Stop that
	// waits for it — until TCP gives up. Default DefaultStoreTimeout.
	StoreTimeout time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
	// Jitter returns a random fraction in [0, 1); rand.Float64 if nil.
	Jitter func() float64
	// Observe, if set, is told of each attempt's outcome (one of the
	// Outcome… constants) and how long the send took, for metrics.
	Observe func(eventType, outcome string, took time.Duration)
	// Pending, if set, is told every PendingInterval how many messages
	// wait to be sent or are being sent (pending or leased, of every
	// endpoint, counted up to PendingCountCap), for the pending gauge.
	Pending func(n int)
	// PendingInterval is how often Pending is told. Default
	// DefaultPendingInterval.
	PendingInterval time.Duration
}

// The outcomes Observe is told of.
const (
	OutcomeSent    = "sent"    // answered 2xx
	OutcomeRetried = "retried" // failed, due again later
	OutcomeDead    = "dead"    // failed for retry_for: on the dead letter list
	OutcomeHeld    = "held"    // answered 410 Gone: held, the endpoint disabled
)

// Outcomes lists every outcome Observe is told of.
var Outcomes = []string{OutcomeSent, OutcomeRetried, OutcomeDead, OutcomeHeld}

// Dispatcher sends the webhook messages the stores wrote, on every
// instance: it claims due messages, signs and sends each through the
// outbound guard, and records the outcome.
type Dispatcher struct {
	cfg Config
	// loop claims and sends; its exit waits for the sends in flight.
	// pending reports the pending count (nil without Config.Pending).
	loop, pending *poll.Loop

	// flightMu guards busy (this instance's sends in flight per endpoint)
	// and inFlight (all of them); sending counts the groups of sends the
	// loop started, which Stop waits for.
	flightMu sync.Mutex
	busy     map[string]int
	inFlight int
	sending  sync.WaitGroup
}

// New checks cfg and returns a Dispatcher; Start runs it.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Store == nil || cfg.Client == nil {
		return nil, errors.New("webhook: Config.Store and Config.Client are required")
	}
	if cfg.Owner == "" {
		return nil, errors.New("webhook: Config.Owner is required")
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"Timeout", &cfg.Timeout, DefaultTimeout},
		{"RetryBase", &cfg.RetryBase, DefaultRetryBase},
		{"RetryMaxDelay", &cfg.RetryMaxDelay, DefaultRetryMaxDelay},
		{"RetryFor", &cfg.RetryFor, DefaultRetryFor},
		{"DisableAfter", &cfg.DisableAfter, DefaultDisableAfter},
		{"PollInterval", &cfg.PollInterval, DefaultPollInterval},
		{"StoreTimeout", &cfg.StoreTimeout, DefaultStoreTimeout},
		{"PendingInterval", &cfg.PendingInterval, DefaultPendingInterval},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 && d.name != "DisableAfter" {
			return nil, fmt.Errorf("webhook: %s %v must be positive", d.name, *d.v)
		}
	}
	if cfg.RetryMaxDelay < cfg.RetryBase {
		return nil, fmt.Errorf("webhook: RetryMaxDelay %v is below RetryBase %v", cfg.RetryMaxDelay, cfg.RetryBase)
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.BatchSize < 1 || cfg.BatchSize > store.MaxWebhookClaim {
		return nil, fmt.Errorf("webhook: BatchSize %d must be between 1 and %d", cfg.BatchSize, store.MaxWebhookClaim)
	}
	if cfg.MaxInFlightPerEndpoint == 0 {
		cfg.MaxInFlightPerEndpoint = DefaultMaxInFlightPerEndpoint
	}
	if cfg.MaxInFlightPerEndpoint < 1 || cfg.MaxInFlightPerEndpoint > store.MaxWebhookClaim {
		return nil, fmt.Errorf("webhook: MaxInFlightPerEndpoint %d must be between 1 and %d", cfg.MaxInFlightPerEndpoint, store.MaxWebhookClaim)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	d := &Dispatcher{cfg: cfg, busy: map[string]int{}}
	// The sends in flight end (each bounded) before Stop returns.
	d.loop = poll.NewPaced(d.round, d.sending.Wait)
	if cfg.Pending != nil {
		d.pending = poll.NewPaced(d.countPending, nil)
	}
	return d, nil
}

// Start runs the dispatcher in the background until Stop.
func (d *Dispatcher) Start(ctx context.Context) {
	d.loop.Start(ctx)
	if d.pending != nil {
		d.pending.Start(ctx)
	}
}

// Stop ends the loop after the sends in flight (each bounded by Timeout),
// or when ctx ends; a message whose outcome was not recorded is sent
// again once its lease ends.
func (d *Dispatcher) Stop(ctx context.Context) error {
	err := d.loop.Stop(ctx)
	if d.pending != nil {
		err = errors.Join(err, d.pending.Stop(ctx))
	}
	return err
}

// Notify wakes an idle dispatcher (messages were written).
func (d *Dispatcher) Notify() { d.loop.Notify() }

// round is one turn of the loop: a claim and its sends started. A full
// claim is followed at once by the next (more are probably due); a group
// of sends that ends wakes the loop (Notify), so an endpoint freed or
// room in the batch is claimed for at once.
func (d *Dispatcher) round(ctx context.Context) time.Duration {
	n, limit, _, err := d.claimAndSend(ctx)
	if err != nil {
		d.cfg.Logger.Error("webhook: a claim failed", "err", err)
	}
	if n > 0 && n == limit && err == nil {
		return 0
	}
	return d.cfg.PollInterval
}

// countPending tells Config.Pending the pending count; the next count
// comes after PendingInterval, or pendingIdle times as long as this one
// took.
func (d *Dispatcher) countPending(ctx context.Context) time.Duration {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
	n, err := d.cfg.Store.CountWebhookMessagesPending(cctx, PendingCountCap)
	cancel()
	switch {
	case err == nil:
		d.cfg.Pending(n)
	case ctx.Err() == nil:
		d.cfg.Logger.Warn("webhook: counting the pending messages failed", "err", err)
	}
	return max(d.cfg.PendingInterval, pendingIdle*time.Since(start))
}

// RunOnce claims one batch of due messages, sends them side by side and
// records their outcomes; it returns how many it claimed. ctx ending
// (Stop) cancels the claim; once messages are claimed their sends and
// outcomes run to the end, each bounded (Timeout, StoreTimeout), so a
// claimed message is not left leased for nothing.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	n, _, wg, err := d.claimAndSend(ctx)
	wg.Wait()
	return n, err
}

// claimAndSend claims what this instance may send now — at most what is
// left of BatchSize, at most MaxInFlightPerEndpoint of one endpoint, none
// of an endpoint it is still sending to — first the retry table's due
// messages, then the log's streams (stream.go), and starts the sends,
// one group per endpoint; wg ends when they have. It returns how many it
// claimed and the retry claim's limit.
func (d *Dispatcher) claimAndSend(ctx context.Context) (n, limit int, wg *sync.WaitGroup, err error) {
	wg = &sync.WaitGroup{}
	d.flightMu.Lock()
	limit = d.cfg.BatchSize - d.inFlight
	skip := make([]string, 0, len(d.busy))
	for e := range d.busy {
		skip = append(skip, e)
	}
	d.flightMu.Unlock()
	if limit <= 0 {
		return 0, limit, wg, nil
	}
	now := d.cfg.Now()
	cctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
	jobs, err := d.cfg.Store.ClaimWebhookMessages(cctx, store.WebhookClaim{Owner: d.cfg.Owner, Now: now,
		LeaseUntil: now.Add(d.lease()), Limit: limit, PerEndpoint: d.cfg.MaxInFlightPerEndpoint, Skip: skip})
	cancel()
	if err != nil {
		return 0, limit, wg, err
	}
	var order []string
	groups := map[string][]store.WebhookJob{}
	for _, j := range jobs {
		if _, ok := groups[j.EndpointID]; !ok {
			order = append(order, j.EndpointID)
		}
		groups[j.EndpointID] = append(groups[j.EndpointID], j)
	}
	d.flightMu.Lock()
	for e, js := range groups {
		d.busy[e] += len(js)
		d.inFlight += len(js)
	}
	d.flightMu.Unlock()
	sctx := context.WithoutCancel(ctx)
	for _, e := range order {
		d.sending.Add(1)
		wg.Go(func() {
			defer d.sending.Done()
			d.sendGroup(sctx, e, groups[e])
		})
	}
	// Then the log's streams, with the room left.
	streamed, err := d.claimStreams(ctx, wg)
	return len(jobs) + streamed, limit, wg, err
}

// sendGroup sends one endpoint's claimed messages side by side and
// records their outcomes, then frees the endpoint for the next claim.
// The usual outcome, sent, is recorded for the group in one store call
// after its sends (issue 35 item 5: one transaction per message cost
// more than the send); a failure, which may change its endpoint, is
// recorded at once on its own.
func (d *Dispatcher) sendGroup(ctx context.Context, endpoint string, jobs []store.WebhookJob) {
	defer func() {
		d.flightMu.Lock()
		d.inFlight -= len(jobs)
		if d.busy[endpoint] -= len(jobs); d.busy[endpoint] <= 0 {
			delete(d.busy, endpoint)
		}
		d.flightMu.Unlock()
		d.Notify()
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := make([]store.WebhookFinish, 0, len(jobs))
	for _, j := range jobs {
		wg.Go(func() {
			start := time.Now()
			f := d.send(ctx, j)
			d.observe(j.Type, f, time.Since(start))
			if f.State == heraldtype.WebhookSent {
				mu.Lock()
				sent = append(sent, f)
				mu.Unlock()
				return
			}
			fctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
			_, disabled, err := d.cfg.Store.FinishWebhookMessage(fctx, f)
			cancel()
			if err != nil {
				d.cfg.Logger.Error("webhook: recording an outcome failed", "endpoint", j.EndpointID, "event", j.EventID, "err", err)
			} else if disabled {
				d.cfg.Logger.Warn("webhook: endpoint disabled", "endpoint", j.EndpointID, "reason", f.Disable+f.FailingReason)
			}
		})
	}
	wg.Wait()
	if len(sent) > 0 {
		fctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
		_, err := d.cfg.Store.FinishWebhooksSent(fctx, sent)
		cancel()
		if err != nil {
			// Each is sent again once its lease ends: at least once.
			d.cfg.Logger.Error("webhook: recording the sent messages failed", "messages", len(sent), "err", err)
		}
	}
}

// observe tells Config.Observe what became of an attempt.
func (d *Dispatcher) observe(eventType string, f store.WebhookFinish, took time.Duration) {
	if d.cfg.Observe == nil {
		return
	}
	outcome := OutcomeRetried
	switch {
	case f.State == heraldtype.WebhookSent:
		outcome = OutcomeSent
	case f.State == heraldtype.WebhookDead:
		outcome = OutcomeDead
	case f.Disable != "":
		outcome = OutcomeHeld
	}
	d.cfg.Observe(eventType, outcome, took)
}

// lease is how long a claim holds its messages: a send's timeout and the
// time to record its outcome.
func (d *Dispatcher) lease() time.Duration { return d.cfg.Timeout + 15*time.Second }

// Body is a message's body: the event's type, its time and its data
// (docs/ARCHITECTURE.md, "Outbound webhooks"). It is the same on every
// attempt, so a receiver sees one event however often it comes.
func Body(m heraldtype.WebhookMessage) ([]byte, error) {
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{m.Type, m.OccurredAt.UTC(), m.Data})
}

// send makes one attempt and decides what follows it.
func (d *Dispatcher) send(ctx context.Context, j store.WebhookJob) store.WebhookFinish {
	f := store.WebhookFinish{Seq: j.Seq, Owner: d.cfg.Owner, Attempt: j.Attempt}
	status, retryAfter, err := d.post(ctx, j)
	f.At, f.Status = d.cfg.Now(), status
	switch {
	case err == nil:
		f.State = heraldtype.WebhookSent
		return f
	case status == http.StatusGone:
		// The specification: 410 asks the sender to stop. The message is
		// held with the endpoint's others until it is enabled again.
		f.State, f.RunAt, f.Error = heraldtype.WebhookPending, f.At, err.Error()
		f.Disable = "the endpoint answered 410 Gone"
		return f
	}
	f.Error = err.Error()
	if d.cfg.DisableAfter > 0 {
		f.DisableFailingSince = f.At.Add(-d.cfg.DisableAfter)
		f.FailingReason = "failed continuously for longer than " + d.cfg.DisableAfter.String()
	}
	deadline := j.FirstAt.Add(d.cfg.RetryFor)
	if !f.At.Before(deadline) {
		f.State = heraldtype.WebhookDead
		return f
	}
	wait := d.backoff(j.Attempt)
	if retryAfter > wait {
		wait = retryAfter
	}
	f.State, f.RunAt = heraldtype.WebhookPending, f.At.Add(wait)
	if f.RunAt.After(deadline) {
		f.RunAt = deadline // one last attempt at the end of the window
	}
	return f
}

// backoff is the wait after the attempt-th attempt failed: full jitter
// below min(RetryMaxDelay, RetryBase·2^(attempt-1)).
func (d *Dispatcher) backoff(attempt int) time.Duration {
	ceiling := d.cfg.RetryBase
	for i := 1; i < attempt && ceiling < d.cfg.RetryMaxDelay; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, d.cfg.RetryMaxDelay)
	return time.Duration(d.cfg.Jitter() * float64(ceiling))
}

// post sends j once and returns the answer's status (0 without one),
// the Retry-After it asked for, and nil for a 2xx.
func (d *Dispatcher) post(ctx context.Context, j store.WebhookJob) (int, time.Duration, error) {
	a := Send(ctx, d.cfg.Client, Target{URL: j.URL, Secrets: j.Secrets}, j.WebhookMessage, d.cfg.Now, d.cfg.Timeout)
	return a.Status, a.RetryAfter, a.Err
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
