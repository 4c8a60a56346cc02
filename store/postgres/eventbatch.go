package postgres

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// RecordEvent's transaction (issue 39 item 3). An event's writes — its
// record, its subject, its runs and the enqueue of its inline batches —
// go with BEGIN and COMMIT in ONE pipelined round trip. Their guards
// cannot be read before the COMMIT is sent, so each guarded write fails
// its statement when it writes nothing (guarded: a division by the count
// of rows written), PostgreSQL skips every statement after it, COMMIT
// included, and the transaction is rolled back: a redelivered event, a
// subject that moved on and a run that exists already cost a second
// round trip, the common case none.
//
// Concurrent events are group-committed (groupcommit.go): the writes of
// several, each with its own guards, in one transaction. Any guard or
// error of one rolls the batch back and each event is written again
// alone, so each gets exactly the answer it would have had alone — a
// failing event fails no other, none is lost or written twice. Two events
// of one subject, or of one key, never share a batch: the second's guard
// would find the first's write and roll every event of the batch back.

// eventBatcher is the RecordEvent calls' group commit.
type eventBatcher = groupCommit[store.EventRecord, store.EventRecorded]

// The guards of an event's writes, as guarded statements fail them.
var (
	errEventRecorded = errors.New("postgres: the event was recorded before")
	errSubjectMoved  = errors.New("postgres: the event's subject moved on")
)

// runTakenError: the run of an inline batch exists already (kept after
// its event's record was pruned): it has sent.
type runTakenError struct{ rule string }

func (e *runTakenError) Error() string {
	return "postgres: rule " + quote(e.rule) + "'s run exists already"
}

// guarded makes a write statement (without RETURNING) fail with
// division_by_zero when it writes no row, so that a pipelined
// transaction stops there; found is the guard's error then. The divisor
// is the count of rows written, not a constant, so the planner cannot
// fold it into an error of its own.
func guarded(st step, found error) step {
	st.sql = `WITH w AS (` + st.sql + ` RETURNING 1) SELECT 1 / count(*) FROM w`
	return failsWhenNone(st, found)
}

// failsWhenNone reads the answer of a guarded statement st, whose
// division by the count of rows written fails it when it writes none;
// found is the guard's error then.
func failsWhenNone(st step, found error) step {
	st.read = func(rows txRows) error {
		for rows.Next() {
		}
		return nil
	}
	st.mapErr = func(err error) error {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "22012" {
			return found
		}
		return err
	}
	return st
}

// RecordEvent implements store.Events: alone, or with concurrent events
// in one transaction.
func (s *Store) RecordEvent(ctx context.Context, r store.EventRecord) (store.EventRecorded, error) {
	if err := store.CheckEventRecord(r); err != nil {
		return store.EventRecorded{}, err
	}
	if s.events.max <= 0 {
		return s.recordAlone(ctx, r)
	}
	return s.events.run(ctx, r, groupWork[store.EventRecord, store.EventRecorded]{
		what:  "event",
		fits:  eventFits,
		alone: s.recordAlone,
		many:  s.recordMany,
	})
}

// eventFits says whether r may join the events rs in one batch: not an
// event of the same key or subject, and the inline notifications within
// the batch bound.
func eventFits(rs []store.EventRecord, r store.EventRecord) bool {
	n := inlineNotifications(r)
	for _, x := range rs {
		if x.Key() == r.Key() || (r.Subject != "" && x.Source == r.Source && x.Subject == r.Subject) {
			return false
		}
		n += inlineNotifications(x)
	}
	return n <= maxBatchNotifications
}

func inlineNotifications(r store.EventRecord) int {
	n := 0
	for _, b := range r.Inline {
		n += b.Enqueued()
	}
	return n
}

// recordAlone writes one checked record in a transaction of its own.
func (s *Store) recordAlone(ctx context.Context, r store.EventRecord) (store.EventRecorded, error) {
	for {
		out, taken, err := s.recordOnce(ctx, r)
		if taken == "" {
			return out, err
		}
		// A run of the event exists already: it has sent; write the
		// event again without its batch.
		inline := maps.Clone(r.Inline)
		delete(inline, taken)
		r.Inline = inline
	}
}

// recordOnce is one try of recordAlone; taken names a rule whose inline
// batch was not written because its run exists already (nothing was
// committed then).
func (s *Store) recordOnce(ctx context.Context, r store.EventRecord) (out store.EventRecorded, taken string, err error) {
	steps, done, err := s.recordSteps([]store.EventRecord{r})
	if err != nil {
		return out, "", err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return out, "", formatError(err, "connection")
	}
	defer conn.Release()
	c := conn.Conn()
	err = runPipeline(ctx, c, steps)
	if err == nil {
		outs, wakes := done()
		for _, w := range wakes {
			s.waker.post(w)
		}
		return outs[0], "", nil
	}
	if !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
		if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil {
			return out, "", formatError(rerr, "transaction")
		}
	}
	var te *runTakenError
	switch {
	case errors.Is(err, errEventRecorded):
		// Read on this connection: another from the pool, while this
		// one is held, could wait for ever on a pool that callers like
		// this one hold entirely.
		rec, _, rerr := s.recordedEvent(ctx, c, r.Key())
		return store.EventRecorded{Replayed: true, Outcome: rec.Outcome, RequestHash: rec.RequestHash}, "", rerr
	case errors.Is(err, errSubjectMoved):
		return store.EventRecorded{Conflict: true}, "", nil
	case errors.As(err, &te):
		return out, te.rule, nil
	}
	return out, "", err
}

// recordMany writes several checked records in one transaction;
// rolledBack reports, on an error, that PostgreSQL certainly did not
// commit it (so each record may be written again alone). The events are
// written in the order of their subjects, so two batches that meet on
// rows lock them in one order.
func (s *Store) recordMany(ctx context.Context, rs []store.EventRecord) (_ []store.EventRecorded, err error, rolledBack bool) {
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(rs[a].Source, rs[b].Source), cmp.Compare(rs[a].Subject, rs[b].Subject))
	})
	sorted := make([]store.EventRecord, len(rs))
	for k, i := range order {
		sorted[k] = rs[i]
	}
	steps, done, err := s.recordSteps(sorted)
	if err != nil {
		// Bad input of one record, found before anything was sent:
		// alone, it gets the error and the others are written.
		return nil, err, true
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, formatError(err, "connection"), false
	}
	defer conn.Release()
	c := conn.Conn()
	if err := runPipeline(ctx, c, steps); err != nil {
		if c.IsClosed() {
			return nil, err, false
		}
		switch c.PgConn().TxStatus() {
		case 'E', 'T':
			// Still inside the failed transaction: nothing is
			// committed. Roll back and hand the connection back idle.
			if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil {
				return nil, err, false
			}
			return nil, err, true
		default:
			return nil, err, false
		}
	}
	outs, wakes := done()
	for _, w := range wakes {
		s.waker.post(w)
	}
	results := make([]store.EventRecorded, len(rs))
	for k, i := range order {
		results[i] = outs[k]
	}
	return results, nil, false
}

// recordSteps are the statements of one transaction writing the checked
// records rs, BEGIN and COMMIT included, and done, which gives each
// record's answer and whom to wake once they ran. The inline batches of
// all the records are enqueued together (writeBatch), after the records.
func (s *Store) recordSteps(rs []store.EventRecord) (_ []step, done func() ([]store.EventRecorded, []wake), _ error) {
	var writes []step
	var ps []store.EnqueueParams
	inline := make([][]inlineWrite, len(rs))
	for i, r := range rs {
		st, in, err := s.eventSteps(r)
		if err != nil {
			return nil, nil, err
		}
		writes, inline[i] = append(writes, st...), in
		for _, w := range in {
			if w.p != nil {
				ps = append(ps, *w.p)
			}
		}
	}
	steps := []step{{sql: "BEGIN", what: "transaction"}}
	enqueued := func() ([]store.EnqueueResult, []wake) { return nil, nil }
	if len(ps) > 0 {
		enqueue, d, err := s.writeBatch(ps)
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, enqueuePlans)
		writes, enqueued = append(writes, enqueue...), d
	}
	steps = append(append(steps, writes...), step{sql: "COMMIT", what: "transaction"})
	return steps, func() ([]store.EventRecorded, []wake) {
		results, wakes := enqueued()
		outs := make([]store.EventRecorded, len(rs))
		k := 0
		for i, in := range inline {
			for _, w := range in {
				if outs[i].Enqueued == nil {
					outs[i].Enqueued = map[string]store.EnqueueResult{}
				}
				var res store.EnqueueResult
				if w.p != nil {
					res, k = results[k], k+1
				}
				outs[i].Enqueued[w.rule] = res
			}
		}
		return outs, wakes
	}, nil
}

// inlineWrite is one inline batch of a record: its rule, and its enqueue
// (nil for an empty audience).
type inlineWrite struct {
	rule string
	p    *store.EnqueueParams
}

// eventSteps are the statements that write a checked record but for the
// enqueue of its inline batches, which it returns in the order of the
// record's runs. The record's insert, the subject's write and each
// inline run's insert are guarded.
func (s *Store) eventSteps(r store.EventRecord) ([]step, []inlineWrite, error) {
	var args []any
	steps := []step{guarded(step{what: "event", sql: s.q(rules.EventInsertSQL("{s}.events",
		rules.EventInsert{Source: r.Source, Namespace: r.Namespace, ID: r.ID, Name: r.Name, Subject: r.Subject,
			UserID: r.UserID, Version: r.Version, RequestHash: r.RequestHash, Outcome: []byte(r.Outcome), Now: r.Now},
		marker(&args))), args: args}, errEventRecorded)}
	if r.Write {
		args = nil
		q := rules.SubjectUpdateSQL("{s}.event_subjects", r.Source, r.Subject, r.Seq, r.Version, []byte(r.State), r.Now, marker(&args))
		if r.Seq == 0 {
			args = nil
			q = rules.SubjectCreateSQL("{s}.event_subjects", r.Source, r.Subject, r.Version, []byte(r.State), r.Now, marker(&args))
		}
		steps = append(steps, guarded(step{what: "event subject", sql: s.q(q), args: args}, errSubjectMoved))
	}
	var inline []inlineWrite
	for _, run := range r.Runs {
		job, err := store.EncodeRuleJob(run.Job)
		if err != nil {
			return nil, nil, err
		}
		var finished *time.Time
		st := r.RunInsert(run)
		if st.Finished {
			now := r.Now.UTC()
			finished = &now
		}
		insert := step{what: "rule run", sql: s.q(`INSERT INTO {s}.rule_runs (rule, run_id,
	source, event_id, event, subject, job, state, cursor, recipients, enqueued, last_error, version, created_at, updated_at,
	finished_at, trace_parent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 1, $13, $13, $14, NULLIF($15, ''))
ON CONFLICT (rule, run_id) DO NOTHING`),
			args: []any{run.Rule, run.ID, run.Source, run.EventID, run.Event, run.Subject, job, string(st.State),
				st.Cursor, st.Recipients, st.Enqueue, run.LastError, r.Now.UTC(), finished, run.TraceParent}}
		b, ok := r.Inline[run.Rule]
		if !ok || run.LastError != "" {
			// A run for the runner: one that exists already is the
			// same run, and stays as it is. A failed one is finished:
			// its rule_run.finished messages go with its insert.
			if st.Finished {
				insert = s.runFinishedOnInsert(insert, run, "SELECT count(*) FROM x")
			}
			steps = append(steps, insert)
			continue
		}
		// A run written done with its batch must be this one; it is
		// finished, and reported with its insert.
		insert = s.runFinishedOnInsert(insert, run, "SELECT 1 / count(*) FROM x")
		steps = append(steps, failsWhenNone(insert, &runTakenError{rule: run.Rule}))
		inline = append(inline, inlineWrite{rule: run.Rule, p: b.Enqueue})
	}
	return steps, inline, nil
}

// runFinishedOnInsert makes the insert of a run that is finished as it is
// written (done with its inline batch, or failed) write its
// rule_run.finished messages too (issue 35 item 4), in the same
// statement, which then answers with answer over the rows inserted, x: a
// run that exists already is not inserted and reports nothing. A run is
// inserted at version 1.
func (s *Store) runFinishedOnInsert(insert step, run heraldtype.RuleRun, answer string) step {
	eventID := len(insert.args) + 1
	insert.sql = s.q(`WITH x AS (` + insert.sql + ` RETURNING ` + rules.RuleRunColumns + `), w AS (
	` + rules.RuleRunFinishedSQL(rules.WebhookPostgres, "x", "$"+strconv.Itoa(eventID)) + ` ORDER BY e.id
)
` + answer)
	insert.args = append(insert.args, rules.RuleRunEventID(run.Rule, run.ID, 1))
	return insert
}
