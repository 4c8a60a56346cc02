package campaign

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/store"
)

// Each batch of a campaign run is a "herald.campaign.batch" span, the
// root of its own trace (the sampler decides, as for a request without a
// traceparent): a run is started by the clock, and one of a million
// recipients would make one trace too big to read. The notifications the
// batch writes keep the span's context, so their sends are its children;
// the campaign and the run are attributes, which find every batch of a
// run (issue 34 item 5).

// startBatch starts the span of one batch of run, or returns ctx and nil
// when tracing is off.
func (r *Runner) startBatch(ctx context.Context, run heraldtype.CampaignRun, users int) (context.Context, trace.Span) {
	if r.cfg.Tracer == nil {
		return ctx, nil
	}
	return r.cfg.Tracer.Start(ctx, "herald.campaign.batch", trace.WithNewRoot(),
		trace.WithAttributes(tracing.Campaign.String(run.Campaign), tracing.RunID.String(run.ID),
			tracing.Recipients.Int(users), attribute.String("herald.cursor", run.Cursor)))
}

// endBatch ends a batch's span (nil: not traced) with what it wrote.
func endBatch(span trace.Span, b store.CampaignBatch, res store.CampaignBatchResult, err error) {
	if span == nil {
		return
	}
	defer span.End()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return
	}
	span.SetAttributes(attribute.Bool("herald.applied", res.Applied), attribute.Int("herald.enqueued", res.Enqueued),
		attribute.Int("herald.skipped", res.Skipped), attribute.Int("herald.fetch_failed", b.FetchFailed),
		attribute.Int("herald.render_failed", b.RenderFailed))
	if b.Finish == heraldtype.RunFailed {
		span.SetStatus(codes.Error, b.LastError)
	}
}
