package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	koanfenv "github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/console"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/campaign"
	"github.com/heraldhq/herald/internal/digest"
	"github.com/heraldhq/herald/internal/escalation"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// Config is everything `herald serve` can be told, from a YAML file
// (--config), then HERALD_* environment variables, then flags — later
// sources win. The CLI is the only package that knows about files, env and
// flags (STYLE.md); every other package takes a typed Config.
//
// Environment variables map to keys by dropping HERALD_, lower-casing and
// turning "__" into a nesting dot: HERALD_WORKER__BATCH_SIZE=200 sets
// worker.batch_size.
type Config struct {
	// Listen is the HTTP API address. Default 127.0.0.1:8080: until API keys
	// exist (security issue) Herald only listens on loopback by default.
	Listen string `koanf:"listen"`
	// Database is a SQLite file path (or sqlite:path), or a PostgreSQL URL
	// (postgres://…) to scale out. Default herald.db. HERALD_DATABASE_URL
	// sets it too.
	Database string `koanf:"database"`
	// DatabaseSchema is the PostgreSQL schema Herald's tables live in.
	DatabaseSchema string `koanf:"database_schema"`
	// DatabaseMaxConns bounds the PostgreSQL connection pool per instance.
	DatabaseMaxConns int `koanf:"database_max_conns"`
	// DatabaseEnqueueConcurrency bounds the PostgreSQL enqueue
	// transactions running at once, and apart the rule engine's event
	// transactions; triggers (events) arriving meanwhile are committed
	// together (group commit). 0: the default, 2; negative: one
	// transaction per trigger (event).
	DatabaseEnqueueConcurrency int `koanf:"database_enqueue_concurrency"`
	// DefaultTimezone for users registered without one (S2.2).
	DefaultTimezone string `koanf:"default_timezone"`
	// MaxAttempts per delivery, first attempt included (S0.3: 4).
	MaxAttempts int `koanf:"max_attempts"`
	// IdempotencyRetention: how long an Idempotency-Key is remembered
	// (0: forever).
	IdempotencyRetention time.Duration `koanf:"idempotency_retention"`
	// CancelWait: how long a cancel waits for deliveries in flight to end
	// (0: worker.lease_duration + worker.reap_interval; negative: no wait).
	CancelWait time.Duration `koanf:"cancel_wait"`
	// InterestRetention: interests last shown longer ago are pruned (90
	// days; 0: kept forever).
	InterestRetention time.Duration `koanf:"interest_retention"`
	// DeviceMaxAge: devices not seen for this long are pruned (270 days;
	// 0: never).
	DeviceMaxAge time.Duration `koanf:"device_max_age"`
	// DeviceTokenTakeoverAfter: a user token takes a push token from
	// another user's device only once that device was not seen for this
	// long (24 h; 0: never, only a server key moves it).
	DeviceTokenTakeoverAfter time.Duration `koanf:"device_token_takeover_after"`
	// Retention: notifications whose deliveries all finished this long ago
	// are deleted with their timeline (0: kept forever).
	Retention time.Duration `koanf:"retention"`
	// MaintenanceInterval: how often the elected leader prunes (0: never;
	// the lease reaper still runs).
	MaintenanceInterval time.Duration `koanf:"maintenance_interval"`
	// LeaderTTL: a crashed leader's maintenance moves to another instance
	// after at most this long.
	LeaderTTL time.Duration `koanf:"leader_ttl"`
	// MaxBodyBytes bounds an HTTP request body.
	MaxBodyBytes int64 `koanf:"max_body_bytes"`
	// MaxDataBytes, MaxTriggerBytes, MaxDevicesPerUser and
	// MaxPreferenceTypes are herald.Limits (issue 18).
	MaxDataBytes       int `koanf:"max_data_bytes"`
	MaxTriggerBytes    int `koanf:"max_trigger_bytes"`
	MaxDevicesPerUser  int `koanf:"max_devices_per_user"`
	MaxPreferenceTypes int `koanf:"max_preference_types"`
	// HistoryScan bounds the notifications one page of the history with a
	// status filter examines (herald.Limits.HistoryScan; issue 34 item 3).
	HistoryScan int `koanf:"history_scan"`
	// MaxReceipts bounds the receipts of one POST /v1/receipts
	// (herald.Limits.MaxReceipts; issue 35 item 1).
	MaxReceipts int `koanf:"max_receipts"`
	// MaxEngagementRows bounds the rows of one engagement report
	// (herald.Limits.MaxEngagementRows; issue 35 item 3).
	MaxEngagementRows int `koanf:"max_engagement_rows"`
	// MaxDigestItems bounds the items one digest keeps, and so every
	// type's digest.max_items (herald.Limits.MaxDigestItems; issue 36
	// item 1).
	MaxDigestItems int `koanf:"max_digest_items"`
	// MaxEscalationSteps bounds every type's escalation steps
	// (herald.Limits.MaxEscalationSteps; issue 36 item 3).
	MaxEscalationSteps int `koanf:"max_escalation_steps"`
	// EngagementRetention: the engagement counters' hours are kept this
	// long (400 days; 0: forever; issue 35 item 3).
	EngagementRetention time.Duration `koanf:"engagement_retention"`
	// ShutdownTimeout bounds a graceful stop.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	Log             LogConfig     `koanf:"log"`
	Worker          WorkerConfig  `koanf:"worker"`
	// Reminders tunes the reminder scheduler (README: Reminders and
	// schedules).
	Reminders RemindersConfig `koanf:"reminders"`
	// Kafka: intake of notification requests and events (issue 20; README:
	// Events and notification requests over Kafka).
	Kafka KafkaConfig `koanf:"kafka"`
	// Campaigns tunes the campaign runner (README: Reminders and
	// schedules, Campaigns).
	Campaigns CampaignsConfig `koanf:"campaigns"`
	// Rules tunes the rule runner and the events' retention (README:
	// Event rules).
	Rules RulesConfig `koanf:"rules"`
	// Retry overrides the backoff per error class: temporary, throttled.
	Retry map[string]RetryConfig `koanf:"retry"`
	// Types declares notification types: channels, priority,
	// dedupe_window, quiet_hours, counts_toward_cap, guarantee, critical
	// (README: Delivery policy). PUT /v1/types/{type} overrides them.
	Types map[string]TypeConfig `koanf:"types"`
	// PolicyStore holds the delivery policy's dedupe locks and daily
	// counts: "" (the database) or a redis:// URL.
	PolicyStore string `koanf:"policy_store"`
	// PolicyRedisPrefix prefixes the policy's Redis keys (default
	// "herald:policy:").
	PolicyRedisPrefix string `koanf:"policy_redis_prefix"`
	// DailyCap is the default number of capped notifications per user and
	// local day (default 10).
	DailyCap int           `koanf:"daily_cap"`
	FCM      FCMConfig     `koanf:"fcm"`
	APNs     APNsConfig    `koanf:"apns"`
	WebPush  WebPushConfig `koanf:"webpush"`
	Twilio   TwilioConfig  `koanf:"twilio"`
	SMTP     SMTPConfig    `koanf:"smtp"`
	// PushRouting maps a platform (android, ios, web) to the provider that
	// delivers its pushes (fcm, apns, webpush). Default: APNs for iOS and
	// Web Push for web when configured, FCM otherwise.
	PushRouting map[string]string `koanf:"push_routing"`
	// Dev is where `serve --dev` starts the provider emulators.
	Dev DevConfig `koanf:"dev"`
	// Auth: API keys, user tokens, /metrics protection (security.go).
	Auth AuthConfig `koanf:"auth"`
	// RateLimit: requests per API key and per user.
	RateLimit RateLimitConfig `koanf:"rate_limit"`
	// TLS: serve HTTPS (--tls-cert, --tls-key).
	TLS TLSConfig `koanf:"tls"`
	// HTTP: timeouts and connection limits of the HTTP server.
	HTTP HTTPConfig `koanf:"http"`
	// Unsubscribe: one-click unsubscribe links in e-mails (unsubscribe.go).
	Unsubscribe UnsubscribeConfig `koanf:"unsubscribe"`
	// EmailTracking: the open pixels and tracked links of e-mails whose
	// type turns tracking on (emailtracking.go).
	EmailTracking EmailTrackingConfig `koanf:"email_tracking"`
	// Callout: what audience webhooks and content fetches may reach, and
	// their auth headers (callout.go).
	Callout CalloutConfig `koanf:"callout"`
	// Templates bounds every render of a rule's or a campaign's message
	// templates (herald.TemplateConfig).
	Templates TemplatesConfig `koanf:"templates"`
	// Console: the operator console at /console/: its sign-in sessions
	// (security.go) and its pages (console.go).
	Console ConsoleConfig `koanf:"console"`
	// Tracing: OpenTelemetry spans exported over OTLP/HTTP; off unless
	// tracing.endpoint is set (tracing.go).
	Tracing TracingConfig `koanf:"tracing"`
	// Webhooks tunes outbound webhooks (herald.WebhookConfig; issue 35
	// item 4).
	Webhooks WebhooksConfig `koanf:"webhooks"`
	// Digests tunes the digest worker (herald.DigestWorkerConfig; issue
	// 36 item 1): poll_interval, batch_size, lease, and enabled (run it
	// on this instance).
	Digests DigestsConfig `koanf:"digests"`
	// Escalations tunes the escalation worker
	// (herald.EscalationWorkerConfig; issue 36 item 3): poll_interval,
	// batch_size, lease, and enabled (run it on this instance).
	Escalations EscalationsConfig `koanf:"escalations"`
}

// EscalationsConfig is `escalations:` in the configuration: the same
// keys as `digests:`, for the escalation worker.
type EscalationsConfig = DigestsConfig

// DigestsConfig is `digests:` in the configuration.
type DigestsConfig struct {
	PollInterval time.Duration `koanf:"poll_interval"`
	BatchSize    int           `koanf:"batch_size"`
	Lease        time.Duration `koanf:"lease"`
	Enabled      bool          `koanf:"enabled"`
}

// WebhooksConfig is `webhooks:` in the configuration, herald.WebhookConfig:
// timeout (one send), retry_base and retry_max_delay (the backoff's first
// and largest ceiling), retry_for (how long a message is retried before it
// is dead), disable_after (an endpoint failing this long is disabled; 0:
// never), rotation_overlap (a rotated secret keeps signing this long),
// batch_size (sends in flight per instance), max_in_flight_per_endpoint
// (sends to one endpoint in flight per instance), poll_interval, and
// enabled (run the dispatcher on this instance).
type WebhooksConfig struct {
	Timeout         time.Duration `koanf:"timeout"`
	RetryBase       time.Duration `koanf:"retry_base"`
	RetryMaxDelay   time.Duration `koanf:"retry_max_delay"`
	RetryFor        time.Duration `koanf:"retry_for"`
	DisableAfter    time.Duration `koanf:"disable_after"`
	RotationOverlap time.Duration `koanf:"rotation_overlap"`
	BatchSize       int           `koanf:"batch_size"`
	// MaxInFlightPerEndpoint caps the sends to one endpoint in flight on
	// one instance.
	MaxInFlightPerEndpoint int           `koanf:"max_in_flight_per_endpoint"`
	PollInterval           time.Duration `koanf:"poll_interval"`
	Enabled                bool          `koanf:"enabled"`
}

// ConsoleConfig is `console:` in the configuration: how long an operator
// console session lasts (auth.SessionsConfig; both must be positive: a
// session that never ends is a key kept in a browser), and how often the
// console's live regions (the overview) refresh in the browser.
type ConsoleConfig struct {
	Refresh time.Duration `koanf:"refresh"`
	// SessionIdle ends a session not used for this long (30 min).
	SessionIdle time.Duration `koanf:"session_idle"`
	// SessionLifetime ends a session this long after sign-in, however
	// active (12 h; at most 720 h).
	SessionLifetime time.Duration `koanf:"session_lifetime"`
	// SecureCookie is "auto" (the default: the session cookie is Secure
	// when the request came over TLS) or "always" (behind a proxy that
	// ends TLS).
	SecureCookie string `koanf:"secure_cookie"`
}

// TracingConfig is `tracing:` in the configuration: endpoint (the OTLP/HTTP
// collector's URL, "" for off), headers (sent with every export, e.g. an
// API key), insecure (allows an http:// endpoint), sample_ratio (the share
// of new traces recorded, 0 to 1; a request's own sampling decision in its
// traceparent is kept) and service_name.
type TracingConfig struct {
	Endpoint    string            `koanf:"endpoint"`
	Headers     map[string]string `koanf:"headers"`
	Insecure    bool              `koanf:"insecure"`
	SampleRatio float64           `koanf:"sample_ratio"`
	ServiceName string            `koanf:"service_name"`
}

// TemplatesConfig is `templates:` in the configuration,
// herald.TemplateConfig: max_steps (range iterations and strings built by
// functions, per message), max_bytes (bytes built per message, written or
// not) and max_duration (a message's render time); apns_max_bytes,
// fcm_max_bytes (a push payload) and sms_max_segments (an SMS) for what a
// type's templates render. All must be positive.
type TemplatesConfig struct {
	MaxSteps       int           `koanf:"max_steps"`
	MaxBytes       int           `koanf:"max_bytes"`
	MaxDuration    time.Duration `koanf:"max_duration"`
	APNsMaxBytes   int           `koanf:"apns_max_bytes"`
	FCMMaxBytes    int           `koanf:"fcm_max_bytes"`
	SMSMaxSegments int           `koanf:"sms_max_segments"`
}

// HTTPConfig is `http:` in the configuration: httpapi.ConnConfig and the
// Server's per-request deadlines. 0 turns a limit off.
type HTTPConfig struct {
	ReadHeaderTimeout       time.Duration `koanf:"read_header_timeout"`
	ReadTimeout             time.Duration `koanf:"read_timeout"`
	WriteTimeout            time.Duration `koanf:"write_timeout"`
	IdleTimeout             time.Duration `koanf:"idle_timeout"`
	MaxHeaderBytes          int           `koanf:"max_header_bytes"`
	MaxConnections          int           `koanf:"max_connections"`
	MaxConnectionsPerClient int           `koanf:"max_connections_per_client"`
	// StoreTimeout bounds a request's store work (503 unavailable after it).
	StoreTimeout time.Duration `koanf:"store_timeout"`
	// The inbox's SSE streams: httpapi.StreamConfig.
	StreamMaxLifetime     time.Duration `koanf:"stream_max_lifetime"`
	StreamCredentialCheck time.Duration `koanf:"stream_credential_check"`
	MaxStreamsPerUser     int           `koanf:"max_streams_per_user"`
	MaxStreamsPerKey      int           `koanf:"max_streams_per_key"`
	// StreamHeartbeat: how often an idle inbox stream sends a heartbeat (an
	// SSE comment, a WebSocket ping): herald.Config.InboxHeartbeat.
	StreamHeartbeat time.Duration `koanf:"stream_heartbeat"`
	// CORSAllowedOrigins: web pages of these origins may call the API
	// from the browser (none by default; "*" for any).
	CORSAllowedOrigins []string `koanf:"cors_allowed_origins"`
	// PublicURL is Herald's URL as the outside world reaches it
	// ("https://herald.example.com"): the base of the unsubscribe and
	// tracked links in e-mails. In --dev, the address the API is bound
	// to if unset (a --listen port of 0 resolved).
	PublicURL string `koanf:"public_url"`
}

// streams is the httpapi.StreamConfig of c.
func (c HTTPConfig) streams() httpapi.StreamConfig {
	return httpapi.StreamConfig{MaxLifetime: off(c.StreamMaxLifetime), CheckInterval: off(c.StreamCredentialCheck),
		MaxPerUser: offInt(c.MaxStreamsPerUser), MaxPerKey: offInt(c.MaxStreamsPerKey)}
}

// conn is the httpapi.ConnConfig of c.
func (c HTTPConfig) conn() httpapi.ConnConfig {
	return httpapi.ConnConfig{ReadHeaderTimeout: off(c.ReadHeaderTimeout), IdleTimeout: off(c.IdleTimeout),
		MaxHeaderBytes: offInt(c.MaxHeaderBytes), MaxConns: offInt(c.MaxConnections),
		MaxConnsPerClient: offInt(c.MaxConnectionsPerClient)}
}

// offInt is off for a count: an explicit 0 is "no limit", negative to the
// component.
func offInt(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// LogConfig selects log level and format.
type LogConfig struct {
	Level  string `koanf:"level"`  // debug, info, warn, error
	Format string `koanf:"format"` // json or text
	// Debug names components whose debug lines are written whatever
	// Level says (S2.7's debug namespace; herald.LogComponents lists
	// them): [reminder, rules, kafka].
	Debug []string `koanf:"debug"`
}

// WorkerConfig is the worker: section, herald.WorkerConfig's file and
// environment names (the library's types carry no configuration tags: only
// the CLI knows files and variables).
type WorkerConfig struct {
	BatchSize     int           `koanf:"batch_size"`
	Concurrency   int           `koanf:"concurrency"`
	LeaseDuration time.Duration `koanf:"lease_duration"`
	SendTimeout   time.Duration `koanf:"send_timeout"`
	PollInterval  time.Duration `koanf:"poll_interval"`
	ReapInterval  time.Duration `koanf:"reap_interval"`
	StoreTimeout  time.Duration `koanf:"store_timeout"`
	OutcomeMargin time.Duration `koanf:"outcome_margin"`
	// RollupInterval and RollupRetention: the per-minute delivery rollup
	// the console's overview reads (herald.WorkerConfig).
	RollupInterval  time.Duration `koanf:"rollup_interval"`
	RollupRetention time.Duration `koanf:"rollup_retention"`
}

// RemindersConfig is the reminders: section, herald.ReminderConfig's file
// and environment names.
type RemindersConfig struct {
	Lease        time.Duration `koanf:"lease"`
	BatchSize    int           `koanf:"batch_size"`
	Gap          time.Duration `koanf:"gap"`
	PollInterval time.Duration `koanf:"poll_interval"`
	Enabled      bool          `koanf:"enabled"`
	// Retention: stopped reminders are deleted this long after they
	// stopped (0: kept forever).
	Retention time.Duration `koanf:"retention"`
}

// CampaignsConfig is the campaigns: section, herald.CampaignConfig's file
// and environment names.
type CampaignsConfig struct {
	BatchSize    int           `koanf:"batch_size"`
	Pause        time.Duration `koanf:"pause"`
	LockAtMost   time.Duration `koanf:"lock_at_most"`
	LockAtLeast  time.Duration `koanf:"lock_at_least"`
	PollInterval time.Duration `koanf:"poll_interval"`
	Enabled      bool          `koanf:"enabled"`
	// FetchMaxAnswer, FetchMaxItems, FetchMaxFields and FetchMaxValues
	// bound one content-fetch answer (issue 31 item 3).
	FetchMaxAnswer int64 `koanf:"fetch_max_answer"`
	FetchMaxItems  int   `koanf:"fetch_max_items"`
	FetchMaxFields int   `koanf:"fetch_max_fields"`
	FetchMaxValues int   `koanf:"fetch_max_values"`
}

// RulesConfig is the rules: section, herald.RuleConfig's file and
// environment names.
type RulesConfig struct {
	BatchSize      int           `koanf:"batch_size"`
	Pause          time.Duration `koanf:"pause"`
	Concurrency    int           `koanf:"concurrency"`
	PollInterval   time.Duration `koanf:"poll_interval"`
	EventRetention time.Duration `koanf:"event_retention"`
	Enabled        bool          `koanf:"enabled"`
	// AudienceRetry, WebhookTimeout, WebhookMaxTimeout and
	// WebhookMaxAnswer bound the audience sources and webhooks (issue 20
	// item 3).
	AudienceRetry     time.Duration `koanf:"audience_retry"`
	WebhookTimeout    time.Duration `koanf:"webhook_timeout"`
	WebhookMaxTimeout time.Duration `koanf:"webhook_max_timeout"`
	WebhookMaxAnswer  int64         `koanf:"webhook_max_answer"`
	// DefaultAudience and MaxAudience bound a rule's audience limit.
	DefaultAudience int `koanf:"default_audience"`
	MaxAudience     int `koanf:"max_audience"`
	// MaxPerEvent, RecordedDecisions and CompiledCache bound the work and
	// the record of one event (issue 31 item 4).
	MaxPerEvent       int `koanf:"max_per_event"`
	RecordedDecisions int `koanf:"recorded_decisions"`
	CompiledCache     int `koanf:"compiled_cache"`
	// InlineRecipients bounds the audience whose only batch is written
	// with its event (issue 39 item 3); 0 turns it off; above BatchSize
	// it is BatchSize.
	InlineRecipients int `koanf:"inline_recipients"`
}

// TypeConfig is one entry of the types: section, herald.TypeConfig's file
// names (README: Delivery policy).
type TypeConfig struct {
	Channels        []heraldtype.Channel `koanf:"channels"`
	Priority        heraldtype.Priority  `koanf:"priority"`
	DedupeWindow    string               `koanf:"dedupe_window"`
	QuietHours      *bool                `koanf:"quiet_hours"`
	CountsTowardCap *bool                `koanf:"counts_toward_cap"`
	Guarantee       heraldtype.Guarantee `koanf:"guarantee"`
	Critical        bool                 `koanf:"critical"`
	Transactional   bool                 `koanf:"transactional"`
	EmailTracking   bool                 `koanf:"email_tracking"`
	Digest          *herald.DigestConfig `koanf:"digest"`
	// Escalate is the type's escalation steps (issue 36 item 3).
	Escalate []herald.EscalationStepConfig `koanf:"escalate"`
}

// RetryConfig is one error class's backoff.
type RetryConfig struct {
	Base   time.Duration `koanf:"base"`
	Factor float64       `koanf:"factor"`
	Max    time.Duration `koanf:"max"`
	Jitter *bool         `koanf:"jitter"`
}

// FCMConfig configures the FCM provider. Credentials come from a file or
// from the environment (HERALD_FCM__CREDENTIALS_JSON); they are never logged.
type FCMConfig struct {
	CredentialsFile string `koanf:"credentials_file"`
	CredentialsJSON string `koanf:"credentials_json"`
	ProjectID       string `koanf:"project_id"`
	// Endpoint overrides https://fcm.googleapis.com (an emulator).
	Endpoint string `koanf:"endpoint"`
	// QuotaMinRetryAfter is the least wait after QUOTA_EXCEEDED (default
	// 1 min, FCM's rule); lower it only against an emulator.
	QuotaMinRetryAfter time.Duration `koanf:"quota_min_retry_after"`
}

// defaultConfig is the zero-config setup: embedded SQLite in the current
// directory, loopback only.
func defaultConfig() Config {
	return Config{
		Listen:                   "127.0.0.1:8080",
		Database:                 "herald.db",
		DatabaseSchema:           "herald",
		DatabaseMaxConns:         20,
		Retention:                30 * 24 * time.Hour,
		DefaultTimezone:          "Asia/Seoul",
		MaxAttempts:              4,
		IdempotencyRetention:     24 * time.Hour,
		InterestRetention:        herald.DefaultInterestRetention,
		DeviceMaxAge:             270 * 24 * time.Hour,
		DeviceTokenTakeoverAfter: 24 * time.Hour,
		MaintenanceInterval:      time.Hour,
		LeaderTTL:                15 * time.Second,
		MaxBodyBytes:             1 << 20,
		MaxDataBytes:             herald.DefaultMaxDataBytes,
		MaxTriggerBytes:          herald.DefaultMaxTriggerBytes,
		MaxDevicesPerUser:        herald.DefaultMaxDevicesPerUser,
		MaxPreferenceTypes:       herald.DefaultMaxPreferenceTypes,
		HistoryScan:              herald.DefaultHistoryScan,
		MaxReceipts:              herald.DefaultMaxReceipts,
		MaxEngagementRows:        herald.DefaultMaxEngagementRows,
		MaxDigestItems:           herald.DefaultMaxDigestItems,
		MaxEscalationSteps:       herald.DefaultMaxEscalationSteps,
		EngagementRetention:      herald.DefaultEngagementRetention,
		ShutdownTimeout:          30 * time.Second,
		Log:                      LogConfig{Level: "info", Format: "json"},
		Dev: DevConfig{FCMAddr: "127.0.0.1:8081", APNsAddr: "127.0.0.1:8443", WebPushAddr: "127.0.0.1:8082",
			TwilioAddr: "127.0.0.1:8083", SMTPAddr: "127.0.0.1:2525", SMTPHTTP: "127.0.0.1:8084", RecommendAddr: "127.0.0.1:8086",
			KafkaAddr: "127.0.0.1:9092", SchemaRegistryAddr: "127.0.0.1:8085", WebhookAddr: "127.0.0.1:8087"},
		SMTP: SMTPConfig{Port: 587, TLS: "starttls"},
		Auth: AuthConfig{MetricsAuth: true, KeyCacheTTL: auth.DefaultKeyCacheTTL,
			NegativeCacheTTL: auth.DefaultNegativeCacheTTL, NegativeCacheSize: auth.DefaultNegativeCacheSize},
		// Generous for a backend, tight enough that one runaway client
		// cannot take the API down; one app user needs a few calls a
		// minute.
		// A client with a working credential never fails; 30 failures in a
		// row, then one a second, is room for a typo or a rotation and
		// nothing for a guesser. A person opens a mail and follows a link
		// or two; the generous public-link limit is for the mailbox
		// providers' image proxies, which fetch many users' pixels from
		// one address.
		RateLimit: RateLimitConfig{APIKey: RateConfig{PerSecond: 500, Burst: 1000}, User: RateConfig{PerSecond: 5, Burst: 20},
			FailedAuth: RateConfig{PerSecond: 1, Burst: 30}, FailedAuthClients: httpapi.DefaultMaxFailedAuthClients,
			PublicLinks: RateConfig{PerSecond: 50, Burst: 200}},
		HTTP: HTTPConfig{ReadHeaderTimeout: httpapi.DefaultReadHeaderTimeout, ReadTimeout: httpapi.DefaultReadTimeout,
			StoreTimeout: httpapi.DefaultStoreTimeout,
			WriteTimeout: httpapi.DefaultWriteTimeout, IdleTimeout: httpapi.DefaultIdleTimeout,
			MaxHeaderBytes: httpapi.DefaultMaxHeaderBytes, MaxConnections: httpapi.DefaultMaxConns,
			MaxConnectionsPerClient: httpapi.DefaultMaxConnsPerClient,
			StreamMaxLifetime:       httpapi.DefaultStreamMaxLifetime, StreamCredentialCheck: httpapi.DefaultStreamCheckInterval,
			MaxStreamsPerUser: httpapi.DefaultMaxStreamsPerUser, MaxStreamsPerKey: httpapi.DefaultMaxStreamsPerKey,
			StreamHeartbeat: herald.DefaultInboxHeartbeat},
		Worker: WorkerConfig{
			BatchSize: 256, Concurrency: 256, LeaseDuration: 30 * time.Second,
			SendTimeout: 10 * time.Second, PollInterval: time.Second, ReapInterval: 5 * time.Second,
			RollupInterval: herald.DefaultRollupInterval, RollupRetention: herald.DefaultRollupRetention,
		},
		Reminders: RemindersConfig{Lease: 30 * time.Second, BatchSize: 500, Gap: 60 * time.Second,
			PollInterval: 500 * time.Millisecond, Enabled: true, Retention: herald.DefaultReminderRetention},
		Kafka: defaultKafkaConfig(),
		Campaigns: CampaignsConfig{BatchSize: 500, Pause: 50 * time.Millisecond, LockAtMost: time.Hour,
			LockAtLeast: 5 * time.Minute, PollInterval: time.Second, Enabled: true,
			FetchMaxAnswer: campaign.DefaultFetchMaxAnswer, FetchMaxItems: campaign.DefaultFetchMaxItems,
			FetchMaxFields: campaign.DefaultFetchMaxFields, FetchMaxValues: campaign.DefaultFetchMaxValues},
		Rules: RulesConfig{BatchSize: 1000, Pause: 10 * time.Millisecond, Concurrency: 4, PollInterval: time.Second,
			EventRetention: herald.DefaultEventRetention, Enabled: true, AudienceRetry: 5 * time.Second,
			WebhookTimeout: 5 * time.Second, WebhookMaxTimeout: 30 * time.Second, WebhookMaxAnswer: 1 << 20,
			DefaultAudience: 100_000, MaxAudience: 1_000_000, MaxPerEvent: herald.DefaultRulesPerEvent,
			RecordedDecisions: herald.DefaultRecordedDecisions, CompiledCache: herald.DefaultCompiledRules,
			InlineRecipients: herald.DefaultInlineRecipients},
		Templates: TemplatesConfig{MaxSteps: herald.DefaultTemplateMaxSteps, MaxBytes: herald.DefaultTemplateMaxBytes,
			MaxDuration: herald.DefaultTemplateMaxDuration, APNsMaxBytes: herald.DefaultAPNsMaxBytes,
			FCMMaxBytes: herald.DefaultFCMMaxBytes, SMSMaxSegments: herald.DefaultSMSMaxSegments},
		Console: ConsoleConfig{SessionIdle: auth.DefaultSessionIdle, SessionLifetime: auth.DefaultSessionLifetime, SecureCookie: "auto",
			Refresh: console.DefaultRefresh},
		Tracing: TracingConfig{SampleRatio: 1, ServiceName: "herald"},
		Webhooks: WebhooksConfig{Timeout: webhook.DefaultTimeout, RetryBase: webhook.DefaultRetryBase,
			RetryMaxDelay: webhook.DefaultRetryMaxDelay, RetryFor: webhook.DefaultRetryFor,
			DisableAfter: webhook.DefaultDisableAfter, RotationOverlap: herald.DefaultRotationOverlap,
			BatchSize: webhook.DefaultBatchSize, MaxInFlightPerEndpoint: webhook.DefaultMaxInFlightPerEndpoint,
			PollInterval: webhook.DefaultPollInterval, Enabled: true},
		Digests: DigestsConfig{PollInterval: digest.DefaultPollInterval, BatchSize: digest.DefaultBatchSize,
			Lease: digest.DefaultLease, Enabled: true},
		Escalations: EscalationsConfig{PollInterval: escalation.DefaultPollInterval, BatchSize: escalation.DefaultBatchSize,
			Lease: escalation.DefaultLease, Enabled: true},
	}
}

// loadConfig reads defaults, then the file (if any), then the environment.
func loadConfig(path string, environ []string) (Config, error) {
	k := koanf.New(".")
	if path != "" {
		if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	err := k.Load(koanfenv.Provider(".", koanfenv.Opt{
		Prefix:      "HERALD_",
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(key, v string) (string, any) {
			key = strings.ToLower(strings.TrimPrefix(key, "HERALD_"))
			if strings.HasPrefix(key, "test_") {
				// The test suite's settings (HERALD_TEST_DATABASE_URL,
				// HERALD_TEST_ARTIFACTS, HERALD_TEST_CHROMIUM, …), which the
				// herald processes the end-to-end tests start inherit.
				return "", nil
			}
			switch key {
			case "config", "server":
				return "", nil // not config keys: --config's and --server's defaults
			case "database_url":
				key = "database" // the conventional name for a database URL
			case "bootstrap_api_key":
				key = "auth.bootstrap_key"
			case "api_key":
				return "", nil // the operator commands' credential (--api-key), not a server setting
			}
			return strings.ReplaceAll(key, "__", "."), v
		},
	}), nil)
	if err != nil {
		return Config{}, fmt.Errorf("environment: %w", err)
	}
	cfg := defaultConfig()
	err = k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		ErrorUnused:      true,
		TagName:          "koanf",
		Result:           &cfg,
	}})
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// off maps an explicit 0 in the config ("never", "off") onto the
// library's negative value: herald.Config reads zero as "the default",
// and here the defaults are already filled in (defaultConfig), so a zero
// can only have been written on purpose. A negative value, the old
// spelling of "off", stays off.
func off(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// inline is rules.inline_recipients as herald.RuleConfig takes it (0,
// off, is negative there), refused below 0 or above rules.batch_size: a
// run written with its event is one batch.
func (r RulesConfig) inline() (int, error) {
	batch := r.BatchSize
	if batch <= 0 {
		batch = herald.DefaultRuleBatchSize
	}
	switch {
	case r.InlineRecipients < 0:
		return 0, fmt.Errorf("config: rules.inline_recipients: %d must be 0 (off) or a number of recipients", r.InlineRecipients)
	case r.InlineRecipients == 0:
		return -1, nil
	}
	// An inline batch is one of the runner's batches: a bound above
	// rules.batch_size is the batch size (the default, 100, with a
	// smaller batch_size too).
	return min(r.InlineRecipients, batch), nil
}

// check refuses the webhooks: settings that cannot work: every duration
// but disable_after (0: never) must be positive, retry_max_delay at least
// retry_base, and batch_size and max_in_flight_per_endpoint 1 to 1000.
func (w WebhooksConfig) check() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"timeout", w.Timeout}, {"retry_base", w.RetryBase}, {"retry_max_delay", w.RetryMaxDelay},
		{"retry_for", w.RetryFor}, {"rotation_overlap", w.RotationOverlap}, {"poll_interval", w.PollInterval}} {
		if d.v <= 0 {
			return fmt.Errorf("config: webhooks.%s: %v must be a positive duration", d.key, d.v)
		}
	}
	if w.DisableAfter < 0 {
		return fmt.Errorf("config: webhooks.disable_after: %v must be 0 (never) or a positive duration", w.DisableAfter)
	}
	if w.RetryMaxDelay < w.RetryBase {
		return fmt.Errorf("config: webhooks.retry_max_delay: %v is below webhooks.retry_base (%v)", w.RetryMaxDelay, w.RetryBase)
	}
	if w.BatchSize < 1 || w.BatchSize > store.MaxWebhookClaim {
		return fmt.Errorf("config: webhooks.batch_size: %d must be from 1 to %d", w.BatchSize, store.MaxWebhookClaim)
	}
	if w.MaxInFlightPerEndpoint < 1 || w.MaxInFlightPerEndpoint > store.MaxWebhookClaim {
		return fmt.Errorf("config: webhooks.max_in_flight_per_endpoint: %d must be from 1 to %d", w.MaxInFlightPerEndpoint, store.MaxWebhookClaim)
	}
	return nil
}

// clientConfig turns the file/env config into the library's typed Config.
func (c *Config) clientConfig() (herald.Config, error) {
	if c.HTTP.StreamHeartbeat <= 0 {
		return herald.Config{}, fmt.Errorf("config: http.stream_heartbeat: %s must be a positive duration (how often an idle inbox stream sends a heartbeat; it cannot be off)", c.HTTP.StreamHeartbeat)
	}
	if t := c.Templates; t.MaxSteps <= 0 || t.MaxBytes <= 0 || t.MaxDuration <= 0 {
		return herald.Config{}, fmt.Errorf("config: templates.max_steps (%d), templates.max_bytes (%d) and templates.max_duration (%v) must be positive: a template render cannot be unbounded",
			t.MaxSteps, t.MaxBytes, t.MaxDuration)
	}
	if t := c.Templates; t.APNsMaxBytes <= 0 || t.FCMMaxBytes <= 0 || t.SMSMaxSegments <= 0 {
		return herald.Config{}, fmt.Errorf("config: templates.apns_max_bytes (%d), templates.fcm_max_bytes (%d) and templates.sms_max_segments (%d) must be positive",
			t.APNsMaxBytes, t.FCMMaxBytes, t.SMSMaxSegments)
	}
	if c.HistoryScan <= 0 {
		return herald.Config{}, fmt.Errorf("config: history_scan: %d must be a positive number of notifications (how many one page of the history with a status filter examines at most; default %d)",
			c.HistoryScan, herald.DefaultHistoryScan)
	}
	if c.MaxReceipts <= 0 || c.MaxReceipts > store.MaxReceiptBatch {
		return herald.Config{}, fmt.Errorf("config: max_receipts: %d must be from 1 to %d (the receipts one POST /v1/receipts may hold; default %d)",
			c.MaxReceipts, store.MaxReceiptBatch, herald.DefaultMaxReceipts)
	}
	if c.MaxEngagementRows <= 0 {
		return herald.Config{}, fmt.Errorf("config: max_engagement_rows: %d must be a positive number of rows (the rows one engagement report may hold; default %d)",
			c.MaxEngagementRows, herald.DefaultMaxEngagementRows)
	}
	if c.MaxDigestItems <= 0 {
		return herald.Config{}, fmt.Errorf("config: max_digest_items: %d must be a positive number of items (the items one digest may keep; default %d)",
			c.MaxDigestItems, herald.DefaultMaxDigestItems)
	}
	if c.MaxEscalationSteps <= 0 {
		return herald.Config{}, fmt.Errorf("config: max_escalation_steps: %d must be a positive number of steps (the steps a type's escalation may have; default %d)",
			c.MaxEscalationSteps, herald.DefaultMaxEscalationSteps)
	}
	if d := c.Escalations; d.PollInterval <= 0 || d.BatchSize <= 0 || d.Lease <= 0 {
		return herald.Config{}, fmt.Errorf("config: escalations.poll_interval (%v), escalations.batch_size (%d) and escalations.lease (%v) must be positive",
			d.PollInterval, d.BatchSize, d.Lease)
	}
	if d := c.Digests; d.PollInterval <= 0 || d.BatchSize <= 0 || d.Lease <= 0 {
		return herald.Config{}, fmt.Errorf("config: digests.poll_interval (%v), digests.batch_size (%d) and digests.lease (%v) must be positive",
			d.PollInterval, d.BatchSize, d.Lease)
	}
	inline, err := c.Rules.inline()
	if err != nil {
		return herald.Config{}, err
	}
	if err := c.Webhooks.check(); err != nil {
		return herald.Config{}, err
	}
	hc := herald.Config{
		InboxHeartbeat:  c.HTTP.StreamHeartbeat,
		DefaultTimezone: c.DefaultTimezone,
		MaxAttempts:     c.MaxAttempts,
		DailyCap:        c.DailyCap,
		Worker:          herald.WorkerConfig(c.Worker),
		Reminders: herald.ReminderConfig{Lease: c.Reminders.Lease, BatchSize: c.Reminders.BatchSize,
			Gap: off(c.Reminders.Gap), PollInterval: c.Reminders.PollInterval, Disabled: !c.Reminders.Enabled,
			Retention: off(c.Reminders.Retention)},
		Campaigns: herald.CampaignConfig{BatchSize: c.Campaigns.BatchSize, Pause: off(c.Campaigns.Pause),
			LockAtMost: c.Campaigns.LockAtMost, LockAtLeast: off(c.Campaigns.LockAtLeast),
			PollInterval: c.Campaigns.PollInterval, Disabled: !c.Campaigns.Enabled,
			FetchMaxAnswer: c.Campaigns.FetchMaxAnswer, FetchMaxItems: c.Campaigns.FetchMaxItems,
			FetchMaxFields: c.Campaigns.FetchMaxFields, FetchMaxValues: c.Campaigns.FetchMaxValues},
		Rules: herald.RuleConfig{BatchSize: c.Rules.BatchSize, Pause: off(c.Rules.Pause), Concurrency: c.Rules.Concurrency,
			PollInterval: c.Rules.PollInterval, EventRetention: off(c.Rules.EventRetention), Disabled: !c.Rules.Enabled,
			AudienceRetry: c.Rules.AudienceRetry, WebhookTimeout: c.Rules.WebhookTimeout,
			WebhookMaxTimeout: c.Rules.WebhookMaxTimeout, WebhookMaxAnswer: c.Rules.WebhookMaxAnswer,
			DefaultAudience: c.Rules.DefaultAudience, MaxAudience: c.Rules.MaxAudience,
			MaxPerEvent: c.Rules.MaxPerEvent, RecordedDecisions: c.Rules.RecordedDecisions, CompiledCache: c.Rules.CompiledCache,
			InlineRecipients: inline},
		IdempotencyRetention:     off(c.IdempotencyRetention),
		CancelWait:               c.CancelWait,
		InterestRetention:        off(c.InterestRetention),
		EngagementRetention:      off(c.EngagementRetention),
		DeviceMaxAge:             off(c.DeviceMaxAge),
		DeviceTokenTakeoverAfter: off(c.DeviceTokenTakeoverAfter),
		Retention:                off(c.Retention),
		MaintenanceInterval:      off(c.MaintenanceInterval),
		LeaderTTL:                c.LeaderTTL,
		Limits: herald.Limits{MaxDataBytes: c.MaxDataBytes, MaxTriggerBytes: c.MaxTriggerBytes,
			MaxDevicesPerUser: c.MaxDevicesPerUser, MaxPreferenceTypes: c.MaxPreferenceTypes, HistoryScan: c.HistoryScan,
			MaxReceipts: c.MaxReceipts, MaxEngagementRows: c.MaxEngagementRows, MaxDigestItems: c.MaxDigestItems,
			MaxEscalationSteps: c.MaxEscalationSteps},
		Digests: herald.DigestWorkerConfig{PollInterval: c.Digests.PollInterval, BatchSize: c.Digests.BatchSize,
			Lease: c.Digests.Lease, Disabled: !c.Digests.Enabled},
		Escalations: herald.EscalationWorkerConfig{PollInterval: c.Escalations.PollInterval, BatchSize: c.Escalations.BatchSize,
			Lease: c.Escalations.Lease, Disabled: !c.Escalations.Enabled},
		Templates: herald.TemplateConfig(c.Templates),
		Webhooks: herald.WebhookConfig{Timeout: c.Webhooks.Timeout, RetryBase: c.Webhooks.RetryBase,
			RetryMaxDelay: c.Webhooks.RetryMaxDelay, RetryFor: c.Webhooks.RetryFor, DisableAfter: off(c.Webhooks.DisableAfter),
			RotationOverlap: c.Webhooks.RotationOverlap, BatchSize: c.Webhooks.BatchSize,
			MaxInFlightPerEndpoint: c.Webhooks.MaxInFlightPerEndpoint,
			PollInterval:           c.Webhooks.PollInterval, Disabled: !c.Webhooks.Enabled},
	}
	if len(c.Types) > 0 {
		hc.Types = make(map[string]herald.TypeConfig, len(c.Types))
		for name, tc := range c.Types {
			hc.Types[name] = herald.TypeConfig(tc)
		}
	}
	if len(c.Retry) > 0 {
		hc.Retry = map[heraldtype.ErrorClass]herald.RetryPolicy{}
		for class, r := range c.Retry {
			ec := heraldtype.ErrorClass(class)
			if ec != heraldtype.ClassTemporary && ec != heraldtype.ClassThrottled {
				return hc, fmt.Errorf("config: retry.%s: class must be temporary or throttled", class)
			}
			jitter := true
			if r.Jitter != nil {
				jitter = *r.Jitter
			}
			hc.Retry[ec] = herald.RetryPolicy{Base: r.Base, Factor: r.Factor, Max: r.Max, Jitter: jitter}
		}
	}
	// An explicit 0 turns the rollup (and its pruning) off, as it does
	// every other interval and retention here.
	hc.Worker.RollupInterval, hc.Worker.RollupRetention = off(c.Worker.RollupInterval), off(c.Worker.RollupRetention)
	return hc, nil
}

// fcmCredentials returns the service-account JSON from the file or the
// inline value.
func (c *FCMConfig) credentials() ([]byte, error) {
	switch {
	case c.CredentialsFile != "" && c.CredentialsJSON != "":
		return nil, fmt.Errorf("config: set fcm.credentials_file or fcm.credentials_json, not both")
	case c.CredentialsFile != "":
		b, err := os.ReadFile(c.CredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("config: fcm.credentials_file: %w", err)
		}
		return b, nil
	case c.CredentialsJSON != "":
		return []byte(c.CredentialsJSON), nil
	}
	return nil, nil
}
