package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// InboxFilter selects a page of a user's inbox.
type InboxFilter = heraldtype.InboxFilter

// InboxPage is one page of an inbox with the user's unread count.
type InboxPage struct {
	Items      []heraldtype.InboxItem `json:"items"`
	NextCursor string                 `json:"next_cursor,omitempty"`
	Unread     int                    `json:"unread"`
}

// DefaultInboxHeartbeat is how often an idle inbox stream sends a
// heartbeat: well inside the 30–60 s after which common proxies and load
// balancers drop an idle connection, and few enough for a mobile radio.
const DefaultInboxHeartbeat = 15 * time.Second

// maxInboxIDs bounds one mark-read or mark-seen request.
const maxInboxIDs = 1000

// ListInbox returns a page of the user's in-app inbox, newest first, and
// the unread count (S4.5).
func (c *Client) ListInbox(ctx context.Context, userID string, f InboxFilter) (InboxPage, error) {
	if err := validID("user_id", userID); err != nil {
		return InboxPage{}, err
	}
	if f.Limit < 0 || f.Limit > 200 {
		return InboxPage{}, heraldtype.FieldErrorf("limit", "must be between 1 and 200")
	}
	if err := validText("cursor", f.Cursor, 256); err != nil {
		return InboxPage{}, err
	}
	items, next, unread, err := c.store.ListInbox(ctx, userID, f)
	if err != nil {
		return InboxPage{}, err
	}
	if items == nil {
		items = []heraldtype.InboxItem{}
	}
	return InboxPage{Items: items, NextCursor: next, Unread: unread}, nil
}

// MarkInboxRead marks the user's items among ids read and returns how many
// changed.
func (c *Client) MarkInboxRead(ctx context.Context, userID string, ids []int64) (int, error) {
	if err := validInboxIDs(userID, ids); err != nil {
		return 0, err
	}
	n, err := c.store.MarkInboxRead(ctx, userID, ids, c.now().UTC())
	c.inboxChanged(userID, n > 0, err)
	return n, err
}

// inboxChanged wakes the user's streams on this instance after a mark
// that changed their read-state committed, so they send their new counts
// (the state event; issue 35 item 1). Other instances learn it from the
// store (PostgreSQL's NOTIFY after the commit).
func (c *Client) inboxChanged(userID string, changed bool, err error) {
	if err == nil && changed {
		c.hub.Publish(userID)
	}
}

// validInboxIDs checks the arguments of a mark-read or mark-seen batch.
func validInboxIDs(userID string, ids []int64) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	if len(ids) == 0 || len(ids) > maxInboxIDs {
		return heraldtype.FieldErrorf("ids", "must list 1-%d item ids", maxInboxIDs)
	}
	for _, id := range ids {
		if id <= 0 {
			return heraldtype.FieldErrorf("ids", "%d is not an item id", id)
		}
	}
	return nil
}

// MarkInboxSeen marks the user's items among ids seen (shown to the user)
// and returns how many changed; each gets its seen receipt once.
func (c *Client) MarkInboxSeen(ctx context.Context, userID string, ids []int64) (int, error) {
	if err := validInboxIDs(userID, ids); err != nil {
		return 0, err
	}
	n, err := c.store.MarkInboxSeen(ctx, userID, ids, c.now().UTC())
	c.inboxChanged(userID, n > 0, err)
	return n, err
}

// ClickInboxItem records that the user clicked one of their inbox items;
// action names what was clicked (a button's id, at most
// heraldtype.MaxReceiptActionLen bytes), "" for the item itself. As in
// Knock's and Novu's inboxes, a click marks the item seen and read too;
// each state keeps its first time, and the item's delivery gets each
// receipt once (the clicked one with the first click's action).
func (c *Client) ClickInboxItem(ctx context.Context, userID string, id int64, action string) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	if id <= 0 {
		return heraldtype.FieldErrorf("item_id", "must be a positive item id")
	}
	if len(action) > heraldtype.MaxReceiptActionLen {
		return heraldtype.FieldErrorf("action", "is %d bytes; the limit is %d", len(action), heraldtype.MaxReceiptActionLen)
	}
	if err := validIdentifierText("action", action, heraldtype.MaxReceiptActionLen); err != nil {
		return err
	}
	err := c.store.ClickInboxItem(ctx, userID, id, action, c.now().UTC())
	c.inboxChanged(userID, true, err)
	return err
}

// MarkAllInboxRead marks every unread item of the user read.
func (c *Client) MarkAllInboxRead(ctx context.Context, userID string) (int, error) {
	if err := validID("user_id", userID); err != nil {
		return 0, err
	}
	n, err := c.store.MarkAllInboxRead(ctx, userID, c.now().UTC())
	c.inboxChanged(userID, n > 0, err)
	return n, err
}

// ArchiveInboxItem removes an item from the user's live inbox.
func (c *Client) ArchiveInboxItem(ctx context.Context, userID string, id int64) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	if id <= 0 {
		return heraldtype.FieldErrorf("item_id", "must be a positive item id")
	}
	err := c.store.ArchiveInboxItem(ctx, userID, id, c.now().UTC())
	c.inboxChanged(userID, true, err)
	return err
}

// InboxState is a user's unread and unseen counts, as the inbox stream's
// state event carries them (heraldtype.InboxState).
type InboxState = heraldtype.InboxState

// InboxStreamOptions are what StreamInboxWith streams and to whom.
type InboxStreamOptions struct {
	// LastID resumes after the item with this id (a resumed stream's
	// Last-Event-ID); 0 streams every item; < 0 only items written after
	// the call.
	LastID int64
	// Item receives each item, in id order. Required.
	Item func(heraldtype.InboxItem) error
	// State, when set, receives the user's counts once the stream has
	// sent what it resumed with, then each time they changed: after any
	// mark of the user's read-state (seen, read, read-all, click,
	// archive) on any instance, and after new items.
	State func(InboxState) error
	// Heartbeat is called when nothing was sent for the heartbeat
	// interval, so proxies keep the connection open. Required.
	Heartbeat func() error
}

// StreamInbox streams the user's new inbox items to send, in id order,
// until ctx ends or send fails: first every item after lastID (a resumed
// stream's Last-Event-ID; 0 for only new ones — see below), then each new
// item as it is written, on this instance at once and on other instances
// through the store's notifications. heartbeat is called when nothing was
// sent for the heartbeat interval, so proxies keep the connection open.
//
// lastID < 0 starts with nothing old: only items written after the call.
// StreamInboxWith also streams the user's counts.
func (c *Client) StreamInbox(ctx context.Context, userID string, lastID int64, send func(heraldtype.InboxItem) error, heartbeat func() error) error {
	return c.StreamInboxWith(ctx, userID, InboxStreamOptions{LastID: lastID, Item: send, Heartbeat: heartbeat})
}

// StreamInboxWith is StreamInbox with the user's counts (o.State; issue
// 35 item 1): a second tab or device learns that an item was read
// elsewhere without polling. The counts are read again on every signal
// for the user and after new items, and sent only when they differ from
// the last ones sent; a signal lost between instances (the poll covers
// items only) shows at the next one or the next stream.
func (c *Client) StreamInboxWith(ctx context.Context, userID string, o InboxStreamOptions) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	if _, err := c.store.GetUser(ctx, userID); err != nil {
		return err
	}
	lastID := o.LastID
	if lastID < 0 {
		// Start after the newest existing item. Read before subscribing:
		// an item written between the two is then after lastID and read
		// by the first InboxSince, whereas read after subscribing, an item
		// written in between counted as existing and was never streamed.
		items, _, _, err := c.store.ListInbox(ctx, userID, InboxFilter{Limit: 1})
		if err != nil {
			return err
		}
		lastID = 0
		if len(items) > 0 {
			lastID = items[0].ID
		}
	}
	sub := c.hub.Subscribe(userID)
	defer c.hub.Unsubscribe(sub)
	beat := time.NewTicker(c.cfg.InboxHeartbeat)
	defer beat.Stop()
	// The poll is the fallback for items whose signal cannot reach this
	// instance: an EnqueueTx committed on SQLite, or a lost NOTIFY.
	poll := time.NewTicker(c.cfg.InboxPollInterval)
	defer poll.Stop()
	// wantState: the counts may have changed since they were last read
	// (at first: they were never sent). sent: what was sent last.
	wantState, first := o.State != nil, true
	var sent InboxState
	for {
		// The counts are read before the items and sent after them: an
		// item a state counts was committed before the items were read,
		// so the stream has sent it by then. Items sent may be newer than
		// the counts; they are read again at once.
		var st InboxState
		readState := wantState
		if readState {
			wantState = false
			var err error
			if st, err = c.store.InboxState(ctx, userID); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		sentItems := false
		for {
			items, err := c.store.InboxSince(ctx, userID, lastID, 100)
			if err != nil {
				if ctx.Err() != nil {
					// The caller ended the stream while the read ran
					// (select picks among ready cases at random, so a
					// wake-up can win over ctx.Done): not a failure.
					return nil
				}
				return err
			}
			for _, it := range items {
				if err := o.Item(it); err != nil {
					return err
				}
				lastID = it.ID
			}
			if len(items) > 0 {
				beat.Reset(c.cfg.InboxHeartbeat)
				sentItems = true
			}
			if len(items) < 100 {
				break
			}
		}
		if readState && (first || st != sent) {
			if err := o.State(st); err != nil {
				return err
			}
			first, sent = false, st
			beat.Reset(c.cfg.InboxHeartbeat)
		}
		if sentItems && o.State != nil {
			wantState = true
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sub.C:
			wantState = o.State != nil
		case <-poll.C:
		case <-beat.C:
			if err := o.Heartbeat(); err != nil {
				return err
			}
		}
	}
}

// forwardInboxEvents signals local streams when another instance wrote an
// inbox item (PostgreSQL NOTIFY).
func (c *Client) forwardInboxEvents(ctx context.Context) {
	n, ok := c.store.(store.InboxNotifier)
	if !ok {
		return
	}
	for userID := range n.InboxEvents(ctx) {
		if userID == "" {
			c.hub.PublishAll()
			continue
		}
		c.hub.Publish(userID)
	}
}

// ListSuppressions lists addresses suppressed on a channel ("" for all).
func (c *Client) ListSuppressions(ctx context.Context, channel heraldtype.Channel) ([]heraldtype.Suppression, error) {
	if channel != "" && channel != heraldtype.ChannelSMS && channel != heraldtype.ChannelEmail {
		return nil, heraldtype.FieldErrorf("channel", "must be sms or email")
	}
	out, err := c.store.ListSuppressions(ctx, channel)
	if out == nil && err == nil {
		out = []heraldtype.Suppression{}
	}
	return out, err
}

// maxAddressLength bounds a suppressed address in characters: an e-mail
// address's longest form (64 + 1 + 255, RFC 3696 erratum); a phone number
// is far shorter.
const maxAddressLength = 320

// DeleteSuppression lifts a suppression when the address opted in again
// (for SMS: the number replied START).
func (c *Client) DeleteSuppression(ctx context.Context, channel heraldtype.Channel, address string) error {
	if channel != heraldtype.ChannelSMS && channel != heraldtype.ChannelEmail {
		return heraldtype.FieldErrorf("channel", "must be sms or email")
	}
	if address == "" {
		return heraldtype.FieldErrorf("address", "is required")
	}
	if err := validIdentifierText("address", address, maxAddressLength); err != nil {
		return err
	}
	return c.store.DeleteSuppression(ctx, channel, address)
}
