package herald

// Issue 34 item 5: what the clock starts is traced too. Each batch of a
// campaign run and each batch of due reminders is the root span of its own
// trace, and the deliveries of the notifications it wrote are its children
// down to the send.

import (
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value.Emit()
		}
	}
	return ""
}

func spansNamed(exp *tracetest.InMemoryExporter, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// checkBatchTrace checks that batch is a root span and that want
// deliveries, sent, are its children.
func checkBatchTrace(t *testing.T, exp *tracetest.InMemoryExporter, batch sdktrace.ReadOnlySpan, want int) {
	t.Helper()
	if batch.Parent().IsValid() {
		t.Errorf("%s has a parent %s; want a root span", batch.Name(), batch.Parent().SpanID())
	}
	deliveries := spansNamed(exp, "herald.deliver")
	if len(deliveries) != want {
		t.Fatalf("%d delivery spans, want %d", len(deliveries), want)
	}
	for _, d := range deliveries {
		if d.Parent().SpanID() != batch.SpanContext().SpanID() || d.SpanContext().TraceID() != batch.SpanContext().TraceID() ||
			spanAttr(d, "herald.outcome") != "sent" {
			t.Errorf("delivery span: parent %s, attributes %v; want a sent child of %s", d.Parent().SpanID(), d.Attributes(), batch.Name())
		}
	}
	if sends := spansNamed(exp, "herald.send"); len(sends) != want {
		t.Errorf("%d send spans, want %d", len(sends), want)
	}
}

func TestCampaignBatchIsTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newPipeline(t, func(c *Config) {
		c.Types["recommendation"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
		c.Campaigns = CampaignConfig{Pause: -1}
		c.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	})
	for _, u := range []string{"u1", "u2"} {
		p.device(u, "d-"+u, "tok-"+u)
	}
	if _, _, err := p.client.PutCampaign(p.ctx, dailyReco()); err != nil {
		t.Fatal(err)
	}
	run, err := p.client.RunCampaign(p.ctx, "daily-reco", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.client.campaigns.Tick(p.ctx); err != nil {
		t.Fatal(err)
	}
	if sent := p.work(); sent != 2 {
		t.Fatalf("sent %d, want 2", sent)
	}
	batches := spansNamed(exp, "herald.campaign.batch")
	if len(batches) != 1 {
		t.Fatalf("%d campaign batch spans, want 1", len(batches))
	}
	b := batches[0]
	if spanAttr(b, "herald.campaign") != "daily-reco" || spanAttr(b, "herald.run_id") != run.ID || spanAttr(b, "herald.enqueued") != "2" {
		t.Fatalf("the batch span's attributes: %v", b.Attributes())
	}
	checkBatchTrace(t, exp, b, 2)
}

func TestReminderBatchIsTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newPipeline(t, func(c *Config) {
		c.Types["cart_reminder"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
		c.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	})
	p.device("u1", "d1", "tok-1")
	p.clock.now = p.clock.now.Truncate(time.Second)
	if _, _, err := p.client.PutReminder(p.ctx, cartReminder("cart-42")); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Hour)
	if c := p.tickReminders(); c["enqueued"] != 1 {
		t.Fatalf("enqueued %v", c)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("sent %d, want 1", sent)
	}
	batches := spansNamed(exp, "herald.reminder.batch")
	if len(batches) != 1 {
		t.Fatalf("%d reminder batch spans, want 1", len(batches))
	}
	b := batches[0]
	if spanAttr(b, "herald.reminders.claimed") != "1" || spanAttr(b, "herald.reminders.enqueued") != "1" {
		t.Fatalf("the batch span's attributes: %v", b.Attributes())
	}
	checkBatchTrace(t, exp, b, 1)
	if r := p.reminder("cart-42"); r.LastNotificationID == "" {
		t.Fatal("no occurrence notification")
	} else if n := p.status(r.LastNotificationID); n.TraceParent == "" {
		t.Fatal("the occurrence's notification kept no traceparent")
	}
}
