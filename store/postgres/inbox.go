package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// The in-app inbox (S4.5, S3.6): store.Channels' inbox methods.

// inboxColumns are the columns scanInbox reads: the item, its in-app
// delivery's id for its message id (rules.InboxDeliveryIDSQL) and its
// read-state.
var inboxColumns = `id, user_id, notification_id, type, title, body, coalesce(data::text, ''), created_at, ` +
	rules.InboxDeliveryIDSQL("inbox_items") + `, seen_at, read_at, clicked_at, archived_at`

func scanInbox(row pgx.Row) (heraldtype.InboxItem, error) {
	var it heraldtype.InboxItem
	var data string
	var delivery *int64
	if err := row.Scan(&it.ID, &it.UserID, &it.NotificationID, &it.Type, &it.Title, &it.Body, &data, &it.CreatedAt,
		&delivery, &it.SeenAt, &it.ReadAt, &it.ClickedAt, &it.ArchivedAt); err != nil {
		return it, err
	}
	it.CreatedAt, it.ReadAt, it.ArchivedAt = utc(it.CreatedAt), utcPtr(it.ReadAt), utcPtr(it.ArchivedAt)
	it.SeenAt, it.ClickedAt = utcPtr(it.SeenAt), utcPtr(it.ClickedAt)
	if delivery != nil {
		it.MessageID = heraldtype.DeliveryKey(it.NotificationID, *delivery)
	}
	return it, decodeInboxData(&it, data)
}

func decodeInboxData(it *heraldtype.InboxItem, data string) error {
	if data == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(data), &it.Data); err != nil {
		return fmt.Errorf("postgres: inbox item %d: data: %w", it.ID, err)
	}
	return nil
}

func collectInbox(rows pgx.Rows, err error) ([]heraldtype.InboxItem, error) {
	if err != nil {
		return nil, formatError(err, "inbox items")
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (heraldtype.InboxItem, error) { return scanInbox(r) })
	if err != nil {
		return nil, formatError(err, "inbox items")
	}
	if items == nil {
		items = []heraldtype.InboxItem{}
	}
	return items, nil
}

// ListInbox implements store.Channels. Pages are keyed by id, newest
// first, with the cursor of ListDeliveries; the user check, the unread
// count and the page come from one snapshot. The conditions are written
// into the statement rather than switched by parameters, so each shape
// gets a plan that uses its index.
func (s *Store) ListInbox(ctx context.Context, userID string, f heraldtype.InboxFilter) ([]heraldtype.InboxItem, string, int, error) {
	limit, below, err := store.CheckInboxFilter(f)
	if err != nil {
		return nil, "", 0, err
	}
	var w where
	w.add("user_id = $", userID)
	if f.Archived {
		w.conds = append(w.conds, "archived_at IS NOT NULL")
	} else {
		w.conds = append(w.conds, "archived_at IS NULL")
	}
	if f.Unread {
		w.conds = append(w.conds, "read_at IS NULL")
	}
	if below > 0 {
		w.add("id < $", below)
	}
	limitArg := w.arg(limit + 1)
	var items []heraldtype.InboxItem
	var unread int
	err = s.readTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, s.q(`SELECT (SELECT count(*) FROM {s}.inbox_items
	WHERE user_id = u.id AND read_at IS NULL AND archived_at IS NULL)
FROM {s}.users u WHERE u.id = $1`), userID).Scan(&unread)
		if err != nil {
			return formatError(err, "user "+quote(userID))
		}
		rows, err := tx.Query(ctx, s.q(`SELECT `+inboxColumns+` FROM {s}.inbox_items`+w.sql()+
			` ORDER BY id DESC LIMIT `+limitArg), w.args...)
		items, err = collectInbox(rows, err)
		return err
	})
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
	return collectInbox(s.pool.Query(ctx, s.q(`SELECT `+inboxColumns+` FROM {s}.inbox_items
WHERE user_id = $1 AND id > $2 AND archived_at IS NULL ORDER BY id LIMIT $3`), userID, afterID, limit))
}

// InboxState implements store.Channels.
func (s *Store) InboxState(ctx context.Context, userID string) (heraldtype.InboxState, error) {
	var st heraldtype.InboxState
	err := s.pool.QueryRow(ctx, s.q(rules.InboxStateSQL(rules.Schema+"inbox_items", "$1")), userID).Scan(&st.Unread, &st.Unseen)
	return st, formatError(err, "inbox state")
}

// MarkInboxRead implements store.Channels: the items and their read
// receipts in one transaction.
func (s *Store) MarkInboxRead(ctx context.Context, userID string, ids []int64, now time.Time) (int, error) {
	return s.markInbox(ctx, heraldtype.ReceiptRead, userID, ids, now)
}

// MarkInboxSeen implements store.Channels: the items and their seen
// receipts in one transaction.
func (s *Store) MarkInboxSeen(ctx context.Context, userID string, ids []int64, now time.Time) (int, error) {
	return s.markInbox(ctx, heraldtype.ReceiptSeen, userID, ids, now)
}

// markInbox sets the column of event (read, seen) of the user's items
// among ids where it is unset, and records their receipts of event.
func (s *Store) markInbox(ctx context.Context, event heraldtype.ReceiptEvent, userID string, ids []int64, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	col := rules.InboxEventColumn(event, "")
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.inbox_items SET `+col+` = $1
WHERE user_id = $2 AND `+col+` IS NULL AND id = ANY ($3::bigint[])`), now, userID, ids)
		if err != nil {
			return formatError(err, "inbox items")
		}
		n = int(tag.RowsAffected())
		return s.inboxReceipts(ctx, tx, event, userID, ids)
	})
	if err == nil && n > 0 {
		s.wakeInbox(userID)
	}
	return n, err
}

// wakeInbox tells the user's inbox streams on every instance, after the
// commit of a change of their read-state, to read their counts again
// (the state event, issue 35 item 1): the NOTIFY of new items, whose
// payload is only the user.
func (s *Store) wakeInbox(userID string) {
	s.waker.post(wake{inboxUsers: []string{userID}})
}

// inboxReceipts records the receipt of event (seen, read, archived) of
// the user's items among ids that have it (rules.InboxReceiptSQL), in
// the transaction that marked them, which it sees.
func (s *Store) inboxReceipts(ctx context.Context, tx pgx.Tx, event heraldtype.ReceiptEvent, userID string, ids []int64) error {
	_, err := tx.Exec(ctx, s.q(withReceiptMessages(rules.InboxReceiptSQL(event, "''",
		`i.user_id = $1 AND `+rules.InboxEventColumn(event, "i")+` IS NOT NULL AND i.id = ANY ($2::bigint[])`))), userID, ids)
	return formatError(err, "receipts")
}

// withReceiptMessages is the receipt INSERT insert with the
// receipt.recorded messages of the rows it writes (issue 35 item 4), in
// one statement: a receipt recorded before writes no row and no message.
func withReceiptMessages(insert string) string {
	return `WITH r AS (` + insert + ` ` + rules.ReceiptReturning + `), ` + escalationStop() + `
` + rules.ReceiptRecordedSQL(rules.WebhookPostgres, "r") + ` ORDER BY r.delivery_id, e.id`
}

// MarkAllInboxRead implements store.Channels. Archived items are marked
// too: "every unread item".
func (s *Store) MarkAllInboxRead(ctx context.Context, userID string, now time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.q(`UPDATE {s}.inbox_items SET read_at = $1 WHERE user_id = $2 AND read_at IS NULL
RETURNING id`), now, userID)
		if err != nil {
			return formatError(err, "inbox items")
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return formatError(err, "inbox items")
		}
		if n = len(ids); n == 0 {
			return nil
		}
		return s.inboxReceipts(ctx, tx, heraldtype.ReceiptRead, userID, ids)
	})
	if err == nil && n > 0 {
		s.wakeInbox(userID)
	}
	return n, err
}

// ArchiveInboxItem implements store.Channels. Archiving an archived item
// keeps its first archived_at and succeeds.
func (s *Store) ArchiveInboxItem(ctx context.Context, userID string, id int64, now time.Time) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.inbox_items SET archived_at = coalesce(archived_at, $1)
WHERE id = $2 AND user_id = $3`), now, id, userID)
		if err := affectedOne(tag.RowsAffected(), err, "inbox item "+strconv.FormatInt(id, 10)+" of user "+quote(userID)); err != nil {
			return err
		}
		return s.inboxReceipts(ctx, tx, heraldtype.ReceiptArchived, userID, []int64{id})
	})
	if err == nil {
		s.wakeInbox(userID)
	}
	return err
}

// ClickInboxItem implements store.Channels. The UPDATE's row lock
// serializes racing clicks of one item; the receipts' unique index holds
// each event once.
func (s *Store) ClickInboxItem(ctx context.Context, userID string, id int64, action string, now time.Time) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.inbox_items SET clicked_at = coalesce(clicked_at, $1),
	seen_at = coalesce(seen_at, $1), read_at = coalesce(read_at, $1)
WHERE id = $2 AND user_id = $3`), now, id, userID)
		if err := affectedOne(tag.RowsAffected(), err, "inbox item "+strconv.FormatInt(id, 10)+" of user "+quote(userID)); err != nil {
			return err
		}
		ids := []int64{id}
		for _, event := range []heraldtype.ReceiptEvent{heraldtype.ReceiptSeen, heraldtype.ReceiptRead} {
			if err := s.inboxReceipts(ctx, tx, event, userID, ids); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, s.q(withReceiptMessages(rules.InboxReceiptSQL(heraldtype.ReceiptClicked, "$1",
			`i.user_id = $2 AND i.id = $3`))), action, userID, id)
		return formatError(err, "receipts")
	})
	if err == nil {
		s.wakeInbox(userID)
	}
	return err
}
