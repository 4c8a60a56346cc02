package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/store"
)

// Store is what the Dispatcher needs of the database.
type Store interface {
	ClaimWebhookMessages(ctx context.Context, p store.WebhookClaim) ([]store.WebhookJob, error)
	FinishWebhookMessage(ctx context.Context, f store.WebhookFinish) (applied, disabled bool, err error)
	FinishWebhooksSent(ctx context.Context, fs []store.WebhookFinish) (int, error)
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
	DefaultPollInterval = time.Second
	// DefaultStoreTimeout bounds a store call: the worker's default too
	// (its lease duration).
	DefaultStoreTimeout = 30 * time.Second
)

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
	// BatchSize is how many messages one claim takes, and so how many
	// sends are in flight at most.
	BatchSize int
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
	cfg  Config
	wake chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	return &Dispatcher{cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Start runs the dispatcher in the background until Stop.
func (d *Dispatcher) Start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel != nil {
		return
	}
	ctx, d.cancel = context.WithCancel(ctx)
	d.done = make(chan struct{})
	go d.run(ctx, d.done)
}

// Stop ends the loop after the sends in flight (each bounded by Timeout),
// or when ctx ends; a message whose outcome was not recorded is sent
// again once its lease ends.
func (d *Dispatcher) Stop(ctx context.Context) error {
	d.mu.Lock()
	cancel, done := d.cancel, d.done
	d.cancel = nil
	d.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify wakes an idle dispatcher (messages were written).
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
		n, err := d.RunOnce(ctx)
		if err != nil {
			d.cfg.Logger.Error("webhook: a claim failed", "err", err)
		}
		wait := d.cfg.PollInterval
		if n == d.cfg.BatchSize && err == nil {
			wait = 0 // a full batch: more are probably due
		}
		t.Reset(wait)
	}
}

// RunOnce claims one batch of due messages, sends them side by side and
// records their outcomes; it returns how many it claimed. ctx ending
// (Stop) cancels the claim; once messages are claimed their sends and
// outcomes run to the end, each bounded (Timeout, StoreTimeout), so a
// claimed message is not left leased for nothing.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	now := d.cfg.Now()
	cctx, cancel := context.WithTimeout(ctx, d.cfg.StoreTimeout)
	jobs, err := d.cfg.Store.ClaimWebhookMessages(cctx, store.WebhookClaim{Owner: d.cfg.Owner, Now: now,
		LeaseUntil: now.Add(d.lease()), Limit: d.cfg.BatchSize})
	cancel()
	if err != nil {
		return 0, err
	}
	ctx = context.WithoutCancel(ctx)
	// The usual outcome, sent, is recorded for the whole batch in one
	// store call after its sends (issue 35 item 5: one transaction per
	// message cost more than the send); a failure, which may change its
	// endpoint, is recorded at once on its own.
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
	return len(jobs), nil
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

// post sends j and returns the answer's status (0 without one), the
// Retry-After it asked for, and nil for a 2xx.
func (d *Dispatcher) post(ctx context.Context, j store.WebhookJob) (int, time.Duration, error) {
	body, err := Body(j.WebhookMessage)
	if err != nil {
		return 0, 0, fmt.Errorf("the message's data is not JSON: %w", err)
	}
	secrets := make([]Secret, 0, len(j.Secrets))
	for _, s := range j.Secrets {
		k, err := ParseSecret(s)
		if err != nil {
			return 0, 0, fmt.Errorf("the endpoint's secret: %w", err)
		}
		secrets = append(secrets, k)
	}
	h, err := Headers(j.EventID, d.cfg.Now(), body, secrets...)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, fmt.Errorf("the endpoint's URL: %w", err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Webhooks/1")
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		var oe *outbound.Error
		if errors.As(err, &oe) {
			return 0, 0, errors.New(oe.Code + ": " + oe.Reason)
		}
		return 0, 0, errors.New("no answer")
	}
	// The answer's body is not read beyond a little, so a receiver cannot
	// hold a send open by streaming one.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, 0, nil
	}
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), d.cfg.Now()),
		fmt.Errorf("answered %d", resp.StatusCode)
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
