// Package bench is Herald's load generator and fault-injection harness
// (`herald bench`, `herald faultrun`). It drives a Herald server over its
// HTTP API — one started in this process, or a deployed one — against an
// FCM emulator it runs itself, and measures what the targets are
// stated in: notifications accepted per second, deliveries sent per
// second, trigger → provider latency percentiles, and the server's CPU and
// peak memory.
//
// Latency is measured end to end on one clock: each trigger carries its
// own time in the notification data (TriggerTimeKey) and the emulator, in
// this process, subtracts it from the moment it accepts the push. That
// works unchanged against a remote server, provided the server's
// fcm.endpoint points at this process's emulator (Config.EmulatorAddr).
package bench

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// Faults are the emulator's injected failure rates, each a fraction 0..1.
type Faults struct {
	Unavailable float64 `json:"unavailable"`
	Internal    float64 `json:"internal"`
	Quota       float64 `json:"quota_exceeded"`
	// QuotaRetryAfter is the Retry-After, in seconds, of a QUOTA_EXCEEDED
	// answer (0: none).
	QuotaRetryAfter int `json:"quota_retry_after_seconds"`
	// Unregistered is the fraction of devices whose token the emulator
	// answers UNREGISTERED, forever: real dead tokens stay dead, and Herald
	// invalidates the device on the first answer.
	Unregistered float64 `json:"unregistered"`
}

func (f Faults) validate() error {
	for name, v := range map[string]float64{"unavailable": f.Unavailable, "internal": f.Internal,
		"quota": f.Quota, "unregistered": f.Unregistered} {
		if v < 0 || v > 1 {
			return fmt.Errorf("fault rate %s = %v must be within 0..1", name, v)
		}
	}
	if f.Unavailable+f.Internal+f.Quota > 1 {
		return errors.New("the unavailable, internal and quota fault rates add up to more than 1")
	}
	if f.QuotaRetryAfter < 0 {
		return errors.New("the quota Retry-After must not be negative")
	}
	return nil
}

// Config is one benchmark run.
type Config struct {
	// Server is the base URL of a running Herald server; empty starts one
	// in this process.
	Server string
	// APIKey, if set, is sent as "Authorization: Bearer …" (remote servers).
	APIKey string
	// Database for the in-process server: empty for a temporary SQLite
	// file, a SQLite path, or a postgres:// URL (a fresh schema per run
	// unless DatabaseSchema is set).
	Database       string
	DatabaseSchema string
	// KeepData keeps the temporary SQLite file or PostgreSQL schema.
	KeepData bool

	// Users to register, each with DevicesPerUser android devices.
	Users          int
	DevicesPerUser int
	// Notifications is the number of notifications (recipients), sent as
	// Notifications/Recipients triggers of Recipients users each.
	Notifications int
	Recipients    int
	// Concurrency is the number of triggers in flight.
	Concurrency int
	// Rate is the open-loop target in notifications per second: triggers
	// start on a fixed schedule whether or not earlier ones have returned,
	// and latency counts from the scheduled time (no coordinated omission).
	// 0 runs closed loop: each of Concurrency clients sends its next
	// trigger when the last one returns.
	Rate float64
	// Backlog enqueues every notification with the workers stopped, then
	// starts them and measures the drain: throughput and memory with a
	// full queue. In-process only.
	Backlog bool
	// Warmup leaves the pushes of triggers sent in the run's first Warmup
	// out of the latency figures (not out of the counts): while a fresh
	// server dials its database connections and prepares its statements,
	// its first seconds are slower than its steady state.
	Warmup time.Duration
	// Webhooks registers one outbound webhook endpoint subscribed to
	// every event type, served by an in-process receiver emulator that
	// verifies each signature: the run then ends when every delivery's
	// delivery.finished message and every notification's
	// notification.status_changed were received too, and the resources
	// include the webhooks' cost (issue 35 item 5). In-process only.
	Webhooks bool
	// WebhookEvents, if not empty, subscribes the endpoint to these types
	// only (delivery.finished, notification.status_changed), to weigh
	// each one's cost.
	WebhookEvents []string
	// DigestWindow, when set, declares the bench type a digest of this
	// window (one per user, collected), so a user's triggers within it
	// become one notification: the run then waits for every digest and
	// counts one push per digest and device (issue 36 item 6). Every
	// trigger must be accepted within the window, or a user's triggers
	// would split into more digests than the run expects. In-process only.
	DigestWindow time.Duration
	// DigestMaxItems sends a digest once it holds this many triggers (0:
	// the server's limits.max_digest_items).
	DigestMaxItems int

	Faults Faults
	// EmulatorAddr is where the FCM emulator listens; 127.0.0.1:0 when
	// empty. A remote server must be configured with its URL as
	// fcm.endpoint and CredentialsOut as fcm.credentials_file.
	EmulatorAddr   string
	CredentialsOut string
	// ReadyTimeout bounds the wait for a remote server to answer /readyz
	// (start it after the emulator when using CredentialsOut).
	ReadyTimeout time.Duration
	// DrainTimeout bounds the wait, after the last trigger, for every
	// delivery to finish.
	DrainTimeout time.Duration

	// In-process server tuning (zero: Herald's defaults).
	Worker      herald.WorkerConfig
	MaxAttempts int
	Retry       map[heraldtype.ErrorClass]herald.RetryPolicy

	// Progress receives the live progress line (stderr); nil for none.
	Progress io.Writer
	// Logger for the in-process server; default discards.
	Logger *slog.Logger
}

func (c *Config) defaults() error {
	if c.Users == 0 {
		c.Users = 1000
	}
	if c.DevicesPerUser == 0 {
		c.DevicesPerUser = 1
	}
	if c.Notifications == 0 {
		c.Notifications = 100_000
	}
	if c.Recipients == 0 {
		c.Recipients = 1
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 2 * time.Minute
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 10 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	switch {
	case c.Users < 1 || c.DevicesPerUser < 1 || c.Notifications < 1 || c.Concurrency < 1:
		return errors.New("users, devices per user, notifications and concurrency must be at least 1")
	case c.Recipients < 1 || c.Recipients > herald.MaxRecipients:
		return fmt.Errorf("recipients per notification must be 1..%d", herald.MaxRecipients)
	case c.Recipients > c.Users:
		return fmt.Errorf("recipients per notification (%d) exceeds the users (%d): a trigger names distinct users", c.Recipients, c.Users)
	case c.Notifications%c.Recipients != 0:
		return fmt.Errorf("notifications (%d) must be a multiple of recipients per notification (%d)", c.Notifications, c.Recipients)
	case c.Rate < 0:
		return errors.New("rate must not be negative")
	case c.Warmup < 0:
		return errors.New("warmup must not be negative")
	case c.Backlog && c.Server != "":
		return errors.New("--backlog needs the in-process server (it stops the workers while the queue fills)")
	case len(c.WebhookEvents) > 0 && !c.Webhooks:
		return errors.New("--webhook-events needs --webhooks")
	case c.DigestWindow < 0 || c.DigestMaxItems < 0:
		return errors.New("digest window and max items must not be negative")
	case c.DigestMaxItems > 0 && c.DigestWindow == 0:
		return errors.New("--digest-max-items needs --digest-window")
	case c.DigestWindow > 0 && c.Server != "":
		return errors.New("--digest-window needs the in-process server (it declares the bench type's digest)")
	case c.Webhooks && c.Server != "":
		return errors.New("--webhooks needs the in-process server (it registers its own receiver's endpoint)")
	case c.Server != "" && c.EmulatorAddr == "":
		return errors.New("a remote server needs --emulator-addr: the address, reachable from the server, where this process runs the FCM emulator the server sends to")
	case c.Server != "" && c.Database != "":
		return errors.New("--database is for the in-process server; a remote server has its own")
	case c.Server != "" && !strings.HasPrefix(c.Server, "http://") && !strings.HasPrefix(c.Server, "https://"):
		return fmt.Errorf("server %q must be an http:// or https:// URL", c.Server)
	}
	return c.Faults.validate()
}

// Latency summarises trigger → provider latency in milliseconds.
type Latency struct {
	// WarmupSeconds is the start of the run left out (Config.Warmup).
	WarmupSeconds float64 `json:"warmup_seconds,omitempty"`
	Count         uint64  `json:"count"`
	P50           float64 `json:"p50_ms"`
	P95           float64 `json:"p95_ms"`
	P99           float64 `json:"p99_ms"`
	Max           float64 `json:"max_ms"`
}

// Result is what a run measured.
type Result struct {
	Server string `json:"server"` // "in-process" or the URL
	Store  string `json:"store"`  // sqlite, postgres or remote
	Mode   string `json:"mode"`   // closed-loop, open-loop or backlog
	// Notifications accepted by the API, and the deliveries they made.
	Notifications int `json:"notifications"`
	Deliveries    int `json:"deliveries"`
	// TriggerErrors counts triggers the API refused or that failed.
	TriggerErrors int `json:"trigger_errors"`
	// TriggerRetries counts trigger requests sent again after a 503, a
	// 429 or a broken connection, with the same Idempotency-Key.
	TriggerRetries int `json:"trigger_retries,omitempty"`
	// Sent is how many pushes the emulator accepted.
	Sent uint64 `json:"sent"`
	// Rejected counts the emulator's error answers by code.
	Rejected map[string]uint64 `json:"rejected,omitempty"`
	// EarlyRetries counts sends that came before a Retry-After the
	// emulator had asked for (must be 0).
	EarlyRetries uint64 `json:"early_retries"`

	TriggerSeconds      float64 `json:"trigger_seconds"`
	NotificationsPerSec float64 `json:"notifications_per_second"`
	// SendSeconds runs from the first trigger (in a backlog run: from the
	// moment the workers start) to the last accepted push.
	SendSeconds      float64 `json:"send_seconds"`
	DeliveriesPerSec float64 `json:"deliveries_per_second"`
	// Webhooks counts the messages the webhook receiver accepted
	// (Config.Webhooks), WebhookSeconds the time from the first send to
	// the last of them.
	Webhooks       uint64  `json:"webhooks,omitempty"`
	WebhookSeconds float64 `json:"webhook_seconds,omitempty"`
	// Digests is how many digests the triggers made (Config.DigestWindow):
	// the server's count, which the run checks against the users'
	// triggers and the digests' max items.
	Digests   int       `json:"digests,omitempty"`
	Latency   Latency   `json:"latency"`
	Resources Resources `json:"server_resources"`
	// FillResources is the server's use while a backlog filled (backlog
	// runs only); Resources then covers the drain.
	FillResources *Resources `json:"fill_resources,omitempty"`
}
