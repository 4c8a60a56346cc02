package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func TestTracerIsNilWhenOff(t *testing.T) {
	for _, tp := range []trace.TracerProvider{nil, noop.NewTracerProvider(), new(noop.TracerProvider)} {
		if Tracer(tp) != nil {
			t.Errorf("Tracer(%T) is not nil", tp)
		}
	}
	if Tracer(sdktrace.NewTracerProvider()) == nil {
		t.Error("Tracer of an SDK provider is nil")
	}
}

// A stored traceparent makes the next span a child of the span that was
// current when it was stored; an unsampled span stores nothing.
func TestTraceParentRoundTrip(t *testing.T) {
	tr := sdktrace.NewTracerProvider().Tracer("t")
	ctx, span := tr.Start(context.Background(), "enqueue")
	tp := TraceParent(ctx)
	if want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"; tp != want {
		t.Fatalf("TraceParent = %q, want %q", tp, want)
	}
	_, child := tr.Start(Parent(context.Background(), tp), "deliver")
	ro := child.(sdktrace.ReadOnlySpan)
	if ro.Parent().SpanID() != span.SpanContext().SpanID() || ro.SpanContext().TraceID() != span.SpanContext().TraceID() {
		t.Errorf("child of the stored parent: parent %v", ro.Parent())
	}
	if got := Parent(context.Background(), ""); trace.SpanContextFromContext(got).IsValid() {
		t.Error("an empty traceparent gave a parent")
	}
	if got := Parent(context.Background(), "00-garbage"); trace.SpanContextFromContext(got).IsValid() {
		t.Error("a malformed traceparent gave a parent")
	}
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("t")
	uctx, _ := unsampled.Start(context.Background(), "enqueue")
	if got := TraceParent(uctx); got != "" {
		t.Errorf("unsampled TraceParent = %q", got)
	}
	if got := TraceParent(context.Background()); got != "" {
		t.Errorf("TraceParent without a span = %q", got)
	}
}
