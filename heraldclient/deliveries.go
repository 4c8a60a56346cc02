package heraldclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// DeliveryPage is one page of deliveries, newest first.
type DeliveryPage struct {
	Deliveries []heraldtype.Delivery `json:"deliveries"`
	NextCursor string                `json:"next_cursor,omitempty"`
}

// ListDeliveries reads one page of deliveries (GET /v1/deliveries): by
// state (state dead: the dead letters), error code, type, user,
// notification and creation time.
func (c *Client) ListDeliveries(ctx context.Context, f heraldtype.DeliveryFilter) (DeliveryPage, error) {
	q := newQuery().str("state", string(f.State)).str("error_code", f.ErrorCode).str("type", f.Type).str("channel", string(f.Channel)).
		str("user_id", f.UserID).str("notification_id", f.NotificationID).time("from", f.From).time("to", f.To).
		str("cursor", f.Cursor).limit(f.Limit)
	var page DeliveryPage
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/deliveries", query: url.Values(q), out: &page})
	return page, err
}

// Deliveries walks every delivery f selects.
func (c *Client) Deliveries(ctx context.Context, f heraldtype.DeliveryFilter) iter.Seq2[heraldtype.Delivery, error] {
	return walk(ctx, f.Cursor, func(ctx context.Context, cursor string) ([]heraldtype.Delivery, string, error) {
		f.Cursor = cursor
		p, err := c.ListDeliveries(ctx, f)
		return p.Deliveries, p.NextCursor, err
	})
}

// GetDelivery reads one delivery with its attempts, its timeline (GET
// /v1/deliveries/{id}).
func (c *Client) GetDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	var d heraldtype.Delivery
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/deliveries/%s", strconv.FormatInt(id, 10)), out: &d})
	return d, err
}

// ReplayDelivery sends a dead or unknown delivery again (POST
// /v1/deliveries/{id}/replay) and returns it, pending. It is not retried:
// the caller decides whether a replay whose answer was lost is made again.
func (c *Client) ReplayDelivery(ctx context.Context, id int64) (heraldtype.Delivery, error) {
	var d heraldtype.Delivery
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/deliveries/%s/replay", strconv.FormatInt(id, 10)), out: &d})
	return d, err
}

// ReplayFilter selects the deliveries ReplayDeliveries sends again: dead
// ones (the default) or unknown ones, by error code, type, user,
// notification and creation time.
type ReplayFilter struct {
	State          heraldtype.DeliveryState
	ErrorCode      string
	Type           string
	Channel        heraldtype.Channel
	UserID         string
	NotificationID string
	From, To       time.Time
}

// ReplayDeliveries replays every delivery f selects (POST
// /v1/deliveries/replay) and returns how many. It is not retried.
func (c *Client) ReplayDeliveries(ctx context.Context, f ReplayFilter) (int, error) {
	body := replayBody{State: f.State, ErrorCode: f.ErrorCode, Type: f.Type, Channel: f.Channel, UserID: f.UserID,
		NotificationID: f.NotificationID}
	if !f.From.IsZero() {
		body.From = f.From.Format(time.RFC3339Nano)
	}
	if !f.To.IsZero() {
		body.To = f.To.Format(time.RFC3339Nano)
	}
	var out struct {
		Replayed int `json:"replayed"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/deliveries/replay", body: body, out: &out})
	return out.Replayed, err
}

type replayBody struct {
	State          heraldtype.DeliveryState `json:"state,omitempty"`
	ErrorCode      string                   `json:"error_code,omitempty"`
	Type           string                   `json:"type,omitempty"`
	Channel        heraldtype.Channel       `json:"channel,omitempty"`
	UserID         string                   `json:"user_id,omitempty"`
	NotificationID string                   `json:"notification_id,omitempty"`
	From           string                   `json:"from,omitempty"`
	To             string                   `json:"to,omitempty"`
}

// ListSuppressions lists the suppressed sms and email addresses (GET
// /v1/suppressions), of one channel when channel is not empty.
func (c *Client) ListSuppressions(ctx context.Context, channel heraldtype.Channel) ([]heraldtype.Suppression, error) {
	var out struct {
		Suppressions []heraldtype.Suppression `json:"suppressions"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/suppressions", query: url.Values(newQuery().str("channel", string(channel))), out: &out})
	return out.Suppressions, err
}

// DeleteSuppression lifts a suppression (DELETE
// /v1/suppressions/{channel}/{address}): the address may be contacted on
// the channel again.
func (c *Client) DeleteSuppression(ctx context.Context, channel heraldtype.Channel, address string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/suppressions/%s/%s", string(channel), address)})
	return err
}
