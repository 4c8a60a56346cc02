package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

func TestLoadConfigLayers(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "herald.yaml")
	yaml := `
listen: 127.0.0.1:9000
max_attempts: 6
worker:
  batch_size: 50
  poll_interval: 250ms
retry:
  temporary: {base: 1s, factor: 2, max: 1m}
types:
  daily_nudge: {guarantee: at_most_once}
fcm:
  credentials_file: /etc/herald/sa.json
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path, []string{"HERALD_WORKER__BATCH_SIZE=200", "HERALD_DATABASE=/var/lib/herald.db", "PATH=/bin", "HERALD_CONFIG=ignored",
		"HERALD_TEST_DATABASE_URL=postgres://elsewhere/test", "HERALD_TEST_ARTIFACTS=/tmp/shots", "HERALD_TEST_UPDATE_SCREENSHOT=1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9000" || cfg.MaxAttempts != 6 || cfg.Database != "/var/lib/herald.db" {
		t.Errorf("top level = %+v", cfg)
	}
	if cfg.Worker.BatchSize != 200 || cfg.Worker.PollInterval != 250*time.Millisecond || cfg.Worker.Concurrency != 256 {
		t.Errorf("worker = %+v: env must override the file, defaults must survive", cfg.Worker)
	}
	if cfg.Types["daily_nudge"].Guarantee != heraldtype.AtMostOnce || cfg.FCM.CredentialsFile != "/etc/herald/sa.json" {
		t.Errorf("types/fcm = %+v %+v", cfg.Types, cfg.FCM)
	}
	hc, err := cfg.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if p := hc.Retry[heraldtype.ClassTemporary]; p.Base != time.Second || p.Max != time.Minute || !p.Jitter {
		t.Errorf("retry = %+v", p)
	}
	// The limits of issue 18: documented keys with the library's defaults.
	limits, err := loadConfig("", []string{"HERALD_MAX_PREFERENCE_TYPES=5", "HERALD_MAX_DATA_BYTES=1024"})
	if err != nil {
		t.Fatal(err)
	}
	hc, err = limits.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if want := (herald.Limits{MaxDataBytes: 1024, MaxTriggerBytes: herald.DefaultMaxTriggerBytes,
		MaxDevicesPerUser: herald.DefaultMaxDevicesPerUser, MaxPreferenceTypes: 5, HistoryScan: herald.DefaultHistoryScan,
		MaxReceipts: herald.DefaultMaxReceipts, MaxEngagementRows: herald.DefaultMaxEngagementRows,
		MaxDigestItems: herald.DefaultMaxDigestItems, MaxEscalationSteps: herald.DefaultMaxEscalationSteps}); hc.Limits != want {
		t.Errorf("limits = %+v, want %+v", hc.Limits, want)
	}
	// The receipts' batch bound (issue 35 item 1): a positive number up to
	// the store's own bound, named when it is not.
	for env, ok := range map[string]bool{"HERALD_MAX_RECEIPTS=500": true, "HERALD_MAX_RECEIPTS=0": false, "HERALD_MAX_RECEIPTS=10001": false} {
		c, err := loadConfig("", []string{env})
		if err != nil {
			t.Fatal(err)
		}
		hc, err := c.clientConfig()
		if ok && (err != nil || hc.Limits.MaxReceipts != 500) {
			t.Errorf("%s: %d, %v", env, hc.Limits.MaxReceipts, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "max_receipts")) {
			t.Errorf("%s: %v, want an error naming max_receipts", env, err)
		}
	}
}

// history_scan bounds a status-filtered page of the history (issue 34
// item 3): it reaches herald.Limits, and a value that is not a positive
// number is refused naming the key.
func TestHistoryScanConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", []string{"HERALD_HISTORY_SCAN=20000"})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := cfg.clientConfig()
	if err != nil || hc.Limits.HistoryScan != 20000 {
		t.Fatalf("history_scan 20000: %d, %v", hc.Limits.HistoryScan, err)
	}
	for _, v := range []string{"0", "-5"} {
		cfg, err := loadConfig("", []string{"HERALD_HISTORY_SCAN=" + v})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.clientConfig(); err == nil || !strings.Contains(err.Error(), "history_scan: "+v+" must be a positive") {
			t.Errorf("history_scan %s: %v, want it refused naming history_scan", v, err)
		}
	}
	if _, err := loadConfig("", []string{"HERALD_HISTORY_SCAN=many"}); err == nil || !strings.Contains(err.Error(), "history_scan") {
		t.Errorf("history_scan many: %v, want it refused naming history_scan", err)
	}
}

// Disabled is an explicit zero in the config (issue 17): it reaches the
// library as "off" (negative), while an absent key keeps the documented
// default, and the old negative spelling still means off.
func TestExplicitZeroDisablesPruning(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := cfg.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	if hc.MaintenanceInterval != time.Hour || hc.Retention != 30*day || hc.DeviceMaxAge != 270*day || hc.IdempotencyRetention != day {
		t.Errorf("defaults: interval %v, retention %v, device max age %v, idempotency %v", hc.MaintenanceInterval,
			hc.Retention, hc.DeviceMaxAge, hc.IdempotencyRetention)
	}
	if hc.DeviceTokenTakeoverAfter != day {
		t.Errorf("default device_token_takeover_after %v, want 24h", hc.DeviceTokenTakeoverAfter)
	}
	cfg, err = loadConfig("", []string{"HERALD_MAINTENANCE_INTERVAL=0", "HERALD_RETENTION=0s", "HERALD_DEVICE_MAX_AGE=0",
		"HERALD_IDEMPOTENCY_RETENTION=-1h", "HERALD_DEVICE_TOKEN_TAKEOVER_AFTER=0"})
	if err != nil {
		t.Fatal(err)
	}
	if hc, err = cfg.clientConfig(); err != nil {
		t.Fatal(err)
	}
	if hc.MaintenanceInterval >= 0 || hc.Retention >= 0 || hc.DeviceMaxAge >= 0 || hc.IdempotencyRetention >= 0 {
		t.Errorf("explicit zeros: interval %v, retention %v, device max age %v, idempotency %v; want all off (negative)",
			hc.MaintenanceInterval, hc.Retention, hc.DeviceMaxAge, hc.IdempotencyRetention)
	}
	if hc.DeviceTokenTakeoverAfter >= 0 {
		t.Errorf("device_token_takeover_after 0: %v, want never (negative)", hc.DeviceTokenTakeoverAfter)
	}
}

func TestLoadConfigRejectsMistakes(t *testing.T) {
	t.Parallel()
	for name, environ := range map[string][]string{
		"unknown key":  {"HERALD_LISTNE=:80"},
		"bad duration": {"HERALD_WORKER__POLL_INTERVAL=soon"},
		"bad number":   {"HERALD_MAX_ATTEMPTS=many"},
	} {
		if _, err := loadConfig("", environ); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := loadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil {
		t.Error("missing config file: no error")
	}
	cfg := defaultConfig()
	cfg.Retry = map[string]RetryConfig{"sometimes": {Base: time.Second}}
	if _, err := cfg.clientConfig(); err == nil {
		t.Error("unknown retry class: no error")
	}
	cfg = defaultConfig()
	cfg.HTTP.StreamHeartbeat = 0
	if _, err := cfg.clientConfig(); err == nil || !strings.Contains(err.Error(), "http.stream_heartbeat") {
		t.Errorf("stream_heartbeat 0: %v, want an error naming the key", err)
	}
}

func TestServeRefusesBadConfig(t *testing.T) {
	t.Parallel()
	var errb bytes.Buffer
	// An unreachable database fails start-up, and its password is never
	// printed.
	code := Run(context.Background(), []string{"serve", "--database", "postgres://herald:s3cret@127.0.0.1:1/x?connect_timeout=2"}, &bytes.Buffer{}, &errb, nil)
	if code == 0 || !strings.Contains(errb.String(), "127.0.0.1:1") || strings.Contains(errb.String(), "s3cret") {
		t.Fatalf("serve with an unreachable database: %d %s", code, errb.String())
	}
	errb.Reset()
	code = Run(context.Background(), []string{"serve", "--database", filepath.Join(t.TempDir(), "h.db")}, &bytes.Buffer{}, &errb, []string{"HERALD_LOG__LEVEL=loud"})
	if code == 0 || !strings.Contains(errb.String(), "log.level") {
		t.Fatalf("serve with a bad log level: %d %s", code, errb.String())
	}
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	for range 2 { // idempotent
		var out, errb bytes.Buffer
		if code := Run(context.Background(), []string{"migrate", "--database", db}, &out, &errb, nil); code != 0 {
			t.Fatalf("migrate: %d %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "up to date") {
			t.Fatalf("migrate output %q", out.String())
		}
	}
}

func TestEmulateFCMWritesCredentials(t *testing.T) {
	t.Parallel()
	creds := filepath.Join(t.TempDir(), "sa.json")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"emulate", "fcm", "--addr", "127.0.0.1:0", "--credentials-out", creds}, &bytes.Buffer{}, &bytes.Buffer{}, nil)
	}()
	var sa map[string]string
	waitFor(t, "the credentials file", func() bool {
		b, err := os.ReadFile(creds)
		return err == nil && json.Unmarshal(b, &sa) == nil
	})
	if sa["type"] != "service_account" || !strings.HasPrefix(sa["token_uri"], "http://127.0.0.1:") || sa["project_id"] != devProject {
		t.Fatalf("service account = %v", sa)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("emulate exited with %d", code)
	}
}

// tuneGC leaves an operator's GOGC alone and otherwise sets
// defaultGCPercent.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	tuneGC("50")
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set, GC percent = %d, want it untouched (100)", got)
	}
	tuneGC("")
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Fatalf("GC percent = %d, want %d", got, defaultGCPercent)
	}
}

// The http: limits have safe defaults, come from the environment, and an
// explicit 0 turns one off (negative to httpapi, which reads 0 as default).
func TestHTTPLimitsConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.HTTP; c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0 ||
		c.MaxHeaderBytes <= 0 || c.MaxConnections <= 0 || c.MaxConnectionsPerClient <= 0 ||
		c.StreamMaxLifetime <= 0 || c.StreamCredentialCheck <= 0 || c.MaxStreamsPerUser <= 0 || c.MaxStreamsPerKey <= 0 || c.StreamHeartbeat <= 0 {
		t.Fatalf("a default http limit is off: %+v", c)
	}
	cfg, err = loadConfig("", []string{"HERALD_HTTP__READ_TIMEOUT=5s", "HERALD_HTTP__MAX_CONNECTIONS_PER_CLIENT=0", "HERALD_HTTP__MAX_STREAMS_PER_USER=2",
		"HERALD_HTTP__STREAM_HEARTBEAT=5s"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.ReadTimeout != 5*time.Second {
		t.Errorf("read_timeout %s", cfg.HTTP.ReadTimeout)
	}
	if hc, err := cfg.clientConfig(); err != nil || hc.InboxHeartbeat != 5*time.Second {
		t.Errorf("stream_heartbeat 5s: %v %v", hc.InboxHeartbeat, err)
	}
	if sc := cfg.HTTP.streams(); sc.MaxPerUser != 2 {
		t.Errorf("streams %+v", sc)
	}
	if cc := cfg.HTTP.conn(); cc.MaxConnsPerClient >= 0 || cc.MaxConns <= 0 {
		t.Errorf("conn %+v: 0 must turn the per-client cap off and keep the total", cc)
	}
}

// TestTemplatesConfig: templates.max_steps and templates.max_bytes reach
// the Client, with the library's defaults; zero is refused, since a
// render cannot be unbounded (issue 31 item 1).
func TestTemplatesConfig(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", []string{"HERALD_TEMPLATES__MAX_STEPS=500", "HERALD_TEMPLATES__MAX_BYTES=65536", "HERALD_TEMPLATES__MAX_DURATION=100ms",
		"HERALD_TEMPLATES__APNS_MAX_BYTES=2048", "HERALD_TEMPLATES__SMS_MAX_SEGMENTS=3"})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := cfg.clientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if hc.Templates != (herald.TemplateConfig{MaxSteps: 500, MaxBytes: 65536, MaxDuration: 100 * time.Millisecond,
		APNsMaxBytes: 2048, FCMMaxBytes: herald.DefaultFCMMaxBytes, SMSMaxSegments: 3}) {
		t.Errorf("templates = %+v", hc.Templates)
	}
	if d := defaultConfig().Templates; d.MaxSteps != herald.DefaultTemplateMaxSteps || d.MaxBytes != herald.DefaultTemplateMaxBytes ||
		d.MaxDuration != herald.DefaultTemplateMaxDuration {
		t.Errorf("defaults = %+v", d)
	}
	cfg.Templates.MaxSteps = 0
	if _, err := cfg.clientConfig(); err == nil || !strings.Contains(err.Error(), "templates.max_steps") {
		t.Errorf("max_steps 0: %v, want an error naming the key", err)
	}
	cfg.Templates.MaxSteps, cfg.Templates.SMSMaxSegments = 500, 0
	if _, err := cfg.clientConfig(); err == nil || !strings.Contains(err.Error(), "templates.sms_max_segments") {
		t.Errorf("sms_max_segments 0: %v, want an error naming the key", err)
	}
}

// TestRulesInlineRecipients: rules.inline_recipients reaches the Client
// (0 is off), is refused below 0 naming the key, and is at most
// rules.batch_size — the default too, with a small batch_size (issue 39
// item 3; an e2e test's batch_size 2 did not start).
func TestRulesInlineRecipients(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig("", []string{"HERALD_RULES__INLINE_RECIPIENTS=20"})
	if err != nil {
		t.Fatal(err)
	}
	if hc, err := cfg.clientConfig(); err != nil || hc.Rules.InlineRecipients != 20 {
		t.Fatalf("inline_recipients 20: %d %v", hc.Rules.InlineRecipients, err)
	}
	if d := defaultConfig().Rules.InlineRecipients; d != herald.DefaultInlineRecipients {
		t.Errorf("default %d", d)
	}
	cfg.Rules.InlineRecipients = 0
	if hc, err := cfg.clientConfig(); err != nil || hc.Rules.InlineRecipients >= 0 {
		t.Fatalf("inline_recipients 0 must turn it off: %d %v", hc.Rules.InlineRecipients, err)
	}
	cfg.Rules.InlineRecipients = -1
	if _, err := cfg.clientConfig(); err == nil || !strings.Contains(err.Error(), "rules.inline_recipients") {
		t.Errorf("inline_recipients -1: %v, want an error naming the key", err)
	}
	small, err := loadConfig("", []string{"HERALD_RULES__BATCH_SIZE=2"})
	if err != nil {
		t.Fatal(err)
	}
	if hc, err := small.clientConfig(); err != nil || hc.Rules.InlineRecipients != 2 {
		t.Fatalf("the default with batch_size 2: %d %v, want 2", hc.Rules.InlineRecipients, err)
	}
}
