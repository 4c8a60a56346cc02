package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The rule engine's events, subjects and runs: store.Events (issue 20
// items 1 and 4). SQLite has one writer at a time, so the guards of
// store/rules/events.go only ever find another writer's committed rows.

const ruleRunColumns = `rule, run_id, source, event_id, event, subject, job, state, cursor, recipients, enqueued,
	last_error, version, created_at, updated_at, finished_at, trace_parent`

func scanRuleRun(sc interface{ Scan(...any) error }) (heraldtype.RuleRun, error) {
	var r heraldtype.RuleRun
	var job string
	var created, updated int64
	var finished sql.NullInt64
	var traceParent sql.NullString
	err := sc.Scan(&r.Rule, &r.ID, &r.Source, &r.EventID, &r.Event, &r.Subject, &job, &r.State, &r.Cursor, &r.Recipients,
		&r.Enqueued, &r.LastError, &r.Version, &created, &updated, &finished, &traceParent)
	if err != nil {
		return r, err
	}
	r.TraceParent = traceParent.String
	r.CreatedAt, r.UpdatedAt, r.FinishedAt = fromMicros(created), fromMicros(updated), timeOf(finished)
	return r, store.DecodeRuleJob([]byte(job), &r.Job)
}

// RecordedEvent implements store.Events.
func (s *Store) RecordedEvent(ctx context.Context, k store.EventKey) (store.RecordedEvent, bool, error) {
	var outcome, hash string
	var args []any
	err := s.read.QueryRowContext(ctx, rules.EventSelectSQL("events", k.Source, k.Namespace, k.ID, mark(&args)), args...).
		Scan(&outcome, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return store.RecordedEvent{}, false, nil
	}
	if err != nil {
		return store.RecordedEvent{}, false, formatError(err, "event")
	}
	return store.RecordedEvent{Outcome: json.RawMessage(outcome), RequestHash: hash}, true, nil
}

// EventSubject implements store.Events.
func (s *Store) EventSubject(ctx context.Context, source, subject string) (store.EventSubject, error) {
	var out store.EventSubject
	var state string
	var args []any
	err := s.read.QueryRowContext(ctx, rules.SubjectSelectSQL("event_subjects", source, subject, mark(&args)), args...).
		Scan(&out.Version, &out.Seq, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return store.EventSubject{}, nil
	}
	out.State = json.RawMessage(state)
	return out, formatError(err, "event subject")
}

// EventState implements store.Events: reads of the local file, one after another.
func (s *Store) EventState(ctx context.Context, q store.EventQuery) (store.EventState, error) {
	var out store.EventState
	var err error
	if out.Rules, out.RulesNext, err = s.ListRules(ctx, q.Rules); err != nil {
		return out, err
	}
	if q.Key.ID != "" {
		if out.Recorded, out.Found, err = s.RecordedEvent(ctx, q.Key); err != nil {
			return out, err
		}
	}
	if q.Subject != "" {
		if out.Subject, err = s.EventSubject(ctx, q.Key.Source, q.Subject); err != nil {
			return out, err
		}
	}
	for _, iq := range q.Interests {
		page, err := s.InterestedUsers(ctx, iq)
		if err != nil {
			return out, err
		}
		out.Interested = append(out.Interested, page)
	}
	return out, nil
}

// RecordEvent implements store.Events in one transaction.
func (s *Store) RecordEvent(ctx context.Context, r store.EventRecord) (store.EventRecorded, error) {
	if err := store.CheckEventRecord(r); err != nil {
		return store.EventRecorded{}, err
	}
	var replayed, conflict bool
	var enqueued map[string]store.EnqueueResult
	rollback := errors.New("rollback")
	err := s.inTx(ctx, func(tx *writeTx) error {
		replayed, conflict, enqueued = false, false, nil
		var args []any
		n, err := s.execN(ctx, tx, "event", rules.EventInsertSQL("events", rules.EventInsert{Source: r.Source,
			Namespace: r.Namespace, ID: r.ID, Name: r.Name, Subject: r.Subject, UserID: r.UserID, Version: r.Version,
			RequestHash: r.RequestHash, Outcome: string(r.Outcome), Now: r.Now}, mark(&args)), args...)
		if err != nil {
			return err
		}
		if n == 0 {
			replayed = true
			return rollback
		}
		if r.Write {
			args = nil
			q := rules.SubjectUpdateSQL("event_subjects", r.Source, r.Subject, r.Seq, r.Version, string(r.State), r.Now, mark(&args))
			if r.Seq == 0 {
				args = nil
				q = rules.SubjectCreateSQL("event_subjects", r.Source, r.Subject, r.Version, string(r.State), r.Now, mark(&args))
			}
			if n, err = s.execN(ctx, tx, "event subject", q, args...); err != nil {
				return err
			}
			if n == 0 {
				conflict = true
				return rollback
			}
		}
		for _, run := range r.Runs {
			job, err := store.EncodeRuleJob(run.Job)
			if err != nil {
				return err
			}
			var finished any
			st := r.RunInsert(run)
			if st.Finished {
				finished = micros(r.Now)
			}
			n, err := s.execN(ctx, tx, "rule run", `INSERT INTO rule_runs (rule, run_id, source, event_id, event, subject, job, state,
	cursor, recipients, enqueued, last_error, version, created_at, updated_at, finished_at, trace_parent)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, NULLIF(?, ''))
ON CONFLICT (rule, run_id) DO NOTHING`, run.Rule, run.ID, run.Source, run.EventID, run.Event, run.Subject, string(job), st.State,
				st.Cursor, st.Recipients, st.Enqueue, run.LastError, micros(r.Now), micros(r.Now), finished, run.TraceParent)
			if err != nil {
				return err
			}
			if n == 1 && st.Finished {
				// Written finished (done inline, or failed): reported with
				// its insert (issue 35 item 4), at version 1.
				if err := s.ruleRunFinished(ctx, tx, run.Rule, run.ID, 1); err != nil {
					return err
				}
			}
			// An inline batch is enqueued only with the run it finishes:
			// a run kept from an earlier delivery (its event pruned) has
			// sent already.
			b, ok := r.Inline[run.Rule]
			if !ok || n == 0 || run.LastError != "" {
				continue
			}
			var res store.EnqueueResult
			if b.Enqueue != nil {
				if res, err = s.enqueue(ctx, tx, *b.Enqueue); err != nil {
					return err
				}
			}
			if enqueued == nil {
				enqueued = map[string]store.EnqueueResult{}
			}
			enqueued[run.Rule] = res
		}
		return nil
	})
	switch {
	case replayed:
		rec, _, rerr := s.RecordedEvent(ctx, r.Key())
		return store.EventRecorded{Replayed: true, Outcome: rec.Outcome, RequestHash: rec.RequestHash}, rerr
	case conflict:
		return store.EventRecorded{Conflict: true}, nil
	case err != nil:
		return store.EventRecorded{}, err
	}
	return store.EventRecorded{Enqueued: enqueued}, nil
}

// RunningRuleRuns implements store.Events.
func (s *Store) RunningRuleRuns(ctx context.Context, limit int) ([]heraldtype.RuleRun, error) {
	if err := store.CheckDueCampaigns(limit); err != nil {
		return nil, err
	}
	return s.ruleRuns(ctx, `SELECT `+ruleRunColumns+` FROM rule_runs WHERE state = 'running'
ORDER BY created_at, rule, run_id LIMIT ?`, limit)
}

func (s *Store) ruleRuns(ctx context.Context, query string, args ...any) ([]heraldtype.RuleRun, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
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

// AdvanceRuleRun implements store.Events: the guarded run update first,
// then the enqueue, in one transaction.
func (s *Store) AdvanceRuleRun(ctx context.Context, b store.RuleBatch) (store.RuleBatchResult, error) {
	if err := store.CheckRuleBatch(b); err != nil {
		return store.RuleBatchResult{}, err
	}
	var out store.RuleBatchResult
	what := "rule run " + quote(b.RunID)
	err := s.inTx(ctx, func(tx *writeTx) error {
		out = store.RuleBatchResult{}
		enqueued := 0
		if b.Enqueue != nil {
			enqueued = len(b.Enqueue.Notifications)
		}
		var args []any
		n, err := s.execN(ctx, tx, what, rules.RuleRunAdvanceSQL("rule_runs", rules.RuleRunAdvance{Rule: b.Rule, RunID: b.RunID,
			Version: b.Version, Cursor: b.Cursor, Recipients: b.Recipients, Enqueued: enqueued, LastError: b.LastError,
			Finish: string(b.Finish), Now: b.Now}, mark(&args)), args...)
		if err != nil || n == 0 {
			return err // the run moved on: nothing of the batch is written
		}
		out.Applied = true
		if b.Enqueue != nil {
			if out.Result, err = s.enqueue(ctx, tx, *b.Enqueue); err != nil {
				return err
			}
		}
		if b.Finish != "" {
			if err := s.ruleRunFinished(ctx, tx, b.Rule, b.RunID, b.Version+1); err != nil {
				return err
			}
		}
		out.Run, err = scanRuleRun(s.txRow(ctx, tx, `SELECT `+ruleRunColumns+` FROM rule_runs WHERE rule = ? AND run_id = ?`,
			b.Rule, b.RunID))
		return formatError(err, what)
	})
	return out, err
}

// RuleRun implements store.Events.
func (s *Store) RuleRun(ctx context.Context, rule, runID string) (heraldtype.RuleRun, error) {
	r, err := scanRuleRun(s.read.QueryRowContext(ctx, `SELECT `+ruleRunColumns+` FROM rule_runs WHERE rule = ? AND run_id = ?`,
		rule, runID))
	if errors.Is(err, sql.ErrNoRows) {
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
	var n int
	err = s.inTx(ctx, func(tx *writeTx) error {
		var args []any
		n, err = s.execN(ctx, tx, "rule run "+quote(r.RunID),
			rules.RuleRunRetrySQL("rule_runs", r.Rule, r.RunID, r.Version, string(job), micros(r.Now), mark(&args)), args...)
		return err
	})
	return n > 0, err
}

// ListRuleRuns implements store.Events.
func (s *Store) ListRuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) ([]heraldtype.RuleRun, string, error) {
	limit, cur, err := store.CheckRuleRunFilter(f)
	if err != nil {
		return nil, "", err
	}
	q := `SELECT ` + ruleRunColumns + ` FROM rule_runs WHERE rule = ?`
	args := []any{f.Rule}
	if !cur.IsZero() {
		q += ` AND (created_at, run_id) < (?, ?)`
		args = append(args, micros(cur.StartedAt), cur.ID)
	}
	rs, err := s.ruleRuns(ctx, q+` ORDER BY created_at DESC, run_id DESC LIMIT ?`, append(args, limit+1)...)
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
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		var args []any
		events, err := s.execN(ctx, tx, "events", rules.EventPruneSQL("events", cutoff, limit, mark(&args)), args...)
		if err != nil {
			return err
		}
		args = nil
		runs, err := s.execN(ctx, tx, "rule runs", rules.RuleRunPruneSQL("rule_runs", cutoff, limit, mark(&args)), args...)
		n = events + runs
		return err
	})
	return n, err
}
