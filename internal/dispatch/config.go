package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/store"
)

// Store is the part of store.Store the worker uses. It is defined here, where
// it is consumed, so tests can fake six methods instead of the whole seam.
type Store interface {
	Claim(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, error)
	ExtendLeases(ctx context.Context, owner string, ids []int64, until time.Time) ([]int64, error)
	Complete(ctx context.Context, outcomes []store.Outcome) (int, error)
	ReportLate(ctx context.Context, outcomes []store.Outcome) (int, error)
	NextRunAt(ctx context.Context) (time.Time, bool, error)
	QueueStats(ctx context.Context) (map[heraldtype.DeliveryState]int, error)
	AddDeliveryMinutes(ctx context.Context, instance string, rows []store.DeliveryMinute) error
}

var _ Store = store.Store(nil)

// Sender sends one message through one provider. A provider classifies its
// failures as a *heraldtype.SendError; any other error is treated as a
// temporary "network" failure (heraldtype.AsSendError). Only the worker
// decides whether and when to retry (S0.3).
type Sender interface {
	Send(ctx context.Context, m *heraldtype.Message) (providerMessageID string, err error)
}

// CodeLister is a Sender that lists the error codes it can return
// (heraldtype.SendError.Code). Only listed codes get their own value of a
// metric's code label; any other code counts as "other", so a provider
// cannot grow /metrics without bound (issue 23).
type CodeLister interface {
	Codes() []string
}

// ThrottleScoper is a Sender whose quota answers concern only part of its
// traffic. ThrottleScope names that part for a claimed job (Web Push: the
// host of the subscription endpoint, one push service each); the worker
// keeps one throttle per (provider, scope), so one push service answering
// 429 slows only the deliveries to it (issue 23). "" is the provider-wide
// throttle, the only one of a Sender without this method (FCM: one client
// is one project; APNs: one topic and team).
type ThrottleScoper interface {
	ThrottleScope(job *heraldtype.Job) string
}

// Defaults. The retry schedules come from the seeds and the provider
// documentation: 5 s ×2 capped at 15 min for temporary failures (seed 000,
// S0.3) and a 60 s minimum for quota answers (PROTOCOLS.md, QUOTA_EXCEEDED).
const (
	// A claim of 256 amortises its transaction over enough rows, and 256
	// sends in flight keep a provider's HTTP/2 streams busy while the
	// store works: against 100 and 64, +29 % deliveries/s on PostgreSQL
	// and +18 % on SQLite (docs/PERFORMANCE.md).
	DefaultBatchSize     = 256
	DefaultConcurrency   = 256
	DefaultLeaseDuration = 30 * time.Second
	DefaultSendTimeout   = 10 * time.Second
	// DefaultOutcomeMargin is the lease a send must leave after its
	// timeout for its outcome to be recorded: a flush interval and one
	// Complete commit, with room for a loaded database (issue 24 item 2).
	DefaultOutcomeMargin      = 2 * time.Second
	DefaultPollInterval       = time.Second // S4.2
	DefaultFlushInterval      = 5 * time.Millisecond
	DefaultFlushSize          = 200
	DefaultQueueStatsInterval = 5 * time.Second
	DefaultPolicyRetry        = 10 * time.Second
	DefaultPolicyMaxDelay     = 24 * time.Hour
	defaultRetryFactor        = 2
	defaultRetryMax           = 15 * time.Minute
)

// DefaultRetry returns the default retry policy of each retryable class.
func DefaultRetry() map[heraldtype.ErrorClass]heraldtype.RetryPolicy {
	return map[heraldtype.ErrorClass]heraldtype.RetryPolicy{
		heraldtype.ClassTemporary: {Base: 5 * time.Second, Max: defaultRetryMax, Factor: 2, Jitter: true},
		heraldtype.ClassThrottled: {Base: 60 * time.Second, Max: defaultRetryMax, Factor: 2, Jitter: true},
	}
}

// Config configures a Worker. Zero values take the defaults above.
type Config struct {
	// Store is the queue. Required.
	Store Store
	// Senders maps a provider name (Delivery.Provider) to its sender. A
	// delivery whose provider has no sender ends dead with code no_provider.
	Senders map[string]Sender
	// Owner identifies this worker's leases; default host-pid-random.
	Owner string
	// BatchSize is the most deliveries claimed at once (S2.7 fetch_limit).
	BatchSize int
	// Concurrency is the most sends in flight at once, over all providers
	// (S2.7).
	Concurrency int
	// LeaseDuration is how long a claim is held before the reaper may take
	// it back; in-flight leases are extended past half-life. It must be
	// longer than SendTimeout.
	LeaseDuration time.Duration
	// SendTimeout bounds one send. A send is never started on a lease with
	// less than SendTimeout + OutcomeMargin left.
	SendTimeout time.Duration
	// OutcomeMargin is the time recording an outcome may take after its
	// send ended (the completer's flush interval and one Complete commit).
	// The send guard, which reads the clock when it decides, starts a send
	// only on a lease with at least SendTimeout + OutcomeMargin left, so a
	// send whose lease cannot be extended (the heartbeat fails: the store
	// does not answer) still has its outcome recorded under its lease
	// rather than racing the reaper. Default DefaultOutcomeMargin, or half
	// of what LeaseDuration leaves after SendTimeout when that is less.
	// LeaseDuration must be longer than SendTimeout + OutcomeMargin.
	OutcomeMargin time.Duration
	// PollInterval is the fallback wake-up when nothing signals new work
	// (S4.2: 1 s).
	PollInterval time.Duration
	// FlushInterval and FlushSize bound how long and how many outcomes are
	// buffered before one Complete call records them.
	FlushInterval time.Duration
	FlushSize     int
	// RollupInterval is how often the worker adds the outcomes it counted
	// to the delivery rollup (rollup.go). Default DefaultRollupInterval;
	// negative disables the rollup.
	RollupInterval time.Duration
	// QueueStatsInterval is how often the queue depth gauge is refreshed
	// from the store. Negative disables it.
	QueueStatsInterval time.Duration
	// Retry overrides the retry policy per class (temporary, throttled).
	// Classes not named keep DefaultRetry. Permanent failures never retry.
	Retry map[heraldtype.ErrorClass]heraldtype.RetryPolicy
	// Tracer records the spans of the deliveries whose notification kept
	// a traceparent (tracing.go); nil: none.
	Tracer trace.Tracer
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Rand returns a number in [0, 1) for retry jitter; default
	// math/rand/v2. Calls are serialised, so it need not be safe for
	// concurrent use.
	Rand func() float64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Metrics defaults to unregistered collectors.
	Metrics *metrics.Metrics
	// Policy, when set, decides before every send whether the delivery may
	// go (preferences, quiet hours, de-duplication, daily cap).
	Policy Policy
	// PolicyRetry is how long a delivery waits when the policy could not
	// be evaluated (fail-closed, S1.3). Default 10 s.
	PolicyRetry time.Duration
	// PolicyMaxDelay bounds that waiting: a delivery still undecided this
	// long after it was due ends dead with code policy_error. Default 24 h.
	PolicyMaxDelay time.Duration
	// InboxWritten, when set, is called with the users whose inbox items
	// a flush of outcomes wrote (store.InboxSent: an in_app delivery
	// scheduled for later, now due), after the flush committed: the
	// real-time streams of this instance (other instances learn it from
	// the store, store.InboxNotifier). A user may be named whose outcome
	// the store's guard ignored; a stream then finds nothing new.
	InboxWritten func(userIDs []string)
	// ListUnsubscribe, when set, gives each e-mail its one-click
	// unsubscribe targets (heraldtype.Message.ListUnsubscribe); none for a
	// transactional type. Called just before the send.
	ListUnsubscribe func(ctx context.Context, job *heraldtype.Job) []string
	// EmailHTML, when set, gives each e-mail the HTML body it is sent
	// with in place of its notification's (heraldtype.Message.HTML): e-mail
	// tracking's copy with signed links and an open pixel for this
	// delivery (issue 35 item 2); "" sends the notification's own.
	EmailHTML func(ctx context.Context, job *heraldtype.Job) string
	// Render, when set, renders a delivery whose notification names a
	// version of its type's templates (Notification.TemplateVersion; issue
	// 37) after the policy let it go and before the send: it returns the
	// notification as the delivery's channel's form fills it (title, body,
	// data, an e-mail's HTML in data.html), or nil to send it as it is.
	// A *RenderFailed error (the template or its data is at fault) ends
	// the delivery dead with code render_failed and the reason, so nothing
	// half-rendered is sent; any other error (the store did not answer)
	// hands the delivery back to the queue.
	Render func(ctx context.Context, job *heraldtype.Job) (*heraldtype.Notification, error)
	// StoreTimeout bounds every store call of the worker (claim, outcome
	// flush, lease extension, next run_at, queue stats, the policy's
	// reads): a database that stops answering without closing the
	// connection fails the call, which is logged and retried, instead of
	// holding the worker forever. Default LeaseDuration: a longer call is
	// of no use, the leases it is about have expired.
	StoreTimeout time.Duration
}

// withDefaults validates c and returns it with every default applied.
func (c Config) withDefaults() (Config, error) {
	if c.Store == nil {
		return c, errors.New("dispatch: Config.Store is required")
	}
	for name, s := range c.Senders {
		if s == nil {
			return c, fmt.Errorf("dispatch: Config.Senders[%q] is nil", name)
		}
	}
	ints := []struct {
		name string
		v    *int
		def  int
	}{
		{"BatchSize", &c.BatchSize, DefaultBatchSize},
		{"Concurrency", &c.Concurrency, DefaultConcurrency},
		{"FlushSize", &c.FlushSize, DefaultFlushSize},
	}
	for _, f := range ints {
		if *f.v < 0 {
			return c, fmt.Errorf("dispatch: Config.%s must not be negative, got %d", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	durations := []struct {
		name     string
		v        *time.Duration
		def      time.Duration
		disabler bool // a negative value disables the loop
	}{
		{"LeaseDuration", &c.LeaseDuration, DefaultLeaseDuration, false},
		{"SendTimeout", &c.SendTimeout, DefaultSendTimeout, false},
		{"PollInterval", &c.PollInterval, DefaultPollInterval, false},
		{"FlushInterval", &c.FlushInterval, DefaultFlushInterval, false},
		{"QueueStatsInterval", &c.QueueStatsInterval, DefaultQueueStatsInterval, true},
		{"RollupInterval", &c.RollupInterval, DefaultRollupInterval, true},
		{"PolicyRetry", &c.PolicyRetry, DefaultPolicyRetry, false},
		{"PolicyMaxDelay", &c.PolicyMaxDelay, DefaultPolicyMaxDelay, false},
		{"StoreTimeout", &c.StoreTimeout, 0, false},
		{"OutcomeMargin", &c.OutcomeMargin, 0, false},
	}
	for _, f := range durations {
		if *f.v < 0 && !f.disabler {
			return c, fmt.Errorf("dispatch: Config.%s must not be negative, got %s", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = c.LeaseDuration
	}
	if c.LeaseDuration <= c.SendTimeout {
		return c, fmt.Errorf("dispatch: Config.LeaseDuration (%s) must be longer than SendTimeout (%s)", c.LeaseDuration, c.SendTimeout)
	}
	if c.OutcomeMargin == 0 {
		// A short lease (tests, a tight deployment) keeps a usable default:
		// half of what the send timeout leaves of it.
		c.OutcomeMargin = min(DefaultOutcomeMargin, (c.LeaseDuration-c.SendTimeout)/2)
	}
	if c.LeaseDuration <= c.SendTimeout+c.OutcomeMargin {
		return c, fmt.Errorf("dispatch: Config.LeaseDuration (%s) must be longer than SendTimeout + OutcomeMargin (%s + %s)",
			c.LeaseDuration, c.SendTimeout, c.OutcomeMargin)
	}
	retry := DefaultRetry()
	for class, p := range c.Retry {
		if class != heraldtype.ClassTemporary && class != heraldtype.ClassThrottled {
			return c, fmt.Errorf("dispatch: Config.Retry: class %q is not retryable (want %q or %q)",
				class, heraldtype.ClassTemporary, heraldtype.ClassThrottled)
		}
		p, err := retryWithDefaults(p)
		if err != nil {
			return c, fmt.Errorf("dispatch: Config.Retry[%s]: %w", class, err)
		}
		retry[class] = p
	}
	c.Retry = retry
	if c.Owner == "" {
		c.Owner = DefaultOwner()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	} else {
		c.Rand = serialised(c.Rand)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New(nil)
	}
	return c, nil
}

// DefaultOwner names a worker's leases so an operator can tell which
// instance holds a delivery: host-pid-random (the random part tells two
// workers of one process apart).
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "herald"
	}
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()>>32, 36)
}

// serialised wraps a jitter source that may not be safe for concurrent use.
func serialised(f func() float64) func() float64 {
	var mu sync.Mutex
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return f()
	}
}
