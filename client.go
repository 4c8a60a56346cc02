// Package herald is Herald's Go API: the Client an embedding program uses to
// register users and devices, enqueue notifications and run the delivery
// workers, and the request and result types it needs. Value types shared
// with the stores and providers live in package heraldtype; the database
// seam is package store; providers live under provider/.
//
// A Client never imports a concrete store or provider: the program that
// embeds Herald (or Herald's own CLI) opens them and passes them in Config.
package herald

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/callout"
	"github.com/heraldhq/herald/internal/campaign"
	"github.com/heraldhq/herald/internal/digest"
	"github.com/heraldhq/herald/internal/dispatch"
	"github.com/heraldhq/herald/internal/escalation"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/leadership"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/internal/maintenance"
	"github.com/heraldhq/herald/internal/metrics"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/realtime"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// Provider sends one message through one delivery service (FCM, APNs, …)
// and classifies its failures as *heraldtype.SendError. Providers never
// retry: the Client's workers decide.
type Provider interface {
	Send(ctx context.Context, m *heraldtype.Message) (providerMessageID string, err error)
}

// NotificationValidator is an optional Provider capability: a provider that
// can tell at trigger time that a notification will never be accepted (for
// example FCM's 4096-byte payload limit) implements it, so the trigger is
// refused with a clear error instead of dying in the queue.
type NotificationValidator interface {
	ValidateNotification(n *heraldtype.Notification) error
}

// VAPIDKeyer is an optional Provider capability: a Web Push provider
// tells the VAPID public key (base64url) web apps subscribe with (the
// applicationServerKey of PushManager.subscribe), which
// Client.VAPIDPublicKey and GET /v1/webpush/vapid-public-key answer.
type VAPIDKeyer interface {
	VAPIDPublicKey() string
}

// CodeLister is an optional Provider capability: the error codes its sends
// can fail with (heraldtype.SendError.Code). Each listed code gets its own
// value of the metrics' code label; any other code is counted as "other",
// so a provider's answers cannot grow /metrics without bound.
type CodeLister interface {
	Codes() []string
}

// RetryPolicy is the exponential backoff for one error class:
// min(Max, Base·Factor^(attempt-1)), with jitter.
type RetryPolicy = heraldtype.RetryPolicy

// Config configures a Client. Store is required; everything else has a
// default.
type Config struct {
	Store store.Store
	// Providers by name. A delivery is routed to a provider by PushRouting.
	Providers map[string]Provider
	// PushRouting maps a device platform to the provider that delivers push
	// to it. Default: every platform to "fcm" when an "fcm" provider is
	// configured.
	PushRouting map[heraldtype.Platform]string
	// ChannelRouting maps the sms and email channels to their provider.
	// Default: sms to "twilio" and email to "smtp" when configured. The
	// in_app channel needs no provider: it is the inbox.
	ChannelRouting map[heraldtype.Channel]string
	// InboxHeartbeat is how often an idle inbox stream sends a heartbeat
	// (an SSE comment, a WebSocket ping). Default DefaultInboxHeartbeat.
	InboxHeartbeat time.Duration
	// InboxPollInterval is how often an inbox stream re-reads the store
	// without a signal (the fallback for a commit no signal reaches).
	// Default 5 s.
	InboxPollInterval time.Duration
	// Types configures notification types by name (TypeConfig); a type
	// declared through PutType takes precedence, and unknown types get the
	// defaults (at_least_once, no cap).
	Types map[string]TypeConfig
	// DailyCap is how many capped notifications a user gets per local
	// calendar day unless their preferences say otherwise. Default 10
	// (S3.8).
	DailyCap int
	// PolicyLimiter holds the policy's dedupe locks and daily counts.
	// Default: Store.
	PolicyLimiter PolicyLimiter
	// PolicyRetry is how long a delivery waits when the policy cannot be
	// evaluated (its store fails): it is not sent blind (S1.3). Default
	// 10 s. PolicyMaxDelay bounds that: a delivery still undecided this
	// long after it was due ends dead with code policy_error. Default 24 h.
	PolicyRetry    time.Duration
	PolicyMaxDelay time.Duration
	// DefaultTimezone for users created without one. Default Asia/Seoul
	// (S2.2).
	DefaultTimezone string
	// MaxAttempts per delivery, first attempt included. Default 4 (S0.3).
	MaxAttempts int
	// Retry overrides the backoff per error class (see dispatch defaults:
	// temporary 5 s ×2 capped at 15 min; throttled 60 s ×2 capped at 15 min).
	Retry map[heraldtype.ErrorClass]RetryPolicy
	// Worker tunes the delivery workers.
	Worker WorkerConfig
	// Reminders tunes the reminder scheduler (S2).
	Reminders ReminderConfig
	// Campaigns tunes the campaign runner (S3.7).
	Campaigns CampaignConfig
	// Rules tunes the rule runner and the events' retention (S3.5).
	Rules RuleConfig
	// Callout governs the calls to endpoints named in rules and campaigns
	// (audience webhooks, content fetches): allowed networks, secrets.
	// Its Allow networks are also the ones outbound webhooks may reach.
	Callout CalloutConfig
	// Webhooks tunes outbound webhooks: the sends to the endpoints
	// registered with CreateWebhook (issue 35 item 4).
	Webhooks WebhookConfig
	// Digests tunes the digest worker every instance runs (issue 36
	// item 1).
	Digests DigestWorkerConfig
	// Escalations tunes the escalation worker every instance runs (issue
	// 36 item 3).
	Escalations EscalationWorkerConfig
	// AudienceSources are the deployment's own audiences by name (issue 20
	// item 3): a rule's "audience":{"source":NAME} pages its users from
	// the one registered under NAME. PutRule refuses a name not here.
	AudienceSources map[string]AudienceSource
	// DisableWorkers runs the Client as an API-only instance.
	DisableWorkers bool
	// InterestRetention is how long an interest is kept after it was last
	// shown (issue 20 item 3). Default 90 days; negative: forever.
	InterestRetention time.Duration
	// EngagementRetention is how long the engagement counters' hours are
	// kept (Engagement). Default 400 days, to compare a month with the
	// same one a year before; negative: forever.
	EngagementRetention time.Duration
	// IdempotencyRetention is how long an Idempotency-Key is remembered.
	// Default 24 h; negative remembers it forever.
	IdempotencyRetention time.Duration
	// DeviceMaxAge prunes devices not seen for this long. Default 270 days
	// (FCM expires inactive Android tokens after 270 days); negative never
	// prunes devices.
	DeviceMaxAge time.Duration
	// DeviceTokenTakeoverAfter is how long another user's device must have
	// been idle (not seen) before a user token's registration may take its
	// push token (the phone changed hands, S0.1); until then the
	// registration is refused, ECONFLICT (issue 23). A server key may
	// always move a token. Default 24 h; negative: a user token never takes
	// an ACTIVE device's token.
	DeviceTokenTakeoverAfter time.Duration
	// Retention deletes notifications (with their deliveries and
	// attempts) whose deliveries all finished this long ago, and campaign
	// runs (with their recipient records) finished this long ago. Default
	// 30 days; negative keeps them forever.
	Retention time.Duration
	// MaintenanceInterval is how often the elected leader prunes (devices,
	// idempotency records, expired policy rows, retention). Default 1 h;
	// negative disables pruning by the leader (the lease reaper still runs,
	// and RunMaintenance still prunes on demand).
	MaintenanceInterval time.Duration
	// Owner names this instance in leases and cluster locks. Default
	// host-pid-random.
	Owner string
	// LeaderTTL is how long leadership (the right to run the leader-only
	// services: lease reaper, pruning, queue vacuum) lasts without renewal;
	// a crashed leader is replaced after at most this. Default 15 s.
	LeaderTTL time.Duration
	// Unsubscribe configures the one-click unsubscribe links of e-mails
	// (RFC 8058); off without a Secret.
	Unsubscribe UnsubscribeConfig
	// EmailTracking signs the open pixels and tracked links of the
	// e-mails of types that opt in (TypeConfig.EmailTracking); off without
	// a Secret.
	EmailTracking EmailTrackingConfig
	// Limits bounds what one call may make Herald store and send (issue
	// 18): the request body limit of the HTTP API bounds the bytes of one
	// request, these bound what those bytes multiply into.
	Limits Limits
	// CancelWait bounds how long Cancel waits for deliveries in flight
	// (claimed by a worker) to end, so that it can say which were sent.
	// Default: Worker.LeaseDuration + Worker.ReapInterval (35 s), the
	// longest a lease holds a delivery before the reaper ends it;
	// negative: no wait (those still in flight are reported so).
	CancelWait time.Duration
	// Templates bounds every render of a rule's or a campaign's message
	// templates (issue 31 item 1).
	Templates TemplateConfig
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger; default slog.Default().
	Logger *slog.Logger
	// OnError, when set, is told of every error Herald's background
	// components report — a reminder batch or a rule run that failed, a
	// delivery dead after its last attempt, a store that cannot be read —
	// with the component's name (ComponentReminder, …; "" for the Client's
	// own), whatever the Logger's level: the hook an error tracker
	// (Sentry, …) plugs into (S2.7). The error says what failed and wraps
	// the cause. It is called on the component's goroutine and must not
	// block.
	OnError func(ctx context.Context, component string, err error)
	// Registerer receives Herald's Prometheus collectors; nil registers
	// nowhere.
	Registerer prometheus.Registerer
	// TracerProvider receives Herald's OpenTelemetry spans: an enqueue,
	// and for each delivery its claim, policy check and provider call,
	// in the trace of the request or record that triggered it (the
	// notification keeps the trace's traceparent for the worker). Nil or
	// a no-op provider: tracing is off and costs nothing. Herald builds
	// no SDK itself; the CLI builds one from its tracing settings.
	TracerProvider trace.TracerProvider
}

// Limits bounds the storage and the sends one call can cause. A request
// over a limit is refused with invalid_argument naming the field and the
// limit. Zero values take the defaults; negative values are refused.
type Limits struct {
	// MaxDataBytes bounds a trigger's data (the bytes of every key and
	// value), on every channel: in_app included, which has no provider to
	// refuse a large payload. Default 4096, what FCM and APNs carry.
	MaxDataBytes int
	// MaxTriggerBytes bounds recipients × content bytes (title, body and
	// data) of one trigger: the notification and inbox rows it writes.
	// Default 8 MiB (1000 recipients × 8 KiB).
	MaxTriggerBytes int
	// MaxDevicesPerUser bounds a user's devices, and so the sends of one
	// push notification. Registering one more evicts the user's device
	// seen longest ago (refusing it would lock out a user whose stale
	// devices linger until device_max_age), in the registration's own
	// transaction. Default 20.
	MaxDevicesPerUser int
	// MaxPreferenceTypes bounds the types listed in one user's
	// preferences. Default 200.
	MaxPreferenceTypes int
	// HistoryScan bounds the notifications one page of ListHistory with a
	// status filter examines: a notification's status is derived from its
	// deliveries, so no index finds one status, and the page walks the
	// filter's notifications newest first until it is full or this many
	// were examined. A page the bound stops holds what was found (fewer
	// than the limit, possibly none) and a cursor to go on from. Default
	// 2000 (store.DefaultHistoryScan).
	HistoryScan int
	// MaxReceipts bounds the receipts of one RecordReceipts call (one POST
	// /v1/receipts). Default 100: what an app that was offline for a while
	// queues, in one transaction that stays short.
	MaxReceipts int
	// MaxEngagementRows bounds the rows of one engagement report (groups,
	// or groups × hours or days): a report that would hold more is refused
	// with invalid_argument, asking for a shorter range, fewer groups or a
	// coarser interval. Default 5000.
	MaxEngagementRows int
	// MaxDigestItems bounds the items one digest keeps (issue 36 item 1):
	// a type's digest.max_items may not exceed it, and a digest that
	// reaches its max_items is sent at once. Default 1000.
	MaxDigestItems int
	// MaxEscalationSteps bounds the steps of a type's escalation (issue
	// 36 item 3): each step is a row per notification, written with it.
	// Default 5.
	MaxEscalationSteps int
}

// Default limits (Limits documents each).
const (
	DefaultMaxDataBytes       = 4096
	DefaultMaxTriggerBytes    = 8 << 20
	DefaultMaxDevicesPerUser  = 20
	DefaultMaxPreferenceTypes = 200
	DefaultHistoryScan        = store.DefaultHistoryScan
	DefaultMaxReceipts        = 100
	DefaultMaxEngagementRows  = 5000
	DefaultMaxDigestItems     = 1000
	DefaultMaxEscalationSteps = 5
)

// withDefaults fills the zero limits and refuses negative ones.
func (l Limits) withDefaults() (Limits, error) {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxDataBytes", &l.MaxDataBytes, DefaultMaxDataBytes},
		{"MaxTriggerBytes", &l.MaxTriggerBytes, DefaultMaxTriggerBytes},
		{"MaxDevicesPerUser", &l.MaxDevicesPerUser, DefaultMaxDevicesPerUser},
		{"MaxPreferenceTypes", &l.MaxPreferenceTypes, DefaultMaxPreferenceTypes},
		{"HistoryScan", &l.HistoryScan, DefaultHistoryScan},
		{"MaxReceipts", &l.MaxReceipts, DefaultMaxReceipts},
		{"MaxEngagementRows", &l.MaxEngagementRows, DefaultMaxEngagementRows},
		{"MaxDigestItems", &l.MaxDigestItems, DefaultMaxDigestItems},
		{"MaxEscalationSteps", &l.MaxEscalationSteps, DefaultMaxEscalationSteps},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return l, fmt.Errorf("herald: Limits.%s %d must be positive", f.name, *f.v)
		}
	}
	if l.MaxReceipts > store.MaxReceiptBatch {
		return l, fmt.Errorf("herald: Limits.MaxReceipts %d is over %d", l.MaxReceipts, store.MaxReceiptBatch)
	}
	return l, nil
}

// WorkerConfig tunes the delivery workers; zero values take the defaults
// documented on each field.
type WorkerConfig struct {
	BatchSize     int           // claim size, default 256
	Concurrency   int           // in-flight sends, default 256
	LeaseDuration time.Duration // default 30 s
	SendTimeout   time.Duration // default 10 s
	PollInterval  time.Duration // default 1 s (S4.2)
	ReapInterval  time.Duration // default 5 s; the elected leader reaps
	StoreTimeout  time.Duration // bounds each store call of the worker, default lease_duration
	// OutcomeMargin is the lease a send must leave after its timeout to
	// record its outcome: a send starts only with SendTimeout +
	// OutcomeMargin of lease left. Default 2 s (less for a lease too short
	// for it: half of what SendTimeout leaves).
	OutcomeMargin time.Duration
	// RollupInterval is how often each instance adds the sent and failed
	// deliveries it counted to the per-minute rollup the overview reads
	// (one small write per interval, never one per delivery). Default
	// 30 s; negative: no rollup.
	RollupInterval time.Duration
	// RollupRetention is how long the rollup's minutes are kept; the
	// elected leader prunes older ones every MaintenanceInterval. Default
	// 24 h; negative: kept forever.
	RollupRetention time.Duration
}

// ReminderConfig tunes the reminder scheduler, a leader-only service
// (S2.4–S2.7); zero values take the defaults documented on each field.
type ReminderConfig struct {
	// Lease is how long a scheduler holds the due reminders it claimed; a
	// crashed scheduler's claims are taken over once it ends. Default
	// 30 s (the seed's 6 h would hold a reminder back for hours).
	Lease time.Duration
	// BatchSize is how many due reminders one claim takes (S2.7
	// fetch_limit). Default 500.
	BatchSize int
	// Gap is the least time between two occurrences of one user's
	// reminders; a colliding one moves by a deterministic jitter (S2.5).
	// Default 60 s; negative: no gap.
	Gap time.Duration
	// PollInterval bounds how long an idle scheduler waits before looking
	// for due reminders written on another instance. Default 500 ms.
	PollInterval time.Duration
	// Disabled turns the scheduler off on this instance.
	Disabled bool
	// Retention is how long a stopped reminder is kept (its stop reason
	// readable) before the leader deletes it. Default 30 days; negative:
	// forever.
	Retention time.Duration
}

// Defaults of the retentions.
const (
	DefaultInterestRetention   = 90 * 24 * time.Hour
	DefaultEngagementRetention = 400 * 24 * time.Hour
	DefaultReminderRetention   = 30 * 24 * time.Hour
	DefaultEventRetention      = 7 * 24 * time.Hour
)

// Client is Herald's entry point for an embedding program.
type Client struct {
	cfg       Config
	store     store.Store
	worker    *dispatch.Worker
	scheduler *reminder.Scheduler
	campaigns *campaign.Runner
	// ruleRunner is the rule runner, when this instance runs it.
	ruleRunner *fanout.Runner
	// compiledRules caches the rules Track applies, compiled.
	compiledRules compiledRules
	// compiledVersions caches the types' template versions, compiled.
	compiledVersions compiledVersions
	// ruleGuesses keeps the rules whose inline batch the last event of
	// each source and name wrote, to read the next one's audiences ahead
	// (rulereadahead.go).
	ruleGuesses ruleGuesses
	// audiences resolves the rule runs' audiences (dry runs and the
	// runner).
	audiences audience.Resolver
	// caller makes the audience webhooks' and content fetches' calls.
	caller *callout.Caller
	// webhookOut is the guarded client outbound webhooks go through;
	// webhooks is this instance's dispatcher (nil without workers).
	webhookOut *outbound.Client
	webhooks   *webhook.Dispatcher
	// digests is this instance's digest worker (nil without workers).
	digests *digest.Worker
	// escalations is this instance's escalation worker (nil without
	// workers).
	escalations *escalation.Worker
	elector     *leadership.Elector
	pruners     maintenance.Pruners
	types       *policy.Catalog
	// scheduledTypes lists the types users chose digest schedules for
	// (digests.go).
	scheduledTypes *scheduledTypes
	unsub          *unsubscriber // nil without Config.Unsubscribe.Secret
	track          *emailTracker // nil without Config.EmailTracking.Secret
	hub            *realtime.Hub
	metrics        *metrics.Metrics
	// tracer is nil when tracing is off (internal/tracing.Tracer).
	tracer trace.Tracer
	log    *slog.Logger
	now    func() time.Time

	mu         sync.Mutex
	started    bool
	stopListen context.CancelFunc
	listeners  sync.WaitGroup
}

// NewClient validates cfg, applies defaults and builds a Client. It does not
// start the workers: call Start.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Store == nil {
		return nil, errors.New("herald: Config.Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DefaultTimezone == "" {
		cfg.DefaultTimezone = "Asia/Seoul"
	}
	if _, err := loadTimezone("default_timezone", cfg.DefaultTimezone); err != nil {
		return nil, fmt.Errorf("herald: %w", err)
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.MaxAttempts < 1 || cfg.MaxAttempts > 100 {
		return nil, fmt.Errorf("herald: MaxAttempts %d must be between 1 and 100", cfg.MaxAttempts)
	}
	if cfg.InterestRetention == 0 {
		cfg.InterestRetention = DefaultInterestRetention
	}
	if cfg.EngagementRetention == 0 {
		cfg.EngagementRetention = DefaultEngagementRetention
	}
	if cfg.Reminders.Retention == 0 {
		cfg.Reminders.Retention = DefaultReminderRetention
	}
	if err := cfg.Rules.normalize(); err != nil {
		return nil, err
	}
	if cfg.Worker.RollupRetention == 0 {
		cfg.Worker.RollupRetention = DefaultRollupRetention
	}
	if cfg.IdempotencyRetention == 0 {
		cfg.IdempotencyRetention = 24 * time.Hour
	}
	if cfg.CancelWait == 0 {
		cfg.CancelWait = cmp.Or(cfg.Worker.LeaseDuration, dispatch.DefaultLeaseDuration) +
			cmp.Or(cfg.Worker.ReapInterval, defaultReapInterval)
	}
	if cfg.DeviceMaxAge == 0 {
		cfg.DeviceMaxAge = 270 * 24 * time.Hour
	}
	if cfg.DeviceTokenTakeoverAfter == 0 {
		cfg.DeviceTokenTakeoverAfter = 24 * time.Hour
	}
	if cfg.MaintenanceInterval == 0 {
		cfg.MaintenanceInterval = time.Hour
	}
	if cfg.Retention == 0 {
		cfg.Retention = 30 * 24 * time.Hour
	}
	if cfg.Owner == "" {
		cfg.Owner = dispatch.DefaultOwner()
	}
	if cfg.PushRouting == nil {
		cfg.PushRouting = map[heraldtype.Platform]string{}
		if _, ok := cfg.Providers["fcm"]; ok {
			for _, p := range []heraldtype.Platform{heraldtype.PlatformAndroid, heraldtype.PlatformIOS, heraldtype.PlatformWeb} {
				cfg.PushRouting[p] = "fcm"
			}
		}
	}
	if cfg.ChannelRouting == nil {
		cfg.ChannelRouting = map[heraldtype.Channel]string{}
		for ch, name := range map[heraldtype.Channel]string{heraldtype.ChannelSMS: "twilio", heraldtype.ChannelEmail: "smtp"} {
			if _, ok := cfg.Providers[name]; ok {
				cfg.ChannelRouting[ch] = name
			}
		}
	}
	for ch, name := range cfg.ChannelRouting {
		if ch != heraldtype.ChannelSMS && ch != heraldtype.ChannelEmail {
			return nil, fmt.Errorf("herald: ChannelRouting: channel %q is not sms or email", ch)
		}
		if _, ok := cfg.Providers[name]; !ok {
			return nil, fmt.Errorf("herald: ChannelRouting: channel %s routes to provider %q, which is not configured", ch, name)
		}
	}
	limits, err := cfg.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.Limits = limits
	if cfg.Templates, err = cfg.Templates.withDefaults(); err != nil {
		return nil, err
	}
	if cfg.InboxHeartbeat <= 0 {
		cfg.InboxHeartbeat = DefaultInboxHeartbeat
	}
	if cfg.InboxPollInterval <= 0 {
		cfg.InboxPollInterval = 5 * time.Second
	}
	for platform, name := range cfg.PushRouting {
		if !platform.Valid() {
			return nil, fmt.Errorf("herald: PushRouting: unknown platform %q", platform)
		}
		if _, ok := cfg.Providers[name]; !ok {
			return nil, fmt.Errorf("herald: PushRouting: platform %s routes to provider %q, which is not configured", platform, name)
		}
	}
	types, engine, err := newPolicy(cfg)
	if err != nil {
		return nil, err
	}
	unsub, err := newUnsubscriber(cfg.Unsubscribe)
	if err != nil {
		return nil, err
	}
	track, err := newEmailTracker(cfg.EmailTracking)
	if err != nil {
		return nil, err
	}
	if track == nil {
		for name, tc := range cfg.Types {
			if tc.EmailTracking {
				return nil, fmt.Errorf("herald: type %q: email_tracking needs EmailTracking.Secret", name)
			}
		}
	}
	caller, err := newCaller(cfg)
	if err != nil {
		return nil, err
	}
	audiences, err := newAudiences(cfg, cfg.Store, caller)
	if err != nil {
		return nil, err
	}
	c := &Client{
		types:     types,
		unsub:     unsub,
		track:     track,
		audiences: audiences,
		caller:    caller,
		cfg:       cfg,
		// The cache's bound is fixed at construction (issue 31 item 4).
		compiledRules:  compiledRules{limit: cfg.Rules.CompiledCache},
		scheduledTypes: &scheduledTypes{load: cfg.Store.DigestScheduleTypes},
		store:          cfg.Store,
		metrics:        metrics.New(cfg.Registerer),
		tracer:         tracing.Tracer(cfg.TracerProvider),
		hub:            realtime.NewHub(),
		log:            slog.New(logging.Report(cfg.Logger.Handler(), cfg.OnError)),
		now:            cfg.Now,
	}
	// Declared types get their own type label from the moment the catalog
	// sees them (configuration now, PUT /v1/types when first resolved);
	// any other type is "other".
	types.OnDeclared(func(name string) { c.metrics.DeclareTypes(name) })
	if !cfg.DisableWorkers {
		senders := make(map[string]dispatch.Sender, len(cfg.Providers))
		for name, p := range cfg.Providers {
			senders[name] = p
		}
		w, err := dispatch.New(dispatch.Config{
			Store:          cfg.Store,
			Senders:        senders,
			Owner:          cfg.Owner,
			BatchSize:      cfg.Worker.BatchSize,
			Concurrency:    cfg.Worker.Concurrency,
			LeaseDuration:  cfg.Worker.LeaseDuration,
			SendTimeout:    cfg.Worker.SendTimeout,
			StoreTimeout:   cfg.Worker.StoreTimeout,
			OutcomeMargin:  cfg.Worker.OutcomeMargin,
			RollupInterval: cfg.Worker.RollupInterval,
			PollInterval:   cfg.Worker.PollInterval,
			Retry:          cfg.Retry,
			Now:            cfg.Now,
			Logger:         c.Logger(ComponentDelivery),
			Metrics:        c.metrics,
			Policy:         engine,
			PolicyRetry:    cfg.PolicyRetry,
			PolicyMaxDelay: cfg.PolicyMaxDelay,
			// An in-app item written when its notification fell due
			// reaches this instance's open streams at once.
			InboxWritten: func(users []string) {
				for _, u := range users {
					c.hub.Publish(u)
				}
			},
			ListUnsubscribe: c.listUnsubscribe,
			EmailHTML:       c.emailHTML,
			Render:          c.renderDelivery,
			Tracer:          c.tracer,
		})
		if err != nil {
			return nil, fmt.Errorf("herald: %w", err)
		}
		c.worker = w
	}
	if err := c.newWebhooks(cfg); err != nil {
		return nil, err
	}
	if err := c.newDigests(cfg); err != nil {
		return nil, err
	}
	if err := c.newEscalations(cfg); err != nil {
		return nil, err
	}
	if err := c.newElector(); err != nil {
		return nil, err
	}
	return c, nil
}

// Start launches the delivery workers, the leader election with its
// leader-only services (lease reaper, pruning, retention, queue vacuum) and, on a store shared by several
// instances, the cross-instance wake-ups. The Client serves API calls
// whether or not it is started.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("herald: client already started")
	}
	if c.worker != nil {
		// The workers outlive ctx: cancelling a start-up context must not
		// abort in-flight sends. Stop is the graceful way down.
		if err := c.worker.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	if c.webhooks != nil {
		c.webhooks.Start(context.WithoutCancel(ctx))
	}
	if c.digests != nil {
		c.digests.Start(context.WithoutCancel(ctx))
	}
	if c.escalations != nil {
		c.escalations.Start(context.WithoutCancel(ctx))
	}
	c.elector.Start()
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stopListen = cancel
	c.listeners.Go(func() { c.forwardWakeUps(lctx) })
	c.listeners.Go(func() { c.forwardInboxEvents(lctx) })
	c.started = true
	return nil
}

// forwardWakeUps wakes the local workers whenever another instance
// enqueued work (PostgreSQL LISTEN/NOTIFY, S4.2).
func (c *Client) forwardWakeUps(ctx context.Context) {
	n, ok := c.store.(store.Notifier)
	if !ok || c.worker == nil {
		return
	}
	for range n.Notifications(ctx) {
		c.worker.Notify()
	}
}

// Stop stops claiming new work, waits for in-flight sends (until ctx is
// done), records their outcomes and hands leadership over. It does not
// close the store.
func (c *Client) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil
	}
	c.started = false
	c.stopListen()
	c.listeners.Wait()
	var errs []error
	if c.worker != nil {
		errs = append(errs, c.worker.Stop(ctx))
	}
	if c.webhooks != nil {
		errs = append(errs, c.webhooks.Stop(ctx))
	}
	if c.digests != nil {
		errs = append(errs, c.digests.Stop(ctx))
	}
	if c.escalations != nil {
		errs = append(errs, c.escalations.Stop(ctx))
	}
	errs = append(errs, c.elector.Stop(ctx))
	return errors.Join(errs...)
}

// runOnce runs one synchronous worker cycle (tests with an injected clock).
func (c *Client) runOnce(ctx context.Context) (int, error) {
	if c.worker == nil {
		return 0, errors.New("herald: workers are disabled")
	}
	return c.worker.RunOnce(ctx)
}

// Ready reports whether the Client can serve: the store answers.
func (c *Client) Ready(ctx context.Context) error {
	return c.store.Ping(ctx)
}

// IsLeader reports whether this instance is the elected leader, the one
// that runs the leader-only services (lease reaper, pruning, …).
func (c *Client) IsLeader() bool { return c.elector.IsLeader() }

// ErrLocked is returned by RunExclusive when another instance holds the
// lock.
var ErrLocked = maintenance.ErrLocked

// RunExclusive runs fn on at most one instance of the cluster, with
// ShedLock's semantics (S3.7): the named lock is held for at most atMost
// (fn's context ends then) and at least atLeast, so a job scheduled on
// every instance at 09:00 runs once. It returns ErrLocked when another
// instance holds the lock.
func (c *Client) RunExclusive(ctx context.Context, name string, atMost, atLeast time.Duration, fn func(context.Context) error) error {
	if err := validText("name", name, 128); err != nil || name == "" || name == leadership.Lock {
		return heraldtype.FieldErrorf("name", "must be a non-empty lock name other than %s", leadership.Lock)
	}
	return maintenance.RunLocked(ctx, c.store, c.cfg.Owner, name, c.now, atMost, atLeast, fn)
}

// MaintenanceResult counts what RunMaintenance removed.
type MaintenanceResult struct {
	Devices, Triggers, Notifications int
	// Policy counts expired dedupe locks and daily counts deleted.
	Policy int
	// Interests and Reminders count interests older than
	// InterestRetention and reminders stopped longer than
	// ReminderConfig.Retention ago.
	Interests, Reminders int
	// CampaignRuns counts finished campaign runs deleted (with their
	// recipient records).
	CampaignRuns int
	// Events counts event records and finished rule runs older than
	// RuleConfig.EventRetention deleted.
	Events int
	// Rollup counts the delivery rollup's minutes older than
	// WorkerConfig.RollupRetention deleted.
	Rollup int
	// Engagement counts the engagement counters' rows older than
	// EngagementRetention deleted.
	Engagement int
	// Webhooks counts outbound webhook messages sent or dead longer than
	// Retention ago deleted.
	Webhooks int
	// Digests counts digests sent or failed longer than Retention ago
	// deleted, with their items.
	Digests int
}

// RunMaintenance prunes, once and now: devices not seen within
// DeviceMaxAge, idempotency records older than IdempotencyRetention, and
// notifications and campaign runs finished longer than Retention ago. The elected leader also
// does this every MaintenanceInterval.
func (c *Client) RunMaintenance(ctx context.Context) (MaintenanceResult, error) {
	r, err := c.pruners.Prune(ctx, c.now())
	return MaintenanceResult(r), err
}
