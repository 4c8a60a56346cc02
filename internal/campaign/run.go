package campaign

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/schedule"
	"github.com/heraldhq/herald/internal/tmpl"
	"github.com/heraldhq/herald/store"
)

// execute runs one run from its cursor to the end of its audience, a
// batch at a time. It returns early, leaving the run running at its last
// cursor, when ctx ends (the lock's at-most, the leader's term) or a
// batch cannot be written; the next tick resumes it. A run another runner
// moved on (a restart, a second runner after a hand-over) is left to it.
func (r *Runner) execute(ctx context.Context, run heraldtype.CampaignRun) error {
	c, err := r.cfg.Store.GetCampaign(ctx, run.Campaign)
	if heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND {
		return nil // deleted, with its runs
	} else if err != nil {
		return err
	}
	if run.Cursor != "" || run.Version > 1 {
		r.cfg.Metrics.Campaigns.WithLabelValues("resumed").Inc()
	}
	content, err := r.parsed(c)
	if err == nil {
		var src audience.Source
		if src, err = audience.For(c.Audience, r.cfg.Store, run.Occurrence); err == nil {
			return r.batches(ctx, c, content, src, run)
		}
	}
	// A stored campaign the API would refuse now (it cannot be fixed by
	// trying again): the run fails, with the reason on it.
	_, ferr := r.advance(ctx, c, store.CampaignBatch{Campaign: run.Campaign, RunID: run.ID, Version: run.Version,
		Cursor: run.Cursor, LastError: err.Error(), Finish: heraldtype.RunFailed, Now: r.cfg.Now().UTC()})
	return ferr
}

func (r *Runner) batches(ctx context.Context, c heraldtype.Campaign, content *Content, src audience.Source, run heraldtype.CampaignRun) error {
	var wall time.Time
	if c.LocalTime && !IsManual(run.ID) {
		early, err := schedule.LoadZone("time_zone", schedule.EarliestZone)
		if err != nil {
			return err
		}
		wall = schedule.WallClock(run.Occurrence, early)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		users, err := src.Next(ctx, run.Cursor, r.cfg.BatchSize)
		if err != nil {
			return err
		}
		b := store.CampaignBatch{Campaign: run.Campaign, RunID: run.ID, Version: run.Version, Cursor: run.Cursor}
		if len(users) == 0 {
			// The end of the audience. A run that considered recipients and
			// reached none of them (every fetch or render failed) failed.
			b.Finish = heraldtype.RunDone
			if run.Recipients > 0 && run.Enqueued+run.Skipped == 0 {
				b.Finish = heraldtype.RunFailed
			}
			b.Now = r.cfg.Now().UTC()
			res, err := r.advance(ctx, c, b)
			if err == nil && res.Applied {
				r.cfg.Metrics.Campaigns.WithLabelValues(string(b.Finish)).Inc()
				r.log.Info("campaign: run finished", "campaign", c.Name, "run", run.ID, "state", b.Finish,
					"recipients", res.Run.Recipients, "enqueued", res.Run.Enqueued, "skipped", res.Run.Skipped,
					"fetch_failed", res.Run.FetchFailed, "render_failed", res.Run.RenderFailed, "last_error", res.Run.LastError)
			}
			return err
		}
		bctx, span := r.startBatch(ctx, run, len(users))
		if err := r.fill(bctx, c, content, run, users, wall, &b); err != nil {
			endBatch(span, b, store.CampaignBatchResult{}, err)
			return err
		}
		res, err := r.advance(bctx, c, b)
		endBatch(span, b, res, err)
		if err != nil || !res.Applied {
			return err
		}
		if b.Finish != "" {
			r.cfg.Metrics.Campaigns.WithLabelValues(string(b.Finish)).Inc()
			r.log.Warn("campaign: run stopped", "campaign", c.Name, "run", run.ID, "last_error", b.LastError)
			return nil
		}
		if r.log.Enabled(ctx, slog.LevelDebug) { // log.debug: [campaign]
			r.log.Debug("campaign: batch done", "campaign", c.Name, "run", run.ID, "cursor", b.Cursor, "users", b.Recipients,
				"enqueued", res.Enqueued, "skipped", res.Skipped, "fetch_failed", b.FetchFailed, "render_failed", b.RenderFailed)
		}
		run = res.Run
		if r.cfg.Pause > 0 {
			t := time.NewTimer(r.cfg.Pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

// fill makes the batch of users: their content fetched (when the campaign
// fetches), rendered and built into one notification each. A user whose
// content cannot be fetched or rendered is counted and left out; the
// batch goes on with the others. Each fetch call's content is rendered as
// soon as its answer arrives and dropped at once (issue 31 item 3): only
// the rendered messages wait for the batch's write.
func (r *Runner) fill(ctx context.Context, c heraldtype.Campaign, content *Content, run heraldtype.CampaignRun,
	users []audience.User, wall time.Time, b *store.CampaignBatch) error {
	b.Recipients, b.Cursor = len(users), users[len(users)-1].ID
	users, err := r.unreached(ctx, run, users, b)
	if err != nil {
		return err
	}
	outs := make([]outcome, len(users))
	one := func(i int, v View) {
		outs[i] = r.render(ctx, c, content, run, users[i], wall, v)
	}
	if c.Fetch == nil {
		for i, u := range users {
			one(i, View{User: ViewUser(u), Campaign: c.Name, Run: run.ID})
		}
	} else {
		at := make(map[string]int, len(users))
		ids := make([]string, len(users))
		for i, u := range users {
			ids[i], at[u.ID] = u.ID, i
		}
		fetchAll(ctx, r.cfg.Caller, r.cfg.Fetch, *c.Fetch, c.Name, run.ID, ids, func(chunk []string, got map[string]UserContent, err error) {
			if err != nil {
				b.LastError = err.Error()
				r.cfg.Metrics.CampaignFetchErrors.Inc()
				r.log.Warn("campaign: fetch failed", "campaign", c.Name, "run", run.ID, "err", err)
			}
			for _, id := range chunk {
				i := at[id]
				uc, ok := got[id]
				switch {
				case err != nil:
					outs[i] = outcome{fetchFailed: true}
				case !ok:
					outs[i] = outcome{fetchFailed: true, err: fmt.Sprintf("fetch: the answer has no content for user %q", id)}
				default:
					one(i, View{User: ViewUser(users[i]), Campaign: c.Name, Run: run.ID, Items: uc.Items, Fields: uc.Fields})
				}
			}
		})
		if err := ctx.Err(); err != nil {
			return err // cut short, not failed: the batch is fetched again on resumption
		}
	}
	rendered, overBudget := 0, 0
	for _, o := range outs {
		if !o.fetchFailed && o.retry == nil {
			rendered++
		}
		if o.overBudget {
			overBudget++
		}
		switch {
		case o.retry != nil:
			return o.retry // not the user's: the batch is tried again
		case o.fetchFailed:
			b.FetchFailed++
		case o.renderFailed:
			b.RenderFailed++
		case b.Enqueue == nil:
			b.Enqueue = o.p
		default:
			b.Enqueue.Notifications = append(b.Enqueue.Notifications, o.p.Notifications...)
		}
		if o.err != "" {
			b.LastError = o.err
		}
	}
	if overBudget > 0 && overBudget == rendered {
		// Every recipient of the batch went over the template budget: the
		// template is the fault, not a user's data, and rendering the rest
		// of the audience would cost each of them the budget again (issue
		// 31 item 1). The run fails here, saying why.
		b.Finish = heraldtype.RunFailed
		b.LastError = "every recipient of a batch went over the template budget; the run stops: " + b.LastError
	}
	b.Now = r.cfg.Now().UTC()
	if b.Enqueue != nil {
		b.Enqueue.Now = b.Now
	}
	return nil
}

// outcome is what became of one user of a batch.
type outcome struct {
	p                         *store.EnqueueParams
	fetchFailed, renderFailed bool
	overBudget                bool   // the render went over the template budget (internal/tmpl)
	err                       string // the user's error, for last_error
	retry                     error  // not the user's: the batch is tried again
}

// render renders and builds one user's notification.
func (r *Runner) render(ctx context.Context, c heraldtype.Campaign, content *Content, run heraldtype.CampaignRun,
	u audience.User, wall time.Time, v View) outcome {
	rendered, err := content.Render(ctx, v)
	if err != nil && ctx.Err() != nil {
		return outcome{retry: ctx.Err()} // cut short, not failed: the batch is rendered again on resumption
	}
	if err != nil {
		o := outcome{renderFailed: true, err: fmt.Sprintf("user %q: %v", u.ID, err)}
		if limit, ok := tmpl.OverBudget(err); ok {
			r.cfg.Metrics.TemplateOverBudget.WithLabelValues("campaign", limit).Inc()
			o.overBudget = true
		}
		return o
	}
	m := Message{Campaign: c, Run: run, UserID: u.ID, Rendered: rendered}
	if !wall.IsZero() {
		m.SendAt = schedule.LocalInstant(wall, r.zone(u.Timezone))
	}
	p, err := r.cfg.Build(ctx, m)
	if code := heraldtype.ErrorCode(err); code == heraldtype.EINVALID {
		return outcome{renderFailed: true, err: fmt.Sprintf("user %q: %v", u.ID, err)}
	} else if err != nil {
		return outcome{retry: err}
	}
	return outcome{p: &p}
}

// unreached leaves out of a re-run's batch the users the run reached in
// an earlier try, counted skipped, so their content is neither fetched nor
// rendered again (issue 30 item 6). A first try has reached nobody past
// its cursor — a batch's recipient records and its cursor commit together
// — so only a restarted run asks the store.
func (r *Runner) unreached(ctx context.Context, run heraldtype.CampaignRun, users []audience.User, b *store.CampaignBatch) ([]audience.User, error) {
	if run.Restarts == 0 {
		return users, nil
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	reached, err := r.cfg.Store.ReachedRecipients(ctx, run.Campaign, run.ID, ids)
	if err != nil || len(reached) == 0 {
		return users, err
	}
	out := make([]audience.User, 0, len(users)-len(reached))
	for _, u := range users {
		if !reached[u.ID] {
			out = append(out, u)
		}
	}
	b.Skipped = len(users) - len(out)
	return out, nil
}

// advance writes a batch and records what it did.
func (r *Runner) advance(ctx context.Context, c heraldtype.Campaign, b store.CampaignBatch) (store.CampaignBatchResult, error) {
	res, err := r.cfg.Store.AdvanceCampaignRun(ctx, b)
	if err != nil || !res.Applied {
		return res, err
	}
	m := r.cfg.Metrics.CampaignRecipients
	m.WithLabelValues("enqueued").Add(float64(res.Enqueued))
	m.WithLabelValues("skipped").Add(float64(res.Skipped))
	m.WithLabelValues("fetch_failed").Add(float64(b.FetchFailed))
	m.WithLabelValues("render_failed").Add(float64(b.RenderFailed))
	if res.Enqueued > 0 && r.cfg.Enqueued != nil {
		r.cfg.Enqueued(c.Type, res.Result)
	}
	return res, nil
}

// zone is a user's zone for local-time delivery.
func (r *Runner) zone(tz string) *time.Location {
	if tz != "" {
		if loc, err := schedule.LoadZone("timezone", tz); err == nil {
			return loc
		}
	}
	loc, err := schedule.LoadZone("timezone", r.cfg.DefaultZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// parsed returns c's parsed templates, cached per campaign version.
func (r *Runner) parsed(c heraldtype.Campaign) (*Content, error) {
	k := contentKey{c.Name, c.Version}
	r.mu.Lock()
	content, ok := r.content[k]
	r.mu.Unlock()
	if ok {
		return content, nil
	}
	content, err := Parse(c, r.cfg.Templates)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if len(r.content) > 1024 {
		clear(r.content)
	}
	r.content[k] = content
	r.mu.Unlock()
	return content, nil
}
