package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// digestStatements runs a trigger's digest join (store.JoinDigests) on
// the trigger's transaction.
type digestStatements struct {
	s  *Store
	tx *writeTx
}

var _ store.DigestStatements = digestStatements{}

func (d digestStatements) CloseDigest(ctx context.Context, user, typ, key string, now time.Time) error {
	var args []any
	_, err := d.s.exec(ctx, d.tx, rules.DigestCloseSQL("digests", user, typ, key, now, mark(&args)), args...)
	return formatError(err, "digest")
}

func (d digestStatements) AddToDigest(ctx context.Context, a store.DigestAdd) (string, int, bool, error) {
	var args []any
	q := rules.DigestAddSQL("digests", a.ID, a.User, a.Type, a.Key, a.State, a.Now, a.CloseAt, a.First, a.MaxItems, a.Now,
		mark(&args))
	rows, err := d.s.query(ctx, d.tx, q, args...)
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
	_, err := d.s.exec(ctx, d.tx, `INSERT INTO digest_items (digest_id, seq, item_id, cancellation_key, content, created_at)
VALUES (?, ?, ?, ?, ?, ?)`, digest, seq, item, cancellationKey, content, micros(now))
	return formatError(err, "digest item")
}

// enqueueDigest writes a checked trigger of a digest type in tx (its
// idempotency key not taken): its notifications join their users'
// digests, and those that open one with first: immediate are written as
// plain notifications.
func (s *Store) enqueueDigest(ctx context.Context, tx *writeTx, p store.EnqueueParams) (store.EnqueueResult, error) {
	if err := s.checkUsers(ctx, tx, p.Notifications); err != nil {
		return store.EnqueueResult{}, err
	}
	plain, joined, err := store.JoinDigests(ctx, p, digestStatements{s, tx})
	if err != nil {
		return store.EnqueueResult{}, err
	}
	var res store.EnqueueResult
	if len(plain) > 0 {
		if res, err = s.enqueueWrites(ctx, tx, store.PlainPart(p, plain)); err != nil {
			return store.EnqueueResult{}, err
		}
	}
	if p.IdempotencyKey != "" {
		if err := s.insertTrigger(ctx, tx, p); err != nil {
			return store.EnqueueResult{}, err
		}
	}
	return store.DigestResult(p, plain, joined, res), nil
}

// replayDigestItems adds to found the triggers among ids that joined a
// digest (they have no notification): the digest names their user.
func (s *Store) replayDigestItems(ctx context.Context, tx *writeTx, ids []string, found map[string]store.EnqueuedNotification) error {
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	return inLists(missing, func(args []any) error {
		rows, err := s.query(ctx, tx, `SELECT i.item_id, g.user_id, g.id FROM digest_items i JOIN digests g ON g.id = i.digest_id
WHERE i.item_id IN (`+marks(len(args))+`)`, args...)
		if err != nil {
			return formatError(err, "digest items")
		}
		defer rows.Close()
		for rows.Next() {
			var e store.EnqueuedNotification
			if err := rows.Scan(&e.ID, &e.UserID, &e.Digest); err != nil {
				return formatError(err, "digest items")
			}
			found[e.ID] = e
		}
		return formatError(rows.Err(), "digest items")
	})
}

const digestColumns = `id, user_id, type, key, state, opened_at, close_at, items, cancelled, max_items,
	coalesce(notification_id, ''), last_error`

func scanDigest(row interface{ Scan(...any) error }) (heraldtype.DigestInfo, error) {
	var d heraldtype.DigestInfo
	var opened, closeAt int64
	err := row.Scan(&d.ID, &d.UserID, &d.Type, &d.Key, &d.State, &opened, &closeAt, &d.Items, &d.Cancelled, &d.MaxItems,
		&d.NotificationID, &d.LastError)
	d.OpenedAt, d.CloseAt = fromMicros(opened), fromMicros(closeAt)
	return d, err
}

// ClaimDigests implements store.Store in one write transaction (one
// writer: no claim runs beside it).
func (s *Store) ClaimDigests(ctx context.Context, p store.DigestClaimParams) ([]store.ClaimedDigest, error) {
	var out []store.ClaimedDigest
	err := s.inTx(ctx, func(tx *writeTx) error {
		out = out[:0]
		args := []any{p.Owner, micros(p.LeaseUntil)}
		due := rules.DigestDueSQL(p.Now, mark(&args))
		rows, err := s.query(ctx, tx, `UPDATE digests SET state = 'closed', lease_owner = ?, lease_until = ?
WHERE id IN (SELECT id FROM digests WHERE `+due+` ORDER BY close_at LIMIT ?)
RETURNING `+digestColumns, append(args, p.Limit)...)
		if err != nil {
			return formatError(err, "digests")
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDigest(rows)
			if err != nil {
				return formatError(err, "digests")
			}
			out = append(out, store.ClaimedDigest{DigestInfo: d})
		}
		return formatError(rows.Err(), "digests")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FireDigest implements store.Store: the guarded UPDATE, then the
// notification's enqueue, in one write transaction.
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
	err := s.inTx(ctx, func(tx *writeTx) error {
		for i, f := range fs {
			fired, res, err := s.fireDigest(ctx, tx, f, states[i], nids[i])
			if err != nil {
				return err
			}
			out[i] = store.DigestFired{Fired: fired, Res: res}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fireDigest is one fire on tx, writing state and nid (f.Outcome) on its
// digest: the guarded UPDATE first, then the
// notification's enqueue.
func (s *Store) fireDigest(ctx context.Context, tx *writeTx, f store.DigestFire, state, nid string) (bool, store.EnqueueResult, error) {
	r, err := s.exec(ctx, tx, `UPDATE digests SET state = ?, notification_id = NULLIF(?, ''), sent_at = ?, last_error = ?,
	lease_owner = '', lease_until = NULL
WHERE id = ? AND lease_owner = ? AND state = 'closed' AND cancelled = ?`, state, nid, micros(f.Now), f.Failure, f.ID, f.Owner,
		f.Cancelled)
	if err != nil {
		return false, store.EnqueueResult{}, formatError(err, "digest "+quote(f.ID))
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			// A cancel took an item out since the claim: free the digest
			// for the next claim, which builds it again.
			_, err = s.exec(ctx, tx, `UPDATE digests SET lease_until = NULL
WHERE id = ? AND lease_owner = ? AND state = 'closed' AND cancelled <> ?`, f.ID, f.Owner, f.Cancelled)
		}
		return false, store.EnqueueResult{}, formatError(err, "digest "+quote(f.ID))
	}
	if f.Enqueue == nil || f.Failure != "" {
		return true, store.EnqueueResult{}, nil
	}
	res, err := s.enqueue(ctx, tx, *f.Enqueue)
	if err != nil {
		return false, store.EnqueueResult{}, err
	}
	if got := res.Notifications[0].ID; got != nid {
		_, err = s.exec(ctx, tx, `UPDATE digests SET notification_id = ? WHERE id = ?`, got, f.ID)
		return true, res, formatError(err, "digest "+quote(f.ID))
	}
	return true, res, nil
}

// ListDigestItems implements store.Store.
func (s *Store) ListDigestItems(ctx context.Context, id string) ([]store.DigestItem, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT seq, content, created_at FROM digest_items
WHERE digest_id = ? AND cancelled_at IS NULL ORDER BY seq`, id)
	if err != nil {
		return nil, formatError(err, "digest items")
	}
	defer rows.Close()
	var out []store.DigestItem
	for rows.Next() {
		var seq int
		var content string
		var at int64
		if err := rows.Scan(&seq, &content, &at); err != nil {
			return nil, formatError(err, "digest items")
		}
		it, err := store.ParseDigestItem(seq, []byte(content), fromMicros(at))
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
	n := 0
	err := s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `DELETE FROM digests WHERE state IN ('sent', 'failed') AND sent_at < ?`, micros(cutoff))
		n, err = affected(res, err, "digests")
		return err
	})
	return n, err
}

// GetDigest implements store.Store.
func (s *Store) GetDigest(ctx context.Context, id string) (heraldtype.DigestInfo, error) {
	d, err := scanDigest(s.read.QueryRowContext(ctx, `SELECT `+digestColumns+` FROM digests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.read.QueryContext(ctx, rules.DigestListSQL("digests", digestColumns, f, below, limit+1, mark(&args)), args...)
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
