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

// digestStatements runs a trigger's digest join (store.JoinDigests) on
// the trigger's transaction.
type digestStatements struct {
	s *Store
	q txQuerier
}

var _ store.DigestBatchStatements = digestStatements{}

func (d digestStatements) CloseDigest(ctx context.Context, user, typ, key string, now time.Time) error {
	var args []any
	sql := d.s.q(rules.DigestCloseSQL("{s}.digests", user, typ, key, now, marker(&args)))
	return formatError(d.q.exec(ctx, sql, args...), "digest")
}

func (d digestStatements) AddToDigest(ctx context.Context, a store.DigestAdd) (string, int, bool, error) {
	var args []any
	sql := d.s.q(rules.DigestAddSQL("{s}.digests", a.ID, a.User, a.Type, a.Key, a.State, a.Now, a.CloseAt, a.First, a.MaxItems,
		a.Now, marker(&args)))
	rows, err := d.q.query(ctx, sql, args...)
	if err != nil {
		return "", 0, false, formatError(err, "digest")
	}
	defer rows.Close()
	var got string
	var items int
	ok := rows.Next()
	if ok {
		if err := rows.Scan(&got, &items); err != nil {
			return "", 0, false, formatError(err, "digest")
		}
	}
	return got, items, ok, formatError(rows.Err(), "digest")
}

func (d digestStatements) AddDigestItem(ctx context.Context, digest string, seq int, item, cancellationKey, content string,
	now time.Time) error {
	return formatError(d.q.exec(ctx, d.s.q(`INSERT INTO {s}.digest_items (digest_id, seq, item_id, cancellation_key, content, created_at)
VALUES ($1, $2, $3, $4, $5::jsonb, $6)`), digest, seq, item, cancellationKey, content, now), "digest item")
}

// AddToDigests implements store.DigestBatchStatements: one
// rules.DigestAddManySQL over the adds' columns as arrays.
func (d digestStatements) AddToDigests(ctx context.Context, adds []store.DigestAdd) ([]store.DigestJoined, error) {
	n := len(adds)
	ids, users, keys, states := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	closeAt := make([]time.Time, n)
	first, maxItems := make([]int32, n), make([]int32, n)
	for k, a := range adds {
		ids[k], users[k], keys[k], states[k], closeAt[k] = a.ID, a.User, a.Key, a.State, a.CloseAt
		first[k], maxItems[k] = int32(a.First), int32(a.MaxItems)
	}
	var args []any
	mark := marker(&args)
	now := adds[0].Now
	rows := `SELECT a.id, a.user_id, ` + mark(adds[0].Type) + `::text, a.key, a.state, ` + mark(now) + `::timestamptz, a.close_at,
	a.items, a.max_items, ''
FROM unnest(` + mark(ids) + `::text[], ` + mark(users) + `::text[], ` + mark(keys) + `::text[], ` + mark(states) + `::text[], ` +
		mark(closeAt) + `::timestamptz[], ` + mark(first) + `::int[], ` + mark(maxItems) + `::int[])
	AS a(id, user_id, key, state, close_at, items, max_items)
ORDER BY a.user_id, a.key`
	q := d.s.q(rules.DigestAddManySQL("{s}.digests", rows, now, mark))
	res, err := d.q.query(ctx, q, args...)
	if err != nil {
		return nil, formatError(err, "digests")
	}
	defer res.Close()
	at := make(map[[2]string]int, n)
	for k, a := range adds {
		at[[2]string{a.User, a.Key}] = k
	}
	out := make([]store.DigestJoined, n)
	for res.Next() {
		var j store.DigestJoined
		var user, key string
		if err := res.Scan(&j.Digest, &user, &key, &j.Items); err != nil {
			return nil, formatError(err, "digests")
		}
		if k, ok := at[[2]string{user, key}]; ok {
			j.OK = true
			out[k] = j
		}
	}
	return out, formatError(res.Err(), "digests")
}

// AddDigestItems implements store.DigestBatchStatements: one insert over
// the items' columns as arrays.
func (d digestStatements) AddDigestItems(ctx context.Context, items []store.DigestItemRow, now time.Time) error {
	n := len(items)
	digests, itemIDs, keys, contents := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	seqs := make([]int32, n)
	for k, it := range items {
		digests[k], seqs[k], itemIDs[k], keys[k], contents[k] = it.Digest, int32(it.Seq), it.Item, it.CancellationKey, it.Content
	}
	return formatError(d.q.exec(ctx, d.s.q(`INSERT INTO {s}.digest_items (digest_id, seq, item_id, cancellation_key, content, created_at)
SELECT a.digest_id, a.seq, a.item_id, a.cancellation_key, a.content::jsonb, $6
FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[]) AS a(digest_id, seq, item_id, cancellation_key, content)`),
		digests, seqs, itemIDs, keys, contents, now), "digest items")
}

// enqueueDigest writes a checked trigger of a digest type on q (its
// idempotency key already taken): its notifications join their users'
// digests, and those that open one with first: immediate are written as
// plain notifications.
func (s *Store) enqueueDigest(ctx context.Context, q txQuerier, p store.EnqueueParams) (store.EnqueueResult, wake, error) {
	if err := runSteps(ctx, q, []step{s.checkUsers(p.Notifications)}); err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	plain, joined, err := store.JoinDigests(ctx, p, digestStatements{s, q})
	if err != nil {
		return store.EnqueueResult{}, wake{}, err
	}
	var res store.EnqueueResult
	var w wake
	if len(plain) > 0 {
		pp := store.PlainPart(p, plain)
		var st enqueueState
		writes, err := s.writeSteps(pp, &st)
		if err != nil {
			return store.EnqueueResult{}, wake{}, err
		}
		if err := runSteps(ctx, q, writes); err != nil {
			return store.EnqueueResult{}, wake{}, err
		}
		res, w = st.result(pp), st.wake()
	}
	return store.DigestResult(p, plain, joined, res), w, nil
}

// enqueueDigestAlone is Enqueue of a digest type's trigger: statement by
// statement in a transaction of its own (a join reads what it found
// before it writes, so it is not pipelined).
func (s *Store) enqueueDigestAlone(ctx context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	var res store.EnqueueResult
	var w wake
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		res, w, err = s.enqueue(ctx, pgxQuerier{tx}, p)
		return err
	})
	if err != nil {
		return store.EnqueueResult{}, formatError(err, "transaction")
	}
	s.waker.post(w)
	return res, nil
}

const digestColumns = `id, user_id, type, key, state, opened_at, close_at, items, cancelled, max_items,
	coalesce(notification_id, ''), last_error`

func scanDigest(row interface{ Scan(...any) error }) (heraldtype.DigestInfo, error) {
	var d heraldtype.DigestInfo
	err := row.Scan(&d.ID, &d.UserID, &d.Type, &d.Key, &d.State, &d.OpenedAt, &d.CloseAt, &d.Items, &d.Cancelled, &d.MaxItems,
		&d.NotificationID, &d.LastError)
	d.OpenedAt, d.CloseAt = d.OpenedAt.UTC(), d.CloseAt.UTC()
	return d, err
}

// ClaimDigests implements store.Store: one UPDATE over the due rows taken
// FOR UPDATE SKIP LOCKED (a trigger joining a digest holds its row lock
// until it commits, so a claim skips a digest being added to).
func (s *Store) ClaimDigests(ctx context.Context, p store.DigestClaimParams) ([]store.ClaimedDigest, error) {
	var out []store.ClaimedDigest
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		args := []any{p.Owner, p.LeaseUntil, p.Limit}
		due := rules.DigestDueSQL(p.Now, marker(&args))
		rows, err := tx.Query(ctx, s.q(`UPDATE {s}.digests g SET state = 'closed', lease_owner = $1, lease_until = $2
FROM (SELECT id FROM {s}.digests WHERE `+due+` ORDER BY close_at LIMIT $3 FOR UPDATE SKIP LOCKED) x
WHERE g.id = x.id
RETURNING g.id, g.user_id, g.type, g.key, g.state, g.opened_at, g.close_at, g.items, g.cancelled, g.max_items,
	coalesce(g.notification_id, ''), g.last_error`), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDigest(rows)
			if err != nil {
				return err
			}
			out = append(out, store.ClaimedDigest{DigestInfo: d})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return s.readClaimedItems(ctx, tx, out, p.ReadItems)
	})
	if err != nil {
		return nil, formatError(err, "digests")
	}
	return out, nil
}

// readClaimedItems reads, in the claim's transaction, the items of the
// claimed digests in claim order while their total stays within limit:
// one query instead of one per digest. A cancel of an item waits for the
// claim's lock on its digest, so what is read matches the claimed
// cancelled count the fire is guarded by.
func (s *Store) readClaimedItems(ctx context.Context, tx pgx.Tx, ds []store.ClaimedDigest, limit int) error {
	var ids []string
	at := map[string]int{}
	total := 0
	for i, d := range ds {
		if total += d.Items - d.Cancelled; total > limit {
			break
		}
		ds[i].Entries = []store.DigestItem{}
		if d.Items > d.Cancelled {
			ids = append(ids, d.ID)
			at[d.ID] = i
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, s.q(`SELECT digest_id, seq, content, created_at FROM {s}.digest_items
WHERE digest_id = ANY ($1::text[]) AND cancelled_at IS NULL ORDER BY digest_id, seq`), ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var seq int
		var content []byte
		var created time.Time
		if err := rows.Scan(&id, &seq, &content, &created); err != nil {
			return err
		}
		it, err := store.ParseDigestItem(seq, content, created)
		if err != nil {
			return err
		}
		i := at[id]
		ds[i].Entries = append(ds[i].Entries, it)
	}
	return rows.Err()
}

// FireDigest implements store.Store: the guarded UPDATE first (a digest
// whose lease another worker took since writes nothing), then the
// notification's enqueue, in one transaction.
func (s *Store) FireDigest(ctx context.Context, f store.DigestFire) (bool, store.EnqueueResult, error) {
	got, err := s.FireDigests(ctx, []store.DigestFire{f})
	if err != nil {
		return false, store.EnqueueResult{}, err
	}
	return got[0].Fired, got[0].Res, nil
}

// FireDigests implements store.Store: each fire as FireDigest's, in one
// transaction.
func (s *Store) FireDigests(ctx context.Context, fs []store.DigestFire) ([]store.DigestFired, error) {
	// What each fire writes on its digest, checked before the
	// transaction.
	states, nids := make([]string, len(fs)), make([]string, len(fs))
	for i, f := range fs {
		var err error
		if states[i], nids[i], err = f.Outcome(); err != nil {
			return nil, err
		}
	}
	out := make([]store.DigestFired, len(fs))
	var all wake
	var current string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		all = wake{}
		for i, f := range fs {
			current = f.ID
			fired, res, w, err := s.fireDigest(ctx, tx, f, states[i], nids[i])
			if err != nil {
				return err
			}
			out[i] = store.DigestFired{Fired: fired, Res: res}
			all.deliveries = all.deliveries || w.deliveries
			all.inboxUsers = append(all.inboxUsers, w.inboxUsers...)
		}
		return nil
	})
	if err != nil {
		return nil, formatError(err, "digest "+quote(current))
	}
	s.waker.post(all)
	return out, nil
}

// fireDigest is one fire on tx, writing state and nid (f.Outcome) on its
// digest: the guarded UPDATE first (a digest whose
// lease another worker took since writes nothing), then the
// notification's enqueue.
func (s *Store) fireDigest(ctx context.Context, tx pgx.Tx, f store.DigestFire, state, nid string) (bool, store.EnqueueResult, wake, error) {
	tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.digests SET state = $3, notification_id = NULLIF($4, ''), sent_at = $5,
	last_error = $6, lease_owner = '', lease_until = NULL
WHERE id = $1 AND lease_owner = $2 AND state = 'closed' AND cancelled = $7`), f.ID, f.Owner, state, nid, f.Now, f.Failure,
		f.Cancelled)
	if err != nil {
		return false, store.EnqueueResult{}, wake{}, err
	}
	if tag.RowsAffected() == 0 {
		// A cancel took an item out since the claim (it holds the row
		// until it commits, and the guard is checked again on the row it
		// committed): free the digest for the next claim, which builds it
		// again.
		_, err = tx.Exec(ctx, s.q(`UPDATE {s}.digests SET lease_until = NULL
WHERE id = $1 AND lease_owner = $2 AND state = 'closed' AND cancelled <> $3`), f.ID, f.Owner, f.Cancelled)
		return false, store.EnqueueResult{}, wake{}, err
	}
	if f.Enqueue == nil || f.Failure != "" {
		return true, store.EnqueueResult{}, wake{}, nil
	}
	res, w, err := s.enqueue(ctx, pgxQuerier{tx}, *f.Enqueue)
	if err != nil {
		return false, store.EnqueueResult{}, wake{}, err
	}
	if got := res.Notifications[0].ID; got != nid {
		// Replayed: the key's first notification is the digest's.
		_, err = tx.Exec(ctx, s.q(`UPDATE {s}.digests SET notification_id = $2 WHERE id = $1`), f.ID, got)
	}
	return true, res, w, err
}

// ListDigestItems implements store.Store.
func (s *Store) ListDigestItems(ctx context.Context, id string) ([]store.DigestItem, error) {
	rows, err := s.pool.Query(ctx, s.q(`SELECT seq, content, created_at FROM {s}.digest_items
WHERE digest_id = $1 AND cancelled_at IS NULL ORDER BY seq`), id)
	if err != nil {
		return nil, formatError(err, "digest items")
	}
	defer rows.Close()
	var out []store.DigestItem
	for rows.Next() {
		var seq int
		var content []byte
		var at time.Time
		if err := rows.Scan(&seq, &content, &at); err != nil {
			return nil, formatError(err, "digest items")
		}
		it, err := store.ParseDigestItem(seq, content, at)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, formatError(rows.Err(), "digest items")
}

// PruneDigests implements store.Store; the items go with their digest
// (ON DELETE CASCADE).
func (s *Store) PruneDigests(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.digests WHERE state IN ('sent', 'failed') AND sent_at < $1`), cutoff)
	if err != nil {
		return 0, formatError(err, "digests")
	}
	return int(tag.RowsAffected()), nil
}

// GetDigest implements store.Store.
func (s *Store) GetDigest(ctx context.Context, id string) (heraldtype.DigestInfo, error) {
	d, err := scanDigest(s.pool.QueryRow(ctx, s.q(`SELECT `+digestColumns+` FROM {s}.digests WHERE id = $1`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return d, heraldtype.Errorf(heraldtype.ENOTFOUND, "digest %q not found", id)
	}
	return d, formatError(err, "digest "+quote(id))
}

// ListDigests implements store.Store.
func (s *Store) ListDigests(ctx context.Context, f heraldtype.DigestFilter) ([]heraldtype.DigestInfo, string, error) {
	limit, below, err := store.CheckDigestFilter(f)
	if err != nil {
		return nil, "", err
	}
	var args []any
	rows, err := s.pool.Query(ctx, s.q(rules.DigestListSQL("{s}.digests", digestColumns, f, below, limit+1, marker(&args))), args...)
	if err != nil {
		return nil, "", formatError(err, "digests")
	}
	defer rows.Close()
	var out []heraldtype.DigestInfo
	for rows.Next() {
		d, err := scanDigest(rows)
		if err != nil {
			return nil, "", formatError(err, "digests")
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", formatError(err, "digests")
	}
	out, next := store.DigestListPage(out, limit)
	return out, next, nil
}
