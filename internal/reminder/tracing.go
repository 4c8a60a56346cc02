package reminder

import (
	"context"
	"sort"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/tracing"
)

// Each batch of due reminders the scheduler claims is a
// "herald.reminder.batch" span, the root of its own trace: an occurrence
// is the clock's doing, days after the request that set the reminder, and
// a trace that long would be read by no one. The occurrences' notifications
// keep the span's context, so their sends are its children (issue 34 item
// 5). The batch's counts (claimed, enqueued, stopped_…) are attributes.

// startBatch starts the span of one claimed batch, or returns ctx and nil
// when tracing is off.
func (s *Scheduler) startBatch(ctx context.Context, claimed int) (context.Context, trace.Span) {
	if s.cfg.Tracer == nil {
		return ctx, nil
	}
	return s.cfg.Tracer.Start(ctx, "herald.reminder.batch", trace.WithNewRoot(),
		trace.WithAttributes(attribute.Int("herald.claimed", claimed)))
}

// endBatch ends a batch's span (nil: not traced) with its counts.
func endBatch(span trace.Span, counts Counts, err error) {
	if span == nil {
		return
	}
	defer span.End()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]attribute.KeyValue, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, attribute.Int("herald.reminders."+k, counts[k]))
	}
	span.SetAttributes(attrs...)
	if enq := counts["enqueued"]; enq > 0 {
		span.SetAttributes(tracing.Recipients.Int(enq))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}
