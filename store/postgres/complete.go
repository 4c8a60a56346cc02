package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// leasedBy is the guard of every outcome write (S4.4): the delivery is
// still leased, by this owner, for this attempt.
const leasedBy = `d.state = 'leased' AND d.lease_owner = o.owner AND d.attempt = o.attempt`

// completeRetries bounds how often Complete runs its transaction again
// after PostgreSQL aborted it for a deadlock (two batches resetting the
// fail counts of shared devices in different orders) or a serialization
// failure: the transaction changed nothing, so running it again is safe.
const completeRetries = 3

// Complete implements store.Store: the batch is one pipelined round trip
// of one transaction (BEGIN, indexPlans, …, COMMIT). Device changes run first,
// in outcome order, each guarded by its delivery's lease; then a single
// UPDATE … FROM unnest(…) applies every outcome whose guard holds and an
// INSERT in the same statement writes attempt rows for exactly the ones it
// applied. A failed Complete (a dropped connection included) therefore
// applied nothing, or — when only the COMMIT's answer was lost —
// everything, and a retry of the same batch applies nothing twice.
//
// The last-error rule is OutcomeRow.SetError's (a failed outcome replaces
// the last error, a sent one clears it, a plain release keeps it), and the
// device rules are SQLite's: a sent outcome resets fail_count to 0
// (unless Sent.DeviceClean says there is nothing to reset); a device
// invalidation (Dead.InvalidReason) changes a device only if it was not
// updated after the claim (a token refreshed since is not killed by an
// answer about the old one).
func (s *Store) Complete(ctx context.Context, outcomes []store.Outcome) (int, error) {
	for i := range outcomes {
		if err := store.CheckOutcome(&outcomes[i]); err != nil {
			return 0, err
		}
	}
	if len(outcomes) == 0 {
		return 0, nil
	}
	batch, apply, inbox := s.completeBatch(dedupe(outcomes))
	for try := 1; ; try++ {
		applied, users, err := runComplete(s.pool.SendBatch(ctx, batch), batch.Len(), apply, inbox)
		if err == nil && len(users) > 0 {
			// Inbox streams on every instance, after the commit.
			s.waker.post(wake{inboxUsers: users})
		}
		if err == nil || try == completeRetries || !retryable(err) {
			return applied, err
		}
	}
}

// webhookDialect is PostgreSQL's side of the webhook statements.
var webhookDialect = rules.WebhookPostgres

// outcomeEvents is the CTEs cur and w of a cancel's or the reaper's
// outcome statement — Complete's, the hot path, use outcomeEventsApart
// and statusEventsSQL instead (issue 35
// item 4) whose CTE u is an UPDATE … RETURNING of the deliveries it moves,
// with the columns rules.OutcomeEvents.Moved names: w inserts the webhook
// messages of the moves (rules.OutcomeEventsSQL), in the statement that
// makes them, so they commit with it or not at all. The statement's
// snapshot does not see its own UPDATE, so cur, the deliveries of the
// notifications that finished one, is u's rows and the other deliveries
// of those notifications as the snapshot has them: taken after
// lockFinishing, that snapshot holds every concurrent outcome of those
// notifications that committed before. With no endpoint w probes the
// empty webhook_endpoints table once and reads nothing else; cur is read
// only when an endpoint takes status events.
var outcomeEvents = `cur AS (
	SELECT u.id, u.notification_id, u.channel, u.state, u.last_code AS last_error_code, u.replay_count FROM u
	UNION ALL
	SELECT d.id, d.notification_id, d.channel, d.state, d.last_error_code, d.replay_count FROM {s}.deliveries d
	WHERE d.notification_id IN (SELECT u.notification_id FROM u WHERE u.state IN (` + rules.FinalStatesSQL() + `))
		AND NOT EXISTS (SELECT 1 FROM u WHERE u.id = d.id)
), w AS (
	` + rules.OutcomeEventsSQL(webhookDialect, rules.OutcomeEvents{Moved: "u x", Current: "cur"}) + `
)`

// outcomeEventsApart is outcomeEvents without the status events, the CTE
// w of Complete's statements, which write those apart (statusEventsSQL).
var outcomeEventsApart = `w AS (
	` + rules.OutcomeEventsSQL(webhookDialect, rules.OutcomeEvents{Moved: "u x", StatusApart: true}) + `
)`

// statusEventsSQL writes the notification.status_changed messages of the
// notifications Complete's statements finished, run after them in their
// transaction (rules.OutcomeEvents.StatusApart): $1 is the deliveries the
// batch may have finished, and of those the ones this transaction moved
// are the ones whose row version it wrote (xmin), in a final state. Its
// snapshot, taken after the moves and after lockFinishing, sees them and
// every concurrent outcome of those notifications that committed before.
//
// The moved rows are a MATERIALIZED CTE, computed once: PostgreSQL
// estimates one row for the xmin filter and, in one statement, put the
// status's tallies on the inner side of a nested loop and computed them
// once per notification (auto_explain: loops=200, 120-140 ms per 200
// deliveries). rules.StatusEventsSQL tallies channels and notifications
// in one pass, with no join between the two.
var statusEventsSQL = func() string {
	ev := rules.OutcomeEvents{Moved: "x", Current: "{s}.deliveries"}
	return `WITH x AS MATERIALIZED (SELECT d.id, d.notification_id, d.state, d.finished_at AS at, o.ord
	FROM unnest($1::bigint[]) WITH ORDINALITY AS o (id, ord) JOIN {s}.deliveries d ON d.id = o.id
	WHERE d.xmin = pg_current_xact_id()::xid
)
` + rules.StatusEventsSQL(webhookDialect, ev)
}()

// lockFinishing locks, in id order, the notifications of the deliveries
// whose condition on d is given, when an endpoint takes
// notification.status_changed (a one-time filter: without one it locks
// nothing and costs one probe of the tiny endpoints table). It runs first
// in the transaction of an outcome statement that may finish them (issue
// 35 item 4). Without it two outcomes finishing a notification's last
// two deliveries at once on two connections would each see the other's
// delivery still leased in their snapshot, and neither would report the
// notification final; with it the second waits for the first to commit,
// and its outcome statement, which takes its snapshot afterwards (READ
// COMMITTED), sees the first's move. FOR NO KEY UPDATE does not conflict
// with the KEY SHARE lock an enqueue's deliveries take on their
// notification; the id order keeps two outcome batches from deadlocking.
func lockFinishing(deliveries string) string {
	return `SELECT n.id FROM {s}.notifications n
WHERE n.id IN (SELECT d.notification_id FROM {s}.deliveries d WHERE ` + deliveries + `)
	AND EXISTS (SELECT 1 FROM {s}.webhook_endpoints e WHERE ` +
		rules.WebhookSubscribed("e", "'"+heraldtype.WebhookNotificationStatusChanged+"'") + `)
ORDER BY n.id FOR NO KEY UPDATE OF n`
}

// retryable reports whether PostgreSQL aborted the transaction for a
// deadlock or a serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// dedupe drops an outcome whose guard (delivery, owner, attempt) an
// earlier outcome of the batch has: applied one after the other the later
// one would find the delivery no longer leased, and one UPDATE must not
// see a row twice.
func dedupe(os []store.Outcome) []store.Outcome {
	type guard struct {
		id      int64
		owner   string
		attempt int
	}
	seen := make(map[guard]bool, len(os))
	out := os[:0:0]
	for _, o := range os {
		g := guard{o.DeliveryID, o.Owner, o.Attempt}
		if !seen[g] {
			seen[g] = true
			out = append(out, o)
		}
	}
	return out
}

// completeBatch is the batch of statements of one Complete, and the
// indexes of the ones that apply the outcomes and return how many they
// applied: apply for every outcome but store.InboxSent, inbox (-1 when
// there is none) for those, which also returns the users who got an item.
func (s *Store) completeBatch(all []store.Outcome) (b *pgx.Batch, apply, inbox int) {
	b = &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(indexPlans)
	var finishing []int64 // the deliveries the batch may finish
	for i := range all {
		if all[i].Row().State.Final() {
			finishing = append(finishing, all[i].DeliveryID)
		}
	}
	if len(finishing) > 0 {
		b.Queue(s.q(lockFinishing(`d.id = ANY ($1::bigint[])`)), finishing)
	}
	os, inboxOs := splitInbox(all)
	s.queueDeviceChanges(b, os)
	s.queueSuppressions(b, os)
	inbox = -1
	if len(inboxOs) > 0 {
		inbox = b.Len()
		s.queueInbox(b, inboxOs)
	}
	apply = b.Len()
	if len(os) == 0 {
		b.Queue(`SELECT 0`)
		s.queueStatusEvents(b, finishing)
		b.Queue("COMMIT")
		return b, apply, inbox
	}
	k := len(os)
	ids, attempts := make([]int64, k), make([]int32, k)
	owners, states, codes, errs, pmids, reasons := make([]string, k), make([]string, k), make([]string, k),
		make([]string, k), make([]string, k), make([]string, k)
	runAt, at := make([]*time.Time, k), make([]time.Time, k)
	var due []time.Time // run_ats of the moves back to pending, allocated at the first one
	release, setError, policy := make([]bool, k), make([]bool, k), make([]bool, k)
	retryAfter, latency := make([]int64, k), make([]int64, k)
	notify := false
	for i := range os {
		o := &os[i]
		r := o.Row()
		ids[i], owners[i], attempts[i], states[i] = o.DeliveryID, o.Owner, int32(o.Attempt), string(r.State)
		if !r.State.Final() {
			if due == nil {
				due = make([]time.Time, k)
			}
			due[i] = r.RunAt
			runAt[i] = &due[i]
			notify = notify || !r.RunAt.After(o.At)
		}
		at[i], release[i] = o.At, r.Release
		// A policy release (deferred, policy_error) records its attempt
		// row and says why in the last error, which the history reads.
		policy[i] = r.Release && r.Timeline != ""
		setError[i] = r.SetError
		codes[i], errs[i], pmids[i] = r.ErrorCode, r.Error, r.ProviderMessageID
		retryAfter[i], latency[i] = int64(r.RetryAfter), int64(r.Latency)
		reasons[i] = string(r.Timeline)
	}
	b.Queue(s.q(`WITH o AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[],
		$7::bool[], $8::bool[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::text[],
		$15::bool[])
		WITH ORDINALITY AS o (id, owner, attempt, state, run_at, at, release, set_error, code, error, pmid,
			retry_after, latency, outcome, policy, ord)
), u AS (
	UPDATE {s}.deliveries d SET
		state = o.state,
		attempt = CASE WHEN o.release THEN d.attempt - 1 ELSE d.attempt END,
		run_at = coalesce(o.run_at, d.run_at),
		lease_owner = '', lease_until = NULL,
		last_error_code = CASE WHEN o.set_error AND (NOT o.release OR o.policy) THEN o.code ELSE d.last_error_code END,
		last_error = CASE WHEN o.set_error AND (NOT o.release OR o.policy) THEN o.error ELSE d.last_error END,
		provider_message_id = CASE WHEN o.pmid <> '' AND NOT o.release THEN o.pmid ELSE d.provider_message_id END,
		finished_at = CASE WHEN o.run_at IS NULL THEN o.at END,
		updated_at = o.at,
		last_replay_result = CASE WHEN o.run_at IS NULL AND d.replay_count > 0 THEN o.state
			ELSE d.last_replay_result END
	FROM o WHERE d.id = o.id AND `+leasedBy+`
	RETURNING o.*, d.notification_id, d.user_id, d.type AS ntype, d.channel, d.replay_count, d.last_error_code AS last_code,
		d.last_error AS last_err
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, error_code, error, retry_after,
		provider_message_id, latency)
	SELECT u.id, u.attempt, u.at, u.outcome, u.code, u.error, u.retry_after, u.pmid, u.latency
	FROM u WHERE NOT u.release OR u.policy ORDER BY u.ord
), `+outcomeEventsApart+`
SELECT count(*) FROM u`), ids, owners, attempts, states, runAt, at, release, setError, codes, errs, pmids,
		retryAfter, latency, reasons, policy)
	if notify {
		b.Queue(s.notifySQL())
	}
	s.queueStatusEvents(b, finishing)
	b.Queue("COMMIT")
	return b, apply, inbox
}

// queueStatusEvents queues statusEventsSQL after the moves of a batch
// that may finish the deliveries finishing.
func (s *Store) queueStatusEvents(b *pgx.Batch, finishing []int64) {
	if len(finishing) > 0 {
		b.Queue(s.q(statusEventsSQL), finishing)
	}
}

// splitInbox separates the store.InboxSent outcomes, which have a
// statement of their own, from the others. A batch without one (every
// batch without an in-app delivery scheduled for later) is returned as it
// is, without a copy.
func splitInbox(all []store.Outcome) (os, inbox []store.Outcome) {
	for i := range all {
		if all[i].Row().Inbox {
			inbox = append(inbox, all[i])
		}
	}
	if len(inbox) == 0 {
		return all, nil
	}
	os = make([]store.Outcome, 0, len(all)-len(inbox))
	for i := range all {
		if !all[i].Row().Inbox {
			os = append(os, all[i])
		}
	}
	return os, inbox
}

// queueInbox queues the statement that applies the store.InboxSent
// outcomes (issue 22): under the lease guard of every outcome, the
// delivery moves to sent, its inbox item is written from the
// notification, with an id drawn for it in the same UPDATE that becomes
// the delivery's provider message id, and its sent attempt row. An
// outcome the guard refuses writes no item, so the item appears once. It
// returns how many it applied and the users who got an item.
func (s *Store) queueInbox(b *pgx.Batch, os []store.Outcome) {
	k := len(os)
	ids, owners, attempts, at := make([]int64, k), make([]string, k), make([]int32, k), make([]time.Time, k)
	for i := range os {
		ids[i], owners[i], attempts[i], at[i] = os[i].DeliveryID, os[i].Owner, int32(os[i].Attempt), os[i].At
	}
	b.Queue(s.q(`WITH o AS (
	SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::timestamptz[])
		WITH ORDINALITY AS o (id, owner, attempt, at, ord)
), u AS (
	UPDATE {s}.deliveries d SET state = 'sent', lease_owner = '', lease_until = NULL,
		provider_message_id = nextval(pg_get_serial_sequence('{s}.inbox_items', 'id'))::text,
		finished_at = o.at, updated_at = o.at,
		last_replay_result = CASE WHEN d.replay_count > 0 THEN 'sent' ELSE d.last_replay_result END
	FROM o WHERE d.id = o.id AND `+leasedBy+`
	RETURNING d.id, d.notification_id, d.attempt, d.provider_message_id, o.at, o.ord,
		d.user_id, d.type AS ntype, d.channel, d.state, d.replay_count, d.last_error_code AS last_code,
		d.last_error AS last_err
), `+outcomeEventsApart+`, i AS (
	INSERT INTO {s}.inbox_items (id, `+rules.InboxItemColumns+`) OVERRIDING SYSTEM VALUE
	SELECT CAST(u.provider_message_id AS bigint), `+rules.InboxItemSQL("u.at")+`
	FROM u JOIN {s}.notifications x ON x.id = u.notification_id ORDER BY u.ord
	RETURNING user_id
), a AS (
	INSERT INTO {s}.delivery_attempts (delivery_id, attempt, at, outcome, provider_message_id)
	SELECT u.id, u.attempt, u.at, 'sent', u.provider_message_id FROM u ORDER BY u.ord
)
SELECT count(*), coalesce(array_agg(DISTINCT user_id), '{}') FROM i`), ids, owners, attempts, at)
}

// queueDeviceChanges queues the outcomes' device changes in outcome order.
// Consecutive sent outcomes share one statement (the common case: a whole
// batch of sends resets its devices' fail counts in one UPDATE that
// touches only devices with failures); each failure gets its own.
func (s *Store) queueDeviceChanges(b *pgx.Batch, os []store.Outcome) {
	// The device of the delivery, if the outcome's guard holds; o is the
	// outcome's (id, owner, attempt).
	const device = `SELECT d.device_id, d.updated_at, d.id AS delivery_id, d.replay_count FROM {s}.deliveries d,
	(SELECT $1::bigint AS id, $2::text AS owner, $3::int AS attempt) o WHERE d.id = o.id AND ` + leasedBy
	var sent struct {
		ids, attempts []int64
		owners        []string
	}
	flushSent := func() {
		if len(sent.ids) == 0 {
			return
		}
		b.Queue(s.q(`UPDATE {s}.devices v SET fail_count = 0 FROM {s}.deliveries d,
	unnest($1::bigint[], $2::text[], $3::bigint[]) AS o (id, owner, attempt)
WHERE v.fail_count <> 0 AND v.id = d.device_id AND d.id = o.id AND `+leasedBy),
			sent.ids, sent.owners, sent.attempts)
		sent.ids, sent.owners, sent.attempts = nil, nil, nil
	}
	for i := range os {
		o := &os[i]
		switch r := o.Row(); {
		case r.InvalidReason != "":
			flushSent()
			// updated_at of a leased delivery is its claim time: only Claim
			// sets it while it is leased. The device.invalidated messages
			// (issue 35 item 4) are written by the same statement, for the
			// device it changed.
			b.Queue(s.q(`WITH x AS (
	UPDATE {s}.devices v SET status = 'INVALID', invalidated_at = $4, invalid_reason = $5,
		fail_count = fail_count + 1, updated_at = $4
	FROM (`+device+`) c WHERE v.id = c.device_id AND v.updated_at <= c.updated_at
	RETURNING v.id AS device_id, v.user_id, v.platform, v.invalid_reason AS reason, c.delivery_id, c.replay_count,
		v.invalidated_at AS at
)
`+rules.DeviceInvalidatedSQL(rules.WebhookPostgres, "x")+` ORDER BY e.id`),
				o.DeliveryID, o.Owner, o.Attempt, o.At, r.InvalidReason)
		case r.ResetFailCount:
			sent.ids = append(sent.ids, o.DeliveryID)
			sent.owners = append(sent.owners, o.Owner)
			sent.attempts = append(sent.attempts, int64(o.Attempt))
		}
	}
	flushSent()
}

// runComplete reads the results of the n statements of a sent batch and
// returns the applied count, which the statements at index apply and
// inbox (-1: none) return, and the users who got an inbox item. The batch
// is one pipeline of one transaction: a failure anywhere rolls all of it
// back (the connection, left in a failed transaction, is then closed by
// the pool rather than reused).
func runComplete(br pgx.BatchResults, n, apply, inbox int) (int, []string, error) {
	applied, written := 0, 0
	var users []string
	var err error
	for i := range n {
		switch i {
		case apply:
			err = br.QueryRow().Scan(&applied)
		case inbox:
			err = br.QueryRow().Scan(&written, &users)
		default:
			_, err = br.Exec()
		}
		if err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, nil, formatError(err, "outcomes")
	}
	return applied + written, users, nil
}
