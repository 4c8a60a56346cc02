package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// InboxPage is one page of a user's in-app inbox, newest first.
type InboxPage struct {
	Items      []heraldtype.InboxItem `json:"items"`
	NextCursor string                 `json:"next_cursor,omitempty"`
	// Unread counts the user's unread, unarchived items.
	Unread int `json:"unread"`
}

// ListInbox reads one page of a user's inbox (GET /v1/users/{id}/inbox):
// only unread items (f.Unread), or the archived ones (f.Archived); a page
// holds at most 200.
func (c *Client) ListInbox(ctx context.Context, userID string, f heraldtype.InboxFilter) (InboxPage, error) {
	q := newQuery().flag("unread", f.Unread).flag("archived", f.Archived).str("cursor", f.Cursor).limit(f.Limit)
	var page InboxPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s/inbox", userID), query: url.Values(q), out: &page})
	return page, err
}

// Inbox walks every item of a user's inbox that f selects.
func (c *Client) Inbox(ctx context.Context, userID string, f heraldtype.InboxFilter) iter.Seq2[heraldtype.InboxItem, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.InboxItem, string, error) {
		f.Cursor = cursor
		p, err := c.ListInbox(ctx, userID, f)
		return p.Items, p.NextCursor, err
	})
}

// MarkInboxRead marks items of the user's inbox read (POST
// /v1/users/{id}/inbox/read) and returns how many changed.
func (c *Client) MarkInboxRead(ctx context.Context, userID string, ids ...int64) (int, error) {
	return c.markInbox(ctx, userID, "read", ids)
}

// markInbox posts ids to the user's inbox/{mark} route (read, seen) and
// returns how many items changed.
func (c *Client) markInbox(ctx context.Context, userID, mark string, ids []int64) (int, error) {
	if ids == nil {
		ids = []int64{}
	}
	body := struct {
		IDs []int64 `json:"ids"`
	}{ids}
	var out struct {
		Updated int `json:"updated"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/inbox/"+mark, userID), body: body, out: &out, safe: true})
	return out.Updated, err
}

// MarkAllInboxRead marks every item of the user's inbox read (POST
// /v1/users/{id}/inbox/read-all) and returns how many changed.
func (c *Client) MarkAllInboxRead(ctx context.Context, userID string) (int, error) {
	var out struct {
		Updated int `json:"updated"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/inbox/read-all", userID), out: &out, safe: true})
	return out.Updated, err
}

// ArchiveInboxItem archives an item of the user's inbox (POST
// /v1/users/{id}/inbox/{item_id}/archive).
func (c *Client) ArchiveInboxItem(ctx context.Context, userID string, itemID int64) error {
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/inbox/%s/archive", userID, strconv.FormatInt(itemID, 10)), safe: true})
	return err
}

// MarkInboxSeen marks items of the user's inbox seen (POST
// /v1/users/{id}/inbox/seen) and returns how many changed.
func (c *Client) MarkInboxSeen(ctx context.Context, userID string, ids ...int64) (int, error) {
	return c.markInbox(ctx, userID, "seen", ids)
}

// ClickInboxItem records that the user clicked an item of their inbox
// (POST /v1/users/{id}/inbox/{item_id}/click); action names what was
// clicked ("" for the item itself). A click marks the item seen and read
// too.
func (c *Client) ClickInboxItem(ctx context.Context, userID string, itemID int64, action string) error {
	body := struct {
		Action string `json:"action,omitempty"`
	}{action}
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/inbox/%s/click", userID, strconv.FormatInt(itemID, 10)), body: body, safe: true})
	return err
}
