package postgres

import (
	"context"
	"errors"
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
	return s.recordedEvent(ctx, s.pool, k)
}

// recordedEvent is RecordedEvent on db (the pool, or a connection).
func (s *Store) recordedEvent(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, k store.EventKey) (store.RecordedEvent, bool, error) {
	var out store.RecordedEvent
	var outcome []byte
	var args []any
	err := db.QueryRow(ctx, s.q(rules.EventSelectSQL("{s}.events", k.Source, k.Namespace, k.ID, marker(&args))), args...).
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

// EventState implements store.Events: the rules, the record, the subject
// and the interests read ahead in one pipelined round trip.
func (s *Store) EventState(ctx context.Context, q store.EventQuery) (store.EventState, error) {
	var out store.EventState
	rq, rargs, limit, err := s.rulesQuery(q.Rules)
	if err != nil {
		return out, err
	}
	b := &pgx.Batch{}
	b.Queue(rq, rargs...)
	k := q.Key
	if k.ID != "" {
		var args []any
		b.Queue(s.q(rules.EventSelectSQL("{s}.events", k.Source, k.Namespace, k.ID, marker(&args))), args...)
	}
	if q.Subject != "" {
		var args []any
		b.Queue(s.q(rules.SubjectSelectSQL("{s}.event_subjects", k.Source, q.Subject, marker(&args))), args...)
	}
	for _, iq := range q.Interests {
		if err := store.CheckInterestQuery(iq); err != nil {
			return out, err
		}
		var args []any
		b.Queue(s.q(interestedUsersSQL(iq, marker(&args))), args...)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return out, formatError(err, "rules")
	}
	if out.Rules, out.RulesNext, err = rulesPage(rows, limit); err != nil {
		return out, err
	}
	if k.ID != "" {
		var outcome []byte
		err := br.QueryRow().Scan(&outcome, &out.Recorded.RequestHash)
		switch {
		case err == nil:
			out.Recorded.Outcome, out.Found = outcome, true
		case !errors.Is(err, pgx.ErrNoRows):
			return out, formatError(err, "event")
		}
	}
	if q.Subject != "" {
		var state []byte
		err := br.QueryRow().Scan(&out.Subject.Version, &out.Subject.Seq, &state)
		switch {
		case err == nil:
			out.Subject.State = state
		case !errors.Is(err, pgx.ErrNoRows):
			return out, formatError(err, "event subject")
		}
	}
	for range q.Interests {
		rows, err := br.Query()
		if err != nil {
			return out, formatError(err, "interests")
		}
		page, err := collectInterested(rows)
		if err != nil {
			return out, err
		}
		out.Interested = append(out.Interested, page)
	}
	return out, formatError(br.Close(), "event")
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

// ruleRunFinishedSQL writes the rule_run.finished messages of the run $2,
// $3 that a write of the transaction just finished, with the event id $1.
var ruleRunFinishedSQL = rules.RuleRunFinishedSQL(rules.WebhookPostgres, rules.RuleRunFinishedFrom("$2", "$3"), "$1") + ` ORDER BY e.id`

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
		if b.Finish != "" {
			// The run's end, reported in its transaction (issue 35 item 4).
			if _, err := tx.Exec(ctx, s.q(ruleRunFinishedSQL), rules.RuleRunEventID(b.Rule, b.RunID, b.Version+1),
				b.Rule, b.RunID); err != nil {
				return formatError(err, "webhook messages")
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
