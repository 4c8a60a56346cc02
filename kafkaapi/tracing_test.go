package kafkaapi_test

// Issue 34 item 5: a notification request carrying a W3C traceparent
// header is traced from the record through the enqueue to the worker's
// claim, policy check and provider call, in the producer's trace.

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

type okSender struct{}

func (okSender) Send(context.Context, *heraldtype.Message) (string, error) { return "ok", nil }

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value.Emit()
		}
	}
	return ""
}

// tracedStores open a migrated store of each kind.
var tracedStores = map[string]func(t *testing.T) store.Store{
	"sqlite": func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "traced.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return s
	},
	"postgres": func(t *testing.T) store.Store {
		dsn, schema := pgtest.NewSchema(t)
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return s
	},
}

// startTraced starts a Client on s that sends every push successfully and
// records its spans in the exporter it returns.
func startTraced(t *testing.T, s store.Store, rules herald.RuleConfig) (*herald.Client, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	c, err := herald.NewClient(herald.Config{Store: s, Providers: map[string]herald.Provider{"fcm": okSender{}},
		MaintenanceInterval: -1, Logger: slog.New(slog.DiscardHandler), Rules: rules,
		Worker:         herald.WorkerConfig{PollInterval: 20 * time.Millisecond},
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c, exp
}

func TestRecordIsTracedThroughTheDelivery(t *testing.T) {
	for name, open := range tracedStores {
		t.Run(name, func(t *testing.T) { recordIsTraced(t, open(t)) })
	}
}

func recordIsTraced(t *testing.T, s store.Store) {
	const producerTrace, producerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	f := newFixture(t)
	ctx := f.ctx
	c, exp := startTraced(t, s, herald.RuleConfig{})
	if _, err := c.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterDevice(ctx, "u1", herald.DeviceInput{DeviceID: "d1", Token: "tok", Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(kafkaapi.NotificationEvent{NotificationID: "n-1", UserID: "u1", NotificationType: "PRICE_DROP",
		Title: "Price drop", Body: "Now 8,500", Channels: []string{"PUSH"}})
	rec := &kgo.Record{Topic: requests, Key: []byte("u1"), Value: body,
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-" + producerTrace + "-" + producerSpan + "-01")}}}
	if err := f.prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f.consumer(c, kafkaapi.Config{})

	named := func() map[string]sdktrace.ReadOnlySpan {
		m := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range exp.GetSpans().Snapshots() {
			if s.SpanContext().TraceID().String() == producerTrace {
				m[s.Name()] = s
			}
		}
		return m
	}
	f.waitFor("the delivery span", 20*time.Second, func() bool { return named()["herald.deliver"] != nil })
	spans := named()
	recSpan := spans["herald.kafka.record "+requests]
	if recSpan == nil || recSpan.Parent().SpanID().String() != producerSpan || attr(recSpan, "messaging.destination.name") != requests {
		t.Fatalf("the record span is missing or not the producer's child: %v", recSpan)
	}
	enq := spans["herald.enqueue"]
	if enq == nil || enq.Parent().SpanID() != recSpan.SpanContext().SpanID() || attr(enq, "herald.notification_id") == "" {
		t.Fatalf("the enqueue span is missing or not the record's child: %v", enq)
	}
	nid := attr(enq, "herald.notification_id")
	deliver := spans["herald.deliver"]
	did := attr(deliver, "herald.delivery_id")
	if attr(deliver, "herald.notification_id") != nid || did == "" || attr(deliver, "herald.outcome") != "sent" ||
		deliver.Parent().SpanID() != enq.SpanContext().SpanID() {
		t.Errorf("delivery span: parent %s, attributes %v", deliver.Parent().SpanID(), deliver.Attributes())
	}
	for _, n := range []string{"herald.claim", "herald.policy", "herald.send"} {
		if s := spans[n]; s == nil || attr(s, "herald.delivery_id") != did {
			t.Errorf("%s span missing or without delivery id %s: %v", n, did, s)
		}
	}
}

// Issue 34 item 5: an event whose record carries a traceparent is traced
// through the rule it fires: the run's batch is a "herald.rule.batch" span
// of the record's trace — written with the event (a small audience, issue
// 39 item 3) or later by the leader's rule runner — and each
// notification's delivery is that span's child, down to the send.
func TestEventIsTracedThroughItsRuleRun(t *testing.T) {
	for name, open := range tracedStores {
		for _, path := range []struct {
			name  string
			rules herald.RuleConfig
		}{{"inline", herald.RuleConfig{}}, {"runner", herald.RuleConfig{InlineRecipients: -1}}} {
			t.Run(name+"/"+path.name, func(t *testing.T) { eventIsTraced(t, open(t), path.rules) })
		}
	}
}

func eventIsTraced(t *testing.T, s store.Store, rules herald.RuleConfig) {
	const producerTrace, producerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	f := newFixture(t)
	ctx := f.ctx
	c, exp := startTraced(t, s, rules)
	if _, err := c.PutType(ctx, "price_drop", herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"u1", "u2"} {
		if _, err := c.PutUser(ctx, u, herald.UserInput{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.RegisterDevice(ctx, u, herald.DeviceInput{DeviceID: "d-" + u, Token: "tok-" + u, Platform: heraldtype.PlatformAndroid}); err != nil {
			t.Fatal(err)
		}
	}
	r := heraldtype.Rule{Name: "price-drop", Source: heraldtype.RuleSource{KafkaTopic: "events.v1"},
		When:     heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{Always: true}},
		Audience: heraldtype.RuleAudience{UserIDs: []string{"u1", "u2"}}, Notify: heraldtype.RuleNotify{Type: "price_drop", Title: "Now {{.price}}"}}
	if _, _, err := c.PutRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(herald.Event{ID: "ev-1", Name: "PRICE_CHANGE", Subject: "product:42", Data: map[string]string{"price": "8500"}})
	rec := &kgo.Record{Topic: "events.v1", Key: []byte("product:42"), Value: body,
		Headers: []kgo.RecordHeader{{Key: "traceparent", Value: []byte("00-" + producerTrace + "-" + producerSpan + "-01")}}}
	if err := f.prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f.consumer(c, kafkaapi.Config{})

	inTrace := func() []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range exp.GetSpans().Snapshots() {
			if s.SpanContext().TraceID().String() == producerTrace {
				out = append(out, s)
			}
		}
		return out
	}
	named := func(name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range inTrace() {
			if s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}
	// The record's span ends after its transaction commits, and so does
	// the runner's batch span after its batch's; the worker may send both
	// deliveries before either: wait for all four (CI once found the
	// deliveries' spans alone, and a loaded machine the batch's missing).
	f.waitFor("both deliveries' spans, the record's and the batch's", 20*time.Second, func() bool {
		return len(named("herald.deliver")) == 2 && len(named("herald.kafka.record events.v1")) > 0 &&
			len(named("herald.rule.batch")) > 0
	})
	recSpans := named("herald.kafka.record events.v1")
	if len(recSpans) != 1 || recSpans[0].Parent().SpanID().String() != producerSpan {
		t.Fatalf("the record span is missing or not the producer's child: %v", recSpans)
	}
	batches := named("herald.rule.batch")
	if len(batches) != 1 {
		t.Fatalf("%d rule batch spans in the trace, want 1", len(batches))
	}
	b := batches[0]
	if b.Parent().SpanID() != recSpans[0].SpanContext().SpanID() || attr(b, "herald.rule") != "price-drop" ||
		attr(b, "herald.run_id") == "" || attr(b, "herald.enqueued") != "2" || attr(b, "herald.run_state") != "done" {
		t.Fatalf("the batch span: parent %s, attributes %v", b.Parent().SpanID(), b.Attributes())
	}
	users := map[string]bool{}
	for _, d := range named("herald.deliver") {
		if d.Parent().SpanID() != b.SpanContext().SpanID() || attr(d, "herald.outcome") != "sent" {
			t.Errorf("delivery span: parent %s, attributes %v", d.Parent().SpanID(), d.Attributes())
		}
		n, err := c.GetNotification(ctx, attr(d, "herald.notification_id"))
		if err != nil {
			t.Fatal(err)
		}
		users[n.UserID] = true
	}
	if !users["u1"] || !users["u2"] {
		t.Errorf("the traced deliveries went to %v, want u1 and u2", users)
	}
	sends := named("herald.send")
	if len(sends) != 2 {
		t.Errorf("%d send spans in the trace, want 2", len(sends))
	}
}
