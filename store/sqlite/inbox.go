package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The in-app inbox (S4.5, S3.6): store.Channels' inbox methods.

// inboxColumns are the columns scanInbox reads: the item, its in-app
// delivery's id for its message id (rules.InboxDeliveryIDSQL) and its
// read-state; inboxNewColumns are the same for an item being inserted,
// whose delivery is written after it.
const (
	inboxRowColumns   = `id, user_id, notification_id, type, title, body, data, created_at`
	inboxStateColumns = `seen_at, read_at, clicked_at, archived_at`
	inboxNewColumns   = inboxRowColumns + `, NULL, ` + inboxStateColumns
)

var inboxColumns = inboxRowColumns + `, ` + rules.Unqualified(rules.InboxDeliveryIDSQL("inbox_items")) + `, ` + inboxStateColumns

func scanInbox(sc interface{ Scan(...any) error }) (heraldtype.InboxItem, error) {
	var it heraldtype.InboxItem
	var data string
	var created int64
	var delivery, seen, read, clicked, archived sql.NullInt64
	err := sc.Scan(&it.ID, &it.UserID, &it.NotificationID, &it.Type, &it.Title, &it.Body, &data, &created,
		&delivery, &seen, &read, &clicked, &archived)
	if err != nil {
		return it, err
	}
	it.CreatedAt, it.ReadAt, it.ArchivedAt = fromMicros(created), fromNullMicros(read), fromNullMicros(archived)
	it.SeenAt, it.ClickedAt = fromNullMicros(seen), fromNullMicros(clicked)
	if delivery.Valid {
		it.MessageID = heraldtype.DeliveryKey(it.NotificationID, delivery.Int64)
	}
	if data != "" {
		if err := json.Unmarshal([]byte(data), &it.Data); err != nil {
			return it, fmt.Errorf("sqlite: inbox item %d: data: %w", it.ID, err)
		}
	}
	return it, nil
}

// scanInboxRows reads and closes rows of inboxColumns.
func scanInboxRows(rows *sql.Rows) ([]heraldtype.InboxItem, error) {
	defer rows.Close()
	items := []heraldtype.InboxItem{}
	for rows.Next() {
		it, err := scanInbox(rows)
		if err != nil {
			return nil, formatError(err, "inbox items")
		}
		items = append(items, it)
	}
	return items, formatError(rows.Err(), "inbox items")
}

// ListInbox implements store.Channels. Pages are keyed by id, newest
// first, with the cursor of ListDeliveries; the user check, the page and
// the unread count come from one read transaction.
func (s *Store) ListInbox(ctx context.Context, userID string, f heraldtype.InboxFilter) ([]heraldtype.InboxItem, string, int, error) {
	limit, below, err := store.CheckInboxFilter(f)
	if err != nil {
		return nil, "", 0, err
	}
	where := `user_id = ?`
	args := []any{userID}
	if f.Archived {
		where += ` AND archived_at IS NOT NULL`
	} else {
		where += ` AND archived_at IS NULL`
	}
	if f.Unread {
		where += ` AND read_at IS NULL`
	}
	if below > 0 {
		where += ` AND id < ?`
		args = append(args, below)
	}
	args = append(args, limit+1)
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", 0, formatError(err, "transaction")
	}
	defer tx.Rollback()
	var unread int
	err = tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM inbox_items INDEXED BY inbox_items_unread
	WHERE user_id = u.id AND read_at IS NULL AND archived_at IS NULL)
FROM users u WHERE u.id = ?`, userID).Scan(&unread)
	if err != nil {
		return nil, "", 0, formatError(err, "user "+quote(userID))
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+inboxColumns+` FROM inbox_items WHERE `+where+
		` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, "", 0, formatError(err, "inbox items")
	}
	items, err := scanInboxRows(rows)
	if err != nil {
		return nil, "", 0, err
	}
	items, next := store.InboxPage(items, limit)
	return items, next, unread, nil
}

// InboxSince implements store.Channels.
func (s *Store) InboxSince(ctx context.Context, userID string, afterID int64, limit int) ([]heraldtype.InboxItem, error) {
	if err := store.CheckInboxSince(afterID, limit); err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+inboxColumns+` FROM inbox_items
WHERE user_id = ? AND id > ? AND archived_at IS NULL ORDER BY id LIMIT ?`, userID, afterID, limit)
	if err != nil {
		return nil, formatError(err, "inbox items")
	}
	return scanInboxRows(rows)
}

// InboxState implements store.Channels.
func (s *Store) InboxState(ctx context.Context, userID string) (heraldtype.InboxState, error) {
	var st heraldtype.InboxState
	err := s.read.QueryRowContext(ctx, rules.Unqualified(rules.InboxStateSQL("inbox_items INDEXED BY inbox_items_unread", "?1")), userID).
		Scan(&st.Unread, &st.Unseen)
	return st, formatError(err, "inbox state")
}

// MarkInboxRead implements store.Channels.
func (s *Store) MarkInboxRead(ctx context.Context, userID string, ids []int64, now time.Time) (int, error) {
	return s.markInbox(ctx, heraldtype.ReceiptRead, userID, ids, now)
}

// MarkInboxSeen implements store.Channels.
func (s *Store) MarkInboxSeen(ctx context.Context, userID string, ids []int64, now time.Time) (int, error) {
	return s.markInbox(ctx, heraldtype.ReceiptSeen, userID, ids, now)
}

// markInbox sets the column of event (read, seen) of the user's items
// among ids where it is unset, and records their receipts of event.
func (s *Store) markInbox(ctx context.Context, event heraldtype.ReceiptEvent, userID string, ids []int64, now time.Time) (int, error) {
	total := 0
	if len(ids) == 0 {
		return 0, nil
	}
	col := rules.InboxEventColumn(event, "")
	err := s.inTx(ctx, func(tx *writeTx) error {
		total = 0
		return inLists(ids, func(args []any) error {
			res, err := s.exec(ctx, tx, `UPDATE inbox_items SET `+col+` = ?
WHERE user_id = ? AND `+col+` IS NULL AND id IN (`+marks(len(args))+`)`, append([]any{micros(now), userID}, args...)...)
			n, err := affected(res, err, "inbox items")
			total += n
			if err != nil {
				return err
			}
			return s.inboxReceipts(ctx, tx, event, userID, args)
		})
	})
	return total, err
}

// inboxReceipts records the receipt of event (seen, read, archived) of
// the user's items among ids that have it (rules.InboxReceiptSQL), in the
// transaction that marked them.
func (s *Store) inboxReceipts(ctx context.Context, tx *writeTx, event heraldtype.ReceiptEvent, userID string, ids []any) error {
	return s.writeInboxReceipts(ctx, tx, event, rules.InboxReceiptSQL(event, "''",
		`i.user_id = ? AND `+rules.InboxEventColumn(event, "i")+` IS NOT NULL AND i.id IN (`+marks(len(ids))+`)`),
		append([]any{userID}, ids...)...)
}

// writeInboxReceipts runs the receipts' INSERT insert
// (rules.InboxReceiptSQL) and writes the receipt.recorded messages (issue
// 35 item 4) of the receipts it wrote: a receipt recorded before writes
// no row and no message.
func (s *Store) writeInboxReceipts(ctx context.Context, tx *writeTx, event heraldtype.ReceiptEvent, insert string, args ...any) error {
	rows, err := s.query(ctx, tx, rules.Unqualified(insert)+` RETURNING delivery_id`, args...)
	if err != nil {
		return formatError(err, "receipts")
	}
	var written []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return formatError(err, "receipts")
		}
		written = append(written, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return formatError(err, "receipts")
	}
	if err := s.stopEscalations(ctx, tx, event, written); err != nil {
		return err
	}
	return s.receiptMessages(ctx, tx, event, written)
}

// MarkAllInboxRead implements store.Channels. Archived items are marked
// too: "every unread item".
func (s *Store) MarkAllInboxRead(ctx context.Context, userID string, now time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *writeTx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE inbox_items SET read_at = ? WHERE user_id = ? AND read_at IS NULL
RETURNING id`, micros(now), userID)
		if err != nil {
			return formatError(err, "inbox items")
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return formatError(err, "inbox items")
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return formatError(err, "inbox items")
		}
		n = len(ids)
		return inLists(ids, func(args []any) error {
			return s.inboxReceipts(ctx, tx, heraldtype.ReceiptRead, userID, args)
		})
	})
	return n, err
}

// ArchiveInboxItem implements store.Channels. Archiving an archived item
// keeps its first archived_at and succeeds.
func (s *Store) ArchiveInboxItem(ctx context.Context, userID string, id int64, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		res, err := s.exec(ctx, tx, `UPDATE inbox_items SET archived_at = coalesce(archived_at, ?)
WHERE id = ? AND user_id = ?`, micros(now), id, userID)
		if err := affectedOne(res, err, "inbox item "+strconv.FormatInt(id, 10)+" of user "+quote(userID)); err != nil {
			return err
		}
		return s.inboxReceipts(ctx, tx, heraldtype.ReceiptArchived, userID, []any{id})
	})
}

// ClickInboxItem implements store.Channels. The write transaction
// serializes racing clicks; the receipts' unique index would hold each
// event once anyway.
func (s *Store) ClickInboxItem(ctx context.Context, userID string, id int64, action string, now time.Time) error {
	return s.inTx(ctx, func(tx *writeTx) error {
		at := micros(now)
		res, err := s.exec(ctx, tx, `UPDATE inbox_items SET clicked_at = coalesce(clicked_at, ?),
	seen_at = coalesce(seen_at, ?), read_at = coalesce(read_at, ?)
WHERE id = ? AND user_id = ?`, at, at, at, id, userID)
		if err := affectedOne(res, err, "inbox item "+strconv.FormatInt(id, 10)+" of user "+quote(userID)); err != nil {
			return err
		}
		for _, event := range []heraldtype.ReceiptEvent{heraldtype.ReceiptSeen, heraldtype.ReceiptRead} {
			if err := s.inboxReceipts(ctx, tx, event, userID, []any{id}); err != nil {
				return err
			}
		}
		return s.writeInboxReceipts(ctx, tx, heraldtype.ReceiptClicked, rules.InboxReceiptSQL(heraldtype.ReceiptClicked, "?",
			`i.user_id = ? AND i.id = ?`), action, userID, id)
	})
}
