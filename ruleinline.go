package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/logging"
	"github.com/heraldhq/herald/store"
)

// A rule run whose whole audience is known when the event is applied and
// fits one batch is written with the event (issue 39 item 3): its
// notifications are enqueued in the event's own transaction and the run
// is recorded done, as the rule runner would have left it after its one
// batch. The event then costs one transaction instead of three (the
// event, the runner's batch, the run's end), and its first push does not
// wait for the leader. The batch is built exactly as the runner builds it
// (buildRuleBatch: validation, routing, the user × subject × type dedupe
// key, the rule's Source); a run that cannot be written so for a reason
// the runner handles — a listed user that does not exist, a message the
// pipeline refuses, an audience that failed to answer — is left to the
// runner, recorded running as before. A run is written either done with
// its batch or running for the runner, in one INSERT, so it is never
// both; and since the batch commits with the event's record, a
// redelivered event finds the record and sends nothing again.

// inlineBatches fills rec.Inline with the only batch of each run of rec
// whose audience fits rules.inline_recipients. It returns an error only
// when ctx ends.
func (c *Client) inlineBatches(ctx context.Context, rec *store.EventRecord, aud audience.Resolver) error {
	rec.Inline = nil
	n := c.cfg.Rules.InlineRecipients
	if n <= 0 {
		return nil
	}
	for _, run := range rec.Runs {
		b, ok := c.inlineBatch(ctx, aud, run, n, rec.Now)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ok {
			continue
		}
		if rec.Inline == nil {
			rec.Inline = map[string]store.InlineBatch{}
		}
		rec.Inline[run.Rule] = b
	}
	return nil
}

// inlineBatch reads run's audience, at most n users, and builds its one
// batch; ok is false when the run is the runner's: it failed already, its
// audience pages through a source the deployment registered or a webhook,
// it has more than n users, its notifications join digests, or the
// audience or the batch could not be read or built (the runner tries
// again, or fails the run with the reason).
func (c *Client) inlineBatch(ctx context.Context, aud audience.Resolver, run heraldtype.RuleRun, n int, now time.Time) (store.InlineBatch, bool) {
	a := run.Job.Audience
	if run.LastError != "" || a.Source != "" || a.Webhook != nil || a.Limit < 1 {
		return store.InlineBatch{}, false
	}
	want, ask := inlineAsk(a, n)
	src := aud.ForJob(run.Rule, a)
	users, err := src.Next(ctx, "", ask)
	if err != nil || len(users) > want {
		return store.InlineBatch{}, false
	}
	// As the runner decides its last batch: the end of the audience (a
	// short page from an exhaustive source), or its limit.
	if !audience.Ends(src, len(users), ask) && len(users) < a.Limit {
		return store.InlineBatch{}, false
	}
	b := store.InlineBatch{Recipients: len(users)}
	if len(users) == 0 {
		return b, true
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	b.Cursor = ids[len(ids)-1]
	bctx, span := c.startInlineBatch(ctx, run, len(ids))
	p, err := c.buildRuleBatch(bctx, run, ids) // stamps the batch span's context
	endInlineBatch(span, p, err)
	if err != nil || p.Digest != nil {
		// A batch that joins digests (issue 36) is the runner's: the
		// event's write is set-based and pipelined on PostgreSQL, and a
		// join reads what it found before it writes; the runner's batch
		// goes through the store's enqueue, which joins. The digest
		// waits for its window anyway.
		return store.InlineBatch{}, false
	}
	p.Now = now
	b.Enqueue = &p
	return b, true
}

// inlineAsk is how many users an inline batch of at most n wants of
// audience a, and how many it asks for: the runner's first page asks for
// min(batch, limit) users; asking for one more than n tells an audience
// of n from a larger one.
func inlineAsk(a heraldtype.JobAudience, n int) (want, ask int) {
	want = min(n, a.Limit)
	ask = want
	if a.Limit > n {
		ask = n + 1
	}
	return want, ask
}

// inlined records, once the event committed, what its inline runs did —
// as the runner records a run's last batch: the recipients, the run
// finished, its audience's size, the workers and inbox streams woken, and
// the run-finished log line.
func (c *Client) inlined(rec store.EventRecord, done store.EventRecorded) {
	for _, run := range rec.Runs {
		res, ok := done.Enqueued[run.Rule]
		if !ok {
			continue
		}
		b := rec.Inline[run.Rule]
		name := c.metrics.Rule(run.Rule)
		if b.Enqueue != nil {
			c.metrics.RuleRecipients.WithLabelValues(name).Add(float64(b.Enqueued()))
			c.enqueued(run.Job.Notification.Type, res, true)
		}
		c.metrics.RuleRuns.WithLabelValues(string(heraldtype.RunDone)).Inc()
		c.metrics.RuleAudience.WithLabelValues(name).Observe(float64(b.Recipients))
		c.log.Info("rules: run finished", logging.Key, ComponentRules, "rule", run.Rule, "run", run.ID,
			"state", heraldtype.RunDone, "recipients", b.Recipients, "enqueued", b.Enqueued(), "last_error", "", "inline", true)
	}
}
