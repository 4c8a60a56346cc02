package kafkaapi

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/tracing"
)

// tracerProvider is a Client that traces (herald.Client.TracerProvider):
// the consumer then records a span per record, child of the record's
// traceparent header, so the Client's enqueue and the deliveries' sends
// join the producer's trace. A Client without the method, or one whose
// provider is nil, is not traced.
type tracerProvider interface {
	TracerProvider() trace.TracerProvider
}

// recordTracer is the tracer of client, nil when it does not trace.
func recordTracer(client Client) trace.Tracer {
	if tp, ok := client.(tracerProvider); ok {
		return tracing.Tracer(tp.TracerProvider())
	}
	return nil
}

// startRecord starts the consumer span of one record.
func (c *Consumer) startRecord(ctx context.Context, r *kgo.Record) (context.Context, trace.Span) {
	ctx = tracing.Extract(ctx, recordCarrier{r})
	return c.tracer.Start(ctx, "herald.kafka.record "+r.Topic, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("messaging.system", "kafka"),
			attribute.String("messaging.destination.name", r.Topic),
			attribute.Int64("messaging.destination.partition.id", int64(r.Partition)),
			attribute.Int64("messaging.kafka.offset", r.Offset)))
}

// endRecord ends a record's span with how it was settled.
func endRecord(span trace.Span, s settlement) {
	switch s {
	case settled:
		span.SetAttributes(tracing.Outcome.String("settled"))
	case interrupted:
		span.SetAttributes(tracing.Outcome.String("interrupted"))
	default:
		span.SetAttributes(tracing.Outcome.String("stuck"))
		span.SetStatus(codes.Error, "the record can be neither applied nor dead-lettered yet")
	}
	span.End()
}

// recordCarrier reads a record's headers as a propagation carrier. Kafka
// headers may repeat; the first of a key wins, as the W3C header
// propagation for Kafka does.
type recordCarrier struct{ r *kgo.Record }

func (c recordCarrier) Get(key string) string {
	for _, h := range c.r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Set is not used: the consumer only reads a record's context.
func (c recordCarrier) Set(key, value string) {}

func (c recordCarrier) Keys() []string {
	keys := make([]string, len(c.r.Headers))
	for i, h := range c.r.Headers {
		keys[i] = h.Key
	}
	return keys
}
