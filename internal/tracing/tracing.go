// Package tracing holds what Herald's components share to take part in an
// OpenTelemetry trace: the instrumentation name, the attribute keys, the
// test for "tracing is off", and the W3C traceparent a notification keeps
// in the store so the worker that claims it later continues its trace.
//
// The SDK (exporter, sampler) is not here: the CLI builds it from its
// configuration, and an embedding program passes its own TracerProvider to
// herald.Config. Everything here is the API only.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope every Herald tracer is named after.
const Name = "github.com/heraldhq/herald"

// Attribute keys Herald sets on its spans.
const (
	NotificationID = attribute.Key("herald.notification_id")
	DeliveryID     = attribute.Key("herald.delivery_id")
	Type           = attribute.Key("herald.type")
	Channel        = attribute.Key("herald.channel")
	Provider       = attribute.Key("herald.provider")
	Outcome        = attribute.Key("herald.outcome")
	ErrorCode      = attribute.Key("herald.error_code")
	Attempt        = attribute.Key("herald.attempt")
	Recipients     = attribute.Key("herald.recipients")
	Verdict        = attribute.Key("herald.policy.verdict")
	Rule           = attribute.Key("herald.rule")
	Campaign       = attribute.Key("herald.campaign")
	RunID          = attribute.Key("herald.run_id")
)

// Tracer returns Herald's tracer of tp, or nil when tracing is off: tp is
// nil or a no-op provider. Callers test the nil and skip every span, so a
// deployment without tracing pays not even a context allocation.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return nil
	}
	return tp.Tracer(Name)
}

// propagator reads and writes the W3C traceparent header; tracestate is
// not kept with a notification (vendor state of a trace does not outlive
// the request that carried it).
var propagator = propagation.TraceContext{}

// Extract returns ctx with the remote span context of carrier's
// traceparent header, or ctx unchanged when there is none or it is
// malformed (a malformed header starts a new trace, as the W3C
// recommendation says, rather than failing the request).
func Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return propagator.Extract(ctx, carrier)
}

// Parent returns ctx with the span context stored as traceparent (by
// TraceParent) as its remote parent; ctx unchanged for "".
func Parent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	c := single(traceparent)
	return propagator.Extract(ctx, &c)
}

// TraceParent is the W3C traceparent of the span in ctx, to be stored with
// what that span enqueued; "" when the span is not sampled, so work that
// no exporter will see costs the worker nothing later.
func TraceParent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	var c single
	propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
	return string(c)
}

// single is a carrier of the traceparent header alone.
type single string

func (s single) Get(key string) string {
	if key == "traceparent" {
		return string(s)
	}
	return ""
}

func (s *single) Set(key, value string) {
	if key == "traceparent" {
		*s = single(value)
	}
}

func (s single) Keys() []string { return []string{"traceparent"} }

var _ propagation.TextMapCarrier = (*single)(nil)
