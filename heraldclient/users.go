package heraldclient

import (
	"context"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// UserInput is the body of PutUser. Every field may be left empty: the
// timezone then defaults to the server's (Asia/Seoul unless configured).
type UserInput struct {
	// Timezone is an IANA name ("Asia/Seoul"): quiet hours and local-time
	// schedules are the user's wall clock in it.
	Timezone string `json:"timezone,omitempty"`
	// Locale is a BCP 47 tag ("ko-KR").
	Locale string `json:"locale,omitempty"`
	// Email and Phone (E.164, "+821012345678") are where email and sms
	// deliveries go.
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
}

// DeviceInput is the body of RegisterDevice and RegisterOwnDevice.
type DeviceInput struct {
	// DeviceID is the app installation's stable id; registering it again
	// refreshes its token.
	DeviceID string              `json:"device_id"`
	Token    string              `json:"token"`
	Platform heraldtype.Platform `json:"platform"`
	// AppVersion is the app's version, free text.
	AppVersion string `json:"app_version,omitempty"`
	// PushOptIn defaults to true when nil: registering a token is the
	// app's way of asking for pushes.
	PushOptIn *bool `json:"push_opt_in,omitempty"`
	// P256DH and Auth are a browser push subscription's keys (base64url)
	// for a web device delivered by Web Push directly; Token is then the
	// subscription's endpoint URL.
	P256DH string `json:"p256dh,omitempty"`
	Auth   string `json:"auth,omitempty"`
}

// OwnHeartbeat names one of the caller's own devices, by DeviceID or by
// Token.
type OwnHeartbeat struct {
	DeviceID string `json:"device_id,omitempty"`
	Token    string `json:"token,omitempty"`
}

// PutUser creates or replaces the user id (PUT /v1/users/{id}).
func (c *Client) PutUser(ctx context.Context, id string, in UserInput) (heraldtype.User, error) {
	var u heraldtype.User
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/users/%s", id), body: in, out: &u})
	return u, err
}

// GetUser reads a user (GET /v1/users/{id}); not_found if there is none.
func (c *Client) GetUser(ctx context.Context, id string) (heraldtype.User, error) {
	var u heraldtype.User
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s", id), out: &u})
	return u, err
}

// RegisterDevice registers or refreshes a device of the user (POST
// /v1/users/{id}/devices), from the app's backend with a server key — it
// may move a device from another user — or from the app with the user's
// own token. Registering the same device again is harmless, so the call
// is retried.
func (c *Client) RegisterDevice(ctx context.Context, userID string, in DeviceInput) (heraldtype.Device, error) {
	var d heraldtype.Device
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/devices", userID), body: in, out: &d, safe: true})
	return d, err
}

// ListDevices lists the user's devices (GET /v1/users/{id}/devices).
func (c *Client) ListDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	var out struct {
		Devices []heraldtype.Device `json:"devices"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s/devices", userID), out: &out})
	return out.Devices, err
}

// DeleteDevice removes a device of the user (DELETE
// /v1/users/{id}/devices/{device_id}).
func (c *Client) DeleteDevice(ctx context.Context, userID, deviceID string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: pathf("/v1/users/%s/devices/%s", userID, deviceID)})
	return err
}

// HeartbeatDevice records that a device is still in use (POST
// /v1/devices/{device_id}/heartbeat), with a server key.
func (c *Client) HeartbeatDevice(ctx context.Context, deviceID string) error {
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/devices/%s/heartbeat", deviceID), safe: true})
	return err
}

// RegisterOwnDevice registers or refreshes the caller's own device (POST
// /v1/tokens): a Client made WithUserToken, whose user is the token's.
func (c *Client) RegisterOwnDevice(ctx context.Context, in DeviceInput) (heraldtype.Device, error) {
	var d heraldtype.Device
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/tokens", body: in, out: &d, safe: true})
	return d, err
}

// HeartbeatOwnDevice records that one of the caller's own devices is
// still in use (POST /v1/tokens/heartbeat), with a user token.
func (c *Client) HeartbeatOwnDevice(ctx context.Context, hb OwnHeartbeat) error {
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/tokens/heartbeat", body: hb, safe: true})
	return err
}
