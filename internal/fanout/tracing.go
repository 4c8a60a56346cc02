package fanout

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/store"
)

// A rule run applied under a sampled trace (the event's request or Kafka
// record) kept its traceparent; each of its batches is a
// "herald.rule.batch" span in that trace, and the notifications the batch
// writes keep the batch span's context, so their sends are its children:
// one trace from the record to the provider call, however long after the
// event the leader writes the batch and on whichever instance (issue 34
// item 5). A run without one is not traced: a trace the sampler dropped
// at the event stays dropped.

// startBatch starts the span of one batch of run, or returns ctx and nil
// when the run is not traced.
func (r *Runner) startBatch(ctx context.Context, run heraldtype.RuleRun, users int) (context.Context, trace.Span) {
	if r.cfg.Tracer == nil || run.TraceParent == "" {
		return ctx, nil
	}
	return r.cfg.Tracer.Start(tracing.Parent(ctx, run.TraceParent), "herald.rule.batch",
		trace.WithAttributes(tracing.Rule.String(run.Rule), tracing.RunID.String(run.ID),
			tracing.Type.String(run.Job.Notification.Type), tracing.Recipients.Int(users),
			attribute.String("herald.cursor", run.Cursor)))
}

// endBatch ends a batch's span (nil: not traced) with what it wrote.
func endBatch(span trace.Span, b store.RuleBatch, res store.RuleBatchResult, err error) {
	if span == nil {
		return
	}
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return
	}
	attrs := []attribute.KeyValue{attribute.Bool("herald.applied", res.Applied)}
	if b.Enqueue != nil {
		attrs = append(attrs, attribute.Int("herald.enqueued", len(b.Enqueue.Notifications)))
	}
	if b.Finish != "" {
		attrs = append(attrs, attribute.String("herald.run_state", string(b.Finish)))
	}
	if b.LastError != "" {
		span.SetStatus(codes.Error, b.LastError)
	}
	span.SetAttributes(attrs...)
}
