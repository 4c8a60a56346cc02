package postgres

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The rule engine's events, subjects and runs: store.Events (issue 20
// items 1 and 4). Two events of one subject decided at once: the second
// RecordEvent's guarded subject UPDATE waits for the first to commit, then
// finds the seq moved on and writes nothing; two deliveries of one event:
// the second INSERT waits, then finds the row.

const ruleRunColumns = `rule, run_id, source, event_id, event, subject, job, state, cursor, recipients, enqueued,
	last_error, version, created_at, updated_at, finished_at, trace_parent`

func scanRuleRun(row interface{ Scan(...any) error }) (heraldtype.RuleRun, error) {
	var r heraldtype.RuleRun
	var job []byte
	var finished *time.Time
	var traceParent *string
	err := row.Scan(&r.Rule, &r.ID, &r.Source, &r.EventID, &r.Event, &r.Subject, &job, &r.State, &r.Cursor, &r.Recipients,
		&r.Enqueued, &r.LastError, &r.Version, &r.CreatedAt, &r.UpdatedAt, &finished, &traceParent)
	if err != nil {
		return r, err
	}
	if traceParent != nil {
		r.TraceParent = *traceParent
	}
	r.CreatedAt, r.UpdatedAt, r.FinishedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC(), timeOf(finished)
	return r, store.DecodeRuleJob(job, &r.Job)
}

// RecordedEvent implements store.Events.
func (s *Store) RecordedEvent(ctx context.Context, k store.EventKey) (store.RecordedEvent, bool, error) {
	var out store.RecordedEvent
	var outcome []byte
	var args []any
	err := s.pool.QueryRow(ctx, s.q(rules.EventSelectSQL("{s}.events", k.Source, k.Namespace, k.ID, marker(&args))), args...).
		Scan(&outcome, &out.RequestHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.RecordedEvent{}, false, nil
	}
	if err != nil {
		return store.RecordedEvent{}, false, formatError(err, "event")
	}
	out.Outcome = outcome
	return out, true, nil
}

// EventSubject implements store.Events.
func (s *Store) EventSubject(ctx context.Context, source, subject string) (store.EventSubject, error) {
	var out store.EventSubject
	var state []byte
	var args []any
	err := s.pool.QueryRow(ctx, s.q(rules.SubjectSelectSQL("{s}.event_subjects", source, subject, marker(&args))), args...).
		Scan(&out.Version, &out.Seq, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.EventSubject{}, nil
	}
	out.State = state
	return out, formatError(err, "event subject")
}

// EventState implements store.Events: both reads in one pipelined round
// trip.
func (s *Store) EventState(ctx context.Context, k store.EventKey, subject string) (store.RecordedEvent, bool, store.EventSubject, error) {
	if subject == "" {
		rec, ok, err := s.RecordedEvent(ctx, k)
		return rec, ok, store.EventSubject{}, err
	}
	var rec store.RecordedEvent
	var subj store.EventSubject
	var ok bool
	var args []any
	b := &pgx.Batch{}
	b.Queue(s.q(rules.EventSelectSQL("{s}.events", k.Source, k.Namespace, k.ID, marker(&args))), args...)
	args = nil
	b.Queue(s.q(rules.SubjectSelectSQL("{s}.event_subjects", k.Source, subject, marker(&args))), args...)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	var outcome, state []byte
	err := br.QueryRow().Scan(&outcome, &rec.RequestHash)
	switch {
	case err == nil:
		rec.Outcome, ok = outcome, true
	case !errors.Is(err, pgx.ErrNoRows):
		return rec, false, subj, formatError(err, "event")
	}
	err = br.QueryRow().Scan(&subj.Version, &subj.Seq, &state)
	switch {
	case err == nil:
		subj.State = state
	case !errors.Is(err, pgx.ErrNoRows):
		return rec, ok, store.EventSubject{}, formatError(err, "event subject")
	}
	if ok {
		return rec, true, store.EventSubject{}, nil
	}
	return rec, false, subj, nil
}

// RecordEvent implements store.Events in one transaction, pipelined:
// BEGIN and every write go in one round trip, the guards' results are
// read, and the transaction is committed or rolled back in a second
// (issue 39 item 3: the statements one by one were nine round trips for
// an event with an inline batch).
func (s *Store) RecordEvent(ctx context.Context, r store.EventRecord) (store.EventRecorded, error) {
	if err := store.CheckEventRecord(r); err != nil {
		return store.EventRecorded{}, err
	}
	for {
		out, taken, err := s.recordEvent(ctx, r)
		if len(taken) == 0 {
			return out, err
		}
		// A run of the event exists already (kept after its event's
		// record was pruned): it has sent; write the event again without
		// its batch.
		inline := maps.Clone(r.Inline)
		for _, rule := range taken {
			delete(inline, rule)
		}
		r.Inline = inline
	}
}

// recordEvent is one try of RecordEvent; taken names the rules whose
// inline batch was not written because their run exists already (nothing
// was committed then).
func (s *Store) recordEvent(ctx context.Context, r store.EventRecord) (out store.EventRecorded, taken []string, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return out, nil, formatError(err, "connection")
	}
	defer conn.Release()
	c := conn.Conn()
	steps := []step{{sql: "BEGIN", what: "transaction"}}
	if len(r.Inline) > 0 {
		steps = append(steps, enqueuePlans)
	}
	// Each guarded write returns a row when it wrote; read says which did.
	type guard struct{ read, wrote bool }
	written := func(g *guard) func(txRows) error {
		return func(rows txRows) error {
			g.read = true
			g.wrote = rows.Next()
			return nil
		}
	}
	var event, subject guard
	var args []any
	steps = append(steps, step{what: "event", read: written(&event), sql: s.q(rules.EventInsertSQL("{s}.events",
		rules.EventInsert{Source: r.Source, Namespace: r.Namespace, ID: r.ID, Name: r.Name, Subject: r.Subject,
			UserID: r.UserID, Version: r.Version, RequestHash: r.RequestHash, Outcome: []byte(r.Outcome), Now: r.Now},
		marker(&args)) + ` RETURNING true`), args: args})
	if r.Write {
		args = nil
		q := rules.SubjectUpdateSQL("{s}.event_subjects", r.Source, r.Subject, r.Seq, r.Version, []byte(r.State), r.Now, marker(&args))
		if r.Seq == 0 {
			args = nil
			q = rules.SubjectCreateSQL("{s}.event_subjects", r.Source, r.Subject, r.Version, []byte(r.State), r.Now, marker(&args))
		}
		steps = append(steps, step{what: "event subject", read: written(&subject), sql: s.q(q + ` RETURNING true`), args: args})
	}
	runs := make([]guard, len(r.Runs))
	batches := map[string]*enqueueState{}
	for i, run := range r.Runs {
		job, err := store.EncodeRuleJob(run.Job)
		if err != nil {
			return out, nil, err
		}
		var finished *time.Time
		st := r.RunInsert(run)
		if st.Finished {
			now := r.Now.UTC()
			finished = &now
		}
		steps = append(steps, step{what: "rule run", read: written(&runs[i]), sql: s.q(`INSERT INTO {s}.rule_runs (rule, run_id,
	source, event_id, event, subject, job, state, cursor, recipients, enqueued, last_error, version, created_at, updated_at,
	finished_at, trace_parent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 1, $13, $13, $14, NULLIF($15, ''))
ON CONFLICT (rule, run_id) DO NOTHING RETURNING true`),
			args: []any{run.Rule, run.ID, run.Source, run.EventID, run.Event, run.Subject, job, string(st.State),
				st.Cursor, st.Recipients, st.Enqueue, run.LastError, r.Now.UTC(), finished, run.TraceParent}})
		b, ok := r.Inline[run.Rule]
		if !ok || run.LastError != "" {
			continue
		}
		es := &enqueueState{}
		batches[run.Rule] = es
		if b.Enqueue != nil {
			writes, err := s.writeSteps(*b.Enqueue, es)
			if err != nil {
				return out, nil, err
			}
			steps = append(steps, writes...)
		}
	}
	err = runPipeline(ctx, c, steps)
	// The guards first: a redelivery or a subject that moved on is not
	// an error, whatever failed after them.
	var woken []wake
	switch {
	case event.read && !event.wrote:
		out.Replayed = true
	case subject.read && !subject.wrote:
		out.Conflict = true
	case err == nil:
		for i, run := range r.Runs {
			if _, ok := batches[run.Rule]; ok && !runs[i].wrote {
				taken = append(taken, run.Rule)
			}
		}
		if len(taken) > 0 {
			break
		}
		if _, err = c.Exec(ctx, "COMMIT"); err != nil {
			return store.EventRecorded{}, nil, formatError(err, "transaction")
		}
		for _, run := range r.Runs {
			if es, ok := batches[run.Rule]; ok {
				if out.Enqueued == nil {
					out.Enqueued = map[string]store.EnqueueResult{}
				}
				var res store.EnqueueResult
				if b := r.Inline[run.Rule]; b.Enqueue != nil {
					res = es.result(*b.Enqueue)
					woken = append(woken, es.wake())
				}
				out.Enqueued[run.Rule] = res
			}
		}
		for _, w := range woken {
			s.waker.post(w)
		}
		return out, nil, nil
	}
	if !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
		if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil && err == nil {
			return store.EventRecorded{}, nil, formatError(rerr, "transaction")
		}
	}
	switch {
	case out.Replayed:
		rec, _, rerr := s.RecordedEvent(ctx, r.Key())
		return store.EventRecorded{Replayed: true, Outcome: rec.Outcome, RequestHash: rec.RequestHash}, nil, rerr
	case out.Conflict:
		return store.EventRecorded{Conflict: true}, nil, nil
	}
	return store.EventRecorded{}, taken, err
}

// RunningRuleRuns implements store.Events.
func (s *Store) RunningRuleRuns(ctx context.Context, limit int) ([]heraldtype.RuleRun, error) {
	if err := store.CheckDueCampaigns(limit); err != nil {
		return nil, err
	}
	return s.ruleRuns(ctx, `SELECT `+ruleRunColumns+` FROM {s}.rule_runs WHERE state = 'running'
ORDER BY created_at, rule, run_id LIMIT $1`, limit)
}

func (s *Store) ruleRuns(ctx context.Context, query string, args ...any) ([]heraldtype.RuleRun, error) {
	rows, err := s.pool.Query(ctx, s.q(query), args...)
	if err != nil {
		return nil, formatError(err, "rule runs")
	}
	defer rows.Close()
	var rs []heraldtype.RuleRun
	for rows.Next() {
		r, err := scanRuleRun(rows)
		if err != nil {
			return nil, formatError(err, "rule runs")
		}
		rs = append(rs, r)
	}
	return rs, formatError(rows.Err(), "rule runs")
}

// AdvanceRuleRun implements store.Events: the guarded run update first
// (it takes the run's row lock), then the enqueue through the code path
// of Enqueue, in one transaction.
func (s *Store) AdvanceRuleRun(ctx context.Context, b store.RuleBatch) (store.RuleBatchResult, error) {
	if err := store.CheckRuleBatch(b); err != nil {
		return store.RuleBatchResult{}, err
	}
	var out store.RuleBatchResult
	var woken wake
	what := "rule run " + quote(b.RunID)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out, woken = store.RuleBatchResult{}, wake{}
		enqueued := 0
		if b.Enqueue != nil {
			enqueued = len(b.Enqueue.Notifications)
		}
		var args []any
		tag, err := tx.Exec(ctx, s.q(rules.RuleRunAdvanceSQL("{s}.rule_runs", rules.RuleRunAdvance{Rule: b.Rule, RunID: b.RunID,
			Version: b.Version, Cursor: b.Cursor, Recipients: b.Recipients, Enqueued: enqueued, LastError: b.LastError,
			Finish: string(b.Finish), Now: b.Now}, marker(&args))), args...)
		if err != nil {
			return formatError(err, what)
		}
		if tag.RowsAffected() == 0 {
			return nil // the run moved on: nothing of the batch is written
		}
		out.Applied = true
		if b.Enqueue != nil {
			if out.Result, woken, err = s.enqueue(ctx, pgxQuerier{tx}, *b.Enqueue); err != nil {
				return err
			}
		}
		out.Run, err = scanRuleRun(tx.QueryRow(ctx, s.q(`SELECT `+ruleRunColumns+` FROM {s}.rule_runs
WHERE rule = $1 AND run_id = $2`), b.Rule, b.RunID))
		return formatError(err, what)
	})
	if err != nil {
		return store.RuleBatchResult{}, err
	}
	s.waker.post(woken)
	return out, nil
}

// RuleRun implements store.Events.
func (s *Store) RuleRun(ctx context.Context, rule, runID string) (heraldtype.RuleRun, error) {
	r, err := scanRuleRun(s.pool.QueryRow(ctx, s.q(`SELECT `+ruleRunColumns+` FROM {s}.rule_runs
WHERE rule = $1 AND run_id = $2`), rule, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, heraldtype.Errorf(heraldtype.ENOTFOUND, "rule %q has no run %q", rule, runID)
	}
	return r, formatError(err, "rule run")
}

// RetryRuleRun implements store.Events.
func (s *Store) RetryRuleRun(ctx context.Context, r store.RuleRetry) (bool, error) {
	if err := store.CheckRuleRetry(r); err != nil {
		return false, err
	}
	job, err := store.EncodeRuleJob(r.Job)
	if err != nil {
		return false, err
	}
	var args []any
	tag, err := s.pool.Exec(ctx, s.q(rules.RuleRunRetrySQL("{s}.rule_runs", r.Rule, r.RunID, r.Version, job, r.Now.UTC(),
		marker(&args))), args...)
	if err != nil {
		return false, formatError(err, "rule run "+quote(r.RunID))
	}
	return tag.RowsAffected() > 0, nil
}

// ListRuleRuns implements store.Events.
func (s *Store) ListRuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) ([]heraldtype.RuleRun, string, error) {
	limit, cur, err := store.CheckRuleRunFilter(f)
	if err != nil {
		return nil, "", err
	}
	q := `SELECT ` + ruleRunColumns + ` FROM {s}.rule_runs WHERE rule = $1`
	args := []any{f.Rule, limit + 1}
	if !cur.IsZero() {
		q += ` AND (created_at, run_id) < ($3, $4)`
		args = append(args, cur.StartedAt, cur.ID)
	}
	rs, err := s.ruleRuns(ctx, q+` ORDER BY created_at DESC, run_id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, "", err
	}
	rs, next := store.RuleRunPage(rs, limit)
	return rs, next, nil
}

// PruneEvents implements store.Events.
func (s *Store) PruneEvents(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := store.CheckPruneFinished(limit); err != nil {
		return 0, err
	}
	n := 0
	for _, q := range []func(rules.Marker) string{
		func(m rules.Marker) string { return rules.EventPruneSQL("{s}.events", cutoff, limit, m) },
		func(m rules.Marker) string { return rules.RuleRunPruneSQL("{s}.rule_runs", cutoff, limit, m) },
	} {
		var args []any
		tag, err := s.pool.Exec(ctx, s.q(q(marker(&args))), args...)
		if err != nil {
			return n, formatError(err, "events")
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}
