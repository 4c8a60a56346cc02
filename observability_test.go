package herald

// S2.7 (issue 30 item 6): the per-component debug switch, the error hook
// for embedders and the batch processing-time histograms, through a real
// Client.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/logging"
)

// histogramCount sums the observations of a histogram family in reg.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

type reports struct {
	mu   sync.Mutex
	list []string // component: error
	errs []error
}

func (r *reports) add(_ context.Context, component string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, component+": "+err.Error())
	r.errs = append(r.errs, err)
}

func (r *reports) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.list...)
}

// A reminder whose stored schedule no longer compiles is stopped by the
// scheduler, which logs a warning: OnError hears it, named "reminder",
// though the log level is error; the batch is timed; with log.debug:
// [reminder] the scheduler's lines from debug up are written and no other
// component's below error.
func TestOnErrorDebugAndReminderBatchDuration(t *testing.T) {
	var buf bytes.Buffer
	var rep reports
	reg := prometheus.NewRegistry()
	inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	p := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{}
		c.Logger = slog.New(logging.Debug(inner, slog.LevelError, []string{ComponentReminder}))
		c.OnError = rep.add
		c.Registerer = reg
	})
	p.device("u1", "d1", "tok-1")
	now := p.clock.Now().Truncate(time.Second)
	bad := heraldtype.Reminder{Key: "mars", ID: "rem-mars", UserID: "u1", Type: "cart_reminder", Title: "t",
		Schedule:   heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Mars/Olympus"},
		QuietHours: QuietDefer, State: heraldtype.ReminderActive, NextAt: now, NextOccurrence: now,
		ScheduleStart: now, CreatedAt: now, UpdatedAt: now}
	if _, _, err := p.store.PutReminder(p.ctx, bad, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.client.scheduler.Tick(p.ctx); err != nil {
		t.Fatal(err)
	}
	if r := p.reminder("mars"); r.StopReason != heraldtype.StopRejected {
		t.Fatalf("reminder %s %q", r.State, r.StopReason)
	}
	got := rep.all()
	if len(got) != 1 || !strings.HasPrefix(got[0], "reminder: reminder: a reminder's schedule no longer compiles") ||
		heraldtype.ErrorCode(rep.errs[0]) != heraldtype.EINVALID {
		t.Fatalf("reports %q", got)
	}
	if n := histogramCount(t, reg, "herald_reminder_batch_duration_seconds"); n != 1 {
		t.Fatalf("reminder batches timed: %d, want 1", n)
	}
	out := buf.String()
	if !strings.Contains(out, `msg="reminder: decided"`) || !strings.Contains(out, "component=reminder") ||
		!strings.Contains(out, "stop_reason=rejected") {
		t.Fatalf("no reminder debug line:\n%s", out)
	}
	// Another component keeps the base level (error).
	p.client.Logger(ComponentRules).Debug("rules detail")
	p.client.Logger(ComponentRules).Warn("rules warning")
	if strings.Contains(buf.String(), "rules detail") || strings.Contains(buf.String(), "rules warning") {
		t.Fatalf("rules lines passed with log.debug: [reminder] and level error:\n%s", buf.String())
	}
	if len(LogComponents()) != 10 {
		t.Fatalf("components %v", LogComponents())
	}
	var he *heraldtype.Error
	if !errors.As(rep.errs[0], &he) || he.Field != "schedule.time_zone" {
		t.Fatalf("the cause is not wrapped: %v", rep.errs[0])
	}
}

// Each batch of a rule run is timed: eight users in batches of three are
// three batches.
func TestRuleBatchDuration(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := newPolicyPipeline(t, func(c *Config) {
		c.Types["price_drop"] = TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
		c.Rules = RuleConfig{Pause: -1, BatchSize: 3}
		c.Registerer = reg
	})
	p.interested("VIEW", "product:42", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8")
	if _, _, err := p.client.PutRule(p.ctx, priceDropRule()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Track(p.ctx, priceChange("ev-1", 10000, 8500)); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	if n := histogramCount(t, reg, "herald_rule_batch_duration_seconds"); n != 3 {
		t.Fatalf("rule batches timed: %d, want 3", n)
	}
}
