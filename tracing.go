package herald

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/store"
)

// TracerProvider is the provider Herald's spans go to: Config's, or nil
// when tracing is off. The transports (httpapi, kafkaapi) start their
// request and record spans from it, so one trace runs from the request
// through the Client to the worker's send.
func (c *Client) TracerProvider() trace.TracerProvider {
	if c.tracer == nil {
		return nil
	}
	return c.cfg.TracerProvider
}

// startEnqueue starts the span of one Enqueue or EnqueueTx call; the
// caller has checked that tracing is on.
func (c *Client) startEnqueue(ctx context.Context, name string, r *Request) (context.Context, trace.Span) {
	n := len(r.UserIDs)
	if r.UserID != "" {
		n++
	}
	return c.tracer.Start(ctx, name, trace.WithAttributes(tracing.Type.String(r.Type), tracing.Recipients.Int(n)))
}

// stampTrace gives each notification of p the traceparent of the enqueue
// span in ctx, so the worker's spans for its deliveries join the trace.
// A trace that is not sampled stamps nothing: its notifications keep a
// NULL and cost the worker nothing.
func stampTrace(ctx context.Context, p *store.EnqueueParams) {
	tp := tracing.TraceParent(ctx)
	if tp == "" {
		return
	}
	for i := range p.Notifications {
		p.Notifications[i].TraceParent = tp
	}
}

// startInlineBatch starts the "herald.rule.batch" span of a run's batch
// written with its event (ruleinline.go), as the rule runner starts one
// for the batches it writes (internal/fanout/tracing.go): the trace has
// the same shape either way, record → batch → deliveries. No span when
// the run keeps no traceparent (tracing off, or not sampled).
func (c *Client) startInlineBatch(ctx context.Context, run heraldtype.RuleRun, users int) (context.Context, trace.Span) {
	if c.tracer == nil || run.TraceParent == "" {
		return ctx, nil
	}
	return c.tracer.Start(tracing.Parent(ctx, run.TraceParent), "herald.rule.batch",
		trace.WithAttributes(tracing.Rule.String(run.Rule), tracing.RunID.String(run.ID),
			tracing.Type.String(run.Job.Notification.Type), tracing.Recipients.Int(users), attribute.Bool("herald.inline", true)))
}

// endInlineBatch ends an inline batch's span (nil: not traced). The batch
// is written by the event's transaction, after the span: a batch that is
// then not written goes to the runner, whose own span follows.
func endInlineBatch(span trace.Span, p store.EnqueueParams, err error) {
	if span == nil {
		return
	}
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String("herald.run_state", "left to the runner"))
		return
	}
	span.SetAttributes(attribute.Int("herald.enqueued", len(p.Notifications)), attribute.String("herald.run_state", string(heraldtype.RunDone)))
}

// endEnqueue ends an enqueue span with what it wrote or why it failed.
func endEnqueue(span trace.Span, res Result, err error) {
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		if code := heraldtype.ErrorCode(err); code != "" {
			span.SetAttributes(tracing.ErrorCode.String(code))
		}
		return
	}
	ids := make([]string, len(res.Notifications))
	for i, n := range res.Notifications {
		ids[i] = n.ID
	}
	attrs := []attribute.KeyValue{attribute.Bool("herald.replayed", res.Replayed)}
	if len(ids) == 1 {
		attrs = append(attrs, tracing.NotificationID.String(ids[0]))
	} else {
		attrs = append(attrs, attribute.StringSlice("herald.notification_ids", ids))
	}
	span.SetAttributes(attrs...)
}
