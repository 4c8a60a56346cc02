package dispatch

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/store"
)

// A claimed delivery whose notification kept a traceparent continues that
// trace: a "herald.deliver" span, child of the enqueue span stored with the
// notification, from the claim to the outcome, with a "herald.claim" span
// for the store call that leased it, "herald.policy" for the policy check
// and "herald.send" for the provider call. The stored context is the
// parent rather than a link: the delivery is the trigger's work carried on
// later, and a trace viewer then shows the request and its sends as one
// tree. A delivery without one (tracing off, or a trace not sampled at
// enqueue) takes none of these paths: the hot path tests one string.

// claimWindow is when the claim that leased a batch started and ended, by
// the wall clock.
type claimWindow struct{ start, end time.Time }

// claimWindow is the window of a claim that started at start and just
// ended; nil when tracing is off, which reads no clock and leaves each
// send's closure one pointer larger, not two times.
func (w *Worker) claimWindow(start time.Time) *claimWindow {
	if w.cfg.Tracer == nil {
		return nil
	}
	return &claimWindow{start: start, end: time.Now()}
}

// traced says whether job's spans are recorded.
func (w *Worker) traced(job *heraldtype.Job) bool {
	return w.cfg.Tracer != nil && job.Notification != nil && job.Notification.TraceParent != ""
}

// startDelivery starts job's delivery span under its stored trace and
// records the claim as its first child.
func (w *Worker) startDelivery(ctx context.Context, job *heraldtype.Job, cw *claimWindow) (context.Context, trace.Span) {
	d := &job.Delivery
	ctx = tracing.Parent(ctx, job.Notification.TraceParent)
	ctx, span := w.cfg.Tracer.Start(ctx, "herald.deliver", trace.WithTimestamp(cw.start),
		trace.WithAttributes(tracing.NotificationID.String(d.NotificationID), tracing.DeliveryID.Int64(d.ID),
			tracing.Type.String(d.Type), tracing.Channel.String(string(d.Channel)), tracing.Provider.String(d.Provider),
			tracing.Attempt.Int(d.Attempt)))
	_, claim := w.cfg.Tracer.Start(ctx, "herald.claim", trace.WithTimestamp(cw.start),
		trace.WithAttributes(tracing.DeliveryID.Int64(d.ID)))
	claim.End(trace.WithTimestamp(cw.end))
	return ctx, span
}

// endDelivery ends a delivery span with its outcome; recorded is false
// when the worker stopped mid-send and no outcome is recorded.
func endDelivery(span trace.Span, o *store.Outcome, recorded bool) {
	if !recorded {
		span.SetAttributes(tracing.Outcome.String("interrupted"))
		span.End()
		return
	}
	row := o.Row()
	span.SetAttributes(tracing.Outcome.String(string(row.State)))
	if row.ErrorCode != "" {
		span.SetAttributes(tracing.ErrorCode.String(row.ErrorCode))
	}
	if row.State == heraldtype.StateDead || row.State == heraldtype.StateUnknown {
		span.SetStatus(codes.Error, row.Error)
	}
	span.End()
}

// policy runs checkPolicy, inside a "herald.policy" span when job is
// traced.
func (w *Worker) policy(ctx context.Context, job *heraldtype.Job, pre *policy.Prefetched, now time.Time) (store.Outcome, bool, bool) {
	if !w.traced(job) {
		return w.checkPolicy(ctx, job, pre, now)
	}
	ctx, span := w.cfg.Tracer.Start(ctx, "herald.policy",
		trace.WithAttributes(tracing.DeliveryID.Int64(job.Delivery.ID), tracing.NotificationID.String(job.Delivery.NotificationID)))
	o, record, done := w.checkPolicy(ctx, job, pre, now)
	verdict := "allow"
	if done {
		row := o.Row()
		verdict = string(row.Timeline)
		if verdict == "" {
			verdict = string(row.State)
		}
		if row.ErrorCode != "" {
			span.SetAttributes(tracing.ErrorCode.String(row.ErrorCode))
		}
	}
	span.SetAttributes(tracing.Verdict.String(verdict))
	span.End()
	return o, record, done
}

// startSend starts the "herald.send" span of a provider call.
func (w *Worker) startSend(ctx context.Context, job *heraldtype.Job) (context.Context, trace.Span) {
	d := &job.Delivery
	return w.cfg.Tracer.Start(ctx, "herald.send", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(tracing.DeliveryID.Int64(d.ID), tracing.NotificationID.String(d.NotificationID),
			tracing.Provider.String(d.Provider), tracing.Channel.String(string(d.Channel))))
}

// endSend ends a send span with the provider's answer.
func endSend(span trace.Span, err error) {
	if err != nil {
		se := heraldtype.AsSendError(err)
		span.RecordError(err)
		span.SetStatus(codes.Error, se.Error())
		span.SetAttributes(tracing.ErrorCode.String(se.Code), attribute.String("herald.error_class", string(se.Class)))
	}
	span.End()
}
