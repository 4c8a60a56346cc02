package cli

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The typed calls of the setup commands (users, devices, types,
// preferences, interests, notifications; issue 32 item 6), one method per
// HTTP operation. They are kept together and thin, so that the public Go
// client of issue 33 can replace them one for one.
//
// A body the user wrote as JSON (--file) is passed through as
// json.RawMessage rather than decoded here: the server's strict decoder
// then names an unknown or bad field by its whole path, as it does for
// every other client. Bodies built from flags are the typed inputs.

func (c *apiClient) putUser(ctx context.Context, id string, in any) (heraldtype.User, error) {
	var u heraldtype.User
	return u, c.do(ctx, http.MethodPut, "/v1/users/"+url.PathEscape(id), nil, in, &u)
}

func (c *apiClient) getUser(ctx context.Context, id string) (heraldtype.User, error) {
	var u heraldtype.User
	return u, c.do(ctx, http.MethodGet, "/v1/users/"+url.PathEscape(id), nil, nil, &u)
}

func (c *apiClient) registerDevice(ctx context.Context, userID string, in any) (heraldtype.Device, error) {
	var d heraldtype.Device
	return d, c.do(ctx, http.MethodPost, "/v1/users/"+url.PathEscape(userID)+"/devices", nil, in, &d)
}

func (c *apiClient) listDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	var out struct {
		Devices []heraldtype.Device `json:"devices"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/users/"+url.PathEscape(userID)+"/devices", nil, nil, &out)
	return out.Devices, err
}

func (c *apiClient) deleteDevice(ctx context.Context, userID, deviceID string) error {
	return c.do(ctx, http.MethodDelete, "/v1/users/"+url.PathEscape(userID)+"/devices/"+url.PathEscape(deviceID), nil, nil, nil)
}

func (c *apiClient) heartbeatDevice(ctx context.Context, deviceID string) error {
	return c.do(ctx, http.MethodPost, "/v1/devices/"+url.PathEscape(deviceID)+"/heartbeat", nil, nil, nil)
}

func (c *apiClient) listTypes(ctx context.Context) ([]herald.NotificationType, error) {
	var out struct {
		Types []herald.NotificationType `json:"types"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/types", nil, nil, &out)
	return out.Types, err
}

func (c *apiClient) getType(ctx context.Context, name string) (herald.NotificationType, error) {
	var t herald.NotificationType
	return t, c.do(ctx, http.MethodGet, "/v1/types/"+url.PathEscape(name), nil, nil, &t)
}

func (c *apiClient) putType(ctx context.Context, name string, in any) (herald.NotificationType, error) {
	var t herald.NotificationType
	return t, c.do(ctx, http.MethodPut, "/v1/types/"+url.PathEscape(name), nil, in, &t)
}

func (c *apiClient) getPreferences(ctx context.Context, userID string) (herald.Preferences, error) {
	var p herald.Preferences
	return p, c.do(ctx, http.MethodGet, "/v1/users/"+url.PathEscape(userID)+"/preferences", nil, nil, &p)
}

func (c *apiClient) putPreferences(ctx context.Context, userID string, in any) (herald.Preferences, error) {
	var p herald.Preferences
	return p, c.do(ctx, http.MethodPut, "/v1/users/"+url.PathEscape(userID)+"/preferences", nil, in, &p)
}

// recordInterests posts one interest (herald.InterestInput) or a batch
// ({"interests": […]}) and returns how many were recorded.
func (c *apiClient) recordInterests(ctx context.Context, in any) (int, error) {
	var out struct {
		Recorded int `json:"recorded"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/interests", nil, in, &out)
	return out.Recorded, err
}

func (c *apiClient) listInterests(ctx context.Context, f herald.InterestFilter) (herald.InterestPage, error) {
	var page herald.InterestPage
	q := listQuery(map[string]string{"subject": f.Subject, "cursor": f.Cursor}, f.Limit)
	return page, c.do(ctx, http.MethodGet, "/v1/users/"+url.PathEscape(f.UserID)+"/interests?"+q, nil, nil, &page)
}

// triggered is the answer of POST /v1/notifications.
type triggered struct {
	// ID is the notification's id when the trigger had one recipient.
	ID            string                        `json:"id,omitempty"`
	Notifications []herald.EnqueuedNotification `json:"notifications"`
	Replayed      bool                          `json:"replayed"`
}

// trigger posts a notification request (a herald.Request, or its JSON),
// with key as its Idempotency-Key when not empty.
func (c *apiClient) trigger(ctx context.Context, in any, key string) (triggered, error) {
	var h http.Header
	if key != "" {
		h = http.Header{"Idempotency-Key": {key}}
	}
	var out triggered
	return out, c.do(ctx, http.MethodPost, "/v1/notifications", h, in, &out)
}

func (c *apiClient) getNotification(ctx context.Context, id string) (herald.NotificationStatus, error) {
	var n herald.NotificationStatus
	return n, c.do(ctx, http.MethodGet, "/v1/notifications/"+url.PathEscape(id), nil, nil, &n)
}

// listHistory lists notifications newest first, a user's when f.UserID is
// set.
func (c *apiClient) listHistory(ctx context.Context, f herald.HistoryFilter) (herald.HistoryPage, error) {
	path := "/v1/notifications"
	if f.UserID != "" {
		path = "/v1/users/" + url.PathEscape(f.UserID) + "/notifications"
	}
	q := url.Values{}
	for k, v := range map[string]string{"type": f.Type, "status": string(f.Status), "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, t := range map[string]time.Time{"from": f.From, "to": f.To} {
		if !t.IsZero() {
			q.Set(k, t.Format(time.RFC3339Nano))
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var page herald.HistoryPage
	return page, c.do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, nil, &page)
}
