package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The app-facing device calls (S0.2). An app calls Herald directly with a
// user token its backend signed; the user is the token's subject, and these
// methods make sure one user can never take over or touch another user's
// device.

// RegisterOwnDevice is RegisterDevice for a user acting for itself (a
// user token: POST /v1/tokens, POST /v1/users/{own}/devices). It creates
// the user's new devices and refreshes its own, and never moves another
// user's device, its id or its history (issue 18):
//
//   - A device id registered to another user is answered like a new id:
//     the caller gets a device of its own, under an id Herald assigns (the
//     caller's device already holding the same push token, else a fresh
//     one). The answer is 200 with that device either way; no error tells
//     the caller that another user's device exists. Apps must use the
//     device_id of the answer.
//   - A push token another user's device holds moves only if that device
//     is idle: INVALID, or not seen (registered or heartbeat) for
//     Config.DeviceTokenTakeoverAfter (24 h). It is then detached from that
//     device, which stays its user's, INVALID with reason "token_moved"
//     (the phone changed hands, S0.1). A holder still in use keeps it and
//     the call is ECONFLICT on "token", naming no one (issue 23: a token
//     someone learned, e.g. from a leak, must not take over that phone's
//     pushes). A legitimate app holds only its own install's token, so
//     the new user of a handed-over phone gets it once the old user signed
//     out there (DELETE of its own device) or stopped using it; a server
//     key (RegisterDevice) may always move it.
//
// The ownership check and the write are one store statement
// (UpsertOwnDevice), so two users racing for one new id cannot both get
// it (issue 23).
func (c *Client) RegisterOwnDevice(ctx context.Context, userID string, in DeviceInput) (heraldtype.Device, error) {
	d, err := c.deviceFromInput(userID, in)
	if err != nil {
		return heraldtype.Device{}, err
	}
	now := c.now().UTC()
	var takeoverBefore time.Time // never: a negative DeviceTokenTakeoverAfter
	if c.cfg.DeviceTokenTakeoverAfter > 0 {
		takeoverBefore = now.Add(-c.cfg.DeviceTokenTakeoverAfter)
	}
	out, err := c.store.UpsertOwnDevice(ctx, d, now, c.cfg.Limits.MaxDevicesPerUser, takeoverBefore)
	if store.IsDeviceTaken(err) {
		if d.ID, err = c.ownDeviceID(ctx, userID, d.Token, now); err != nil {
			return heraldtype.Device{}, err
		}
		out, err = c.store.UpsertOwnDevice(ctx, d, now, c.cfg.Limits.MaxDevicesPerUser, takeoverBefore)
	}
	if err != nil {
		return heraldtype.Device{}, err
	}
	return ownView(out), nil
}

// ownDeviceID is the id a user's registration takes when the id it asked
// for is another user's: the id of its device that already holds token
// (the same app registering again), else a fresh one.
func (c *Client) ownDeviceID(ctx context.Context, userID, token string, now time.Time) (string, error) {
	ds, err := c.store.ListDevices(ctx, userID)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if d.Token == token {
			return d.ID, nil
		}
	}
	return newID(now), nil
}

// ListOwnDevices is ListDevices for a user acting for itself: a device a
// server key moved to it shows when it moved, not whom it was taken from.
func (c *Client) ListOwnDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	ds, err := c.ListDevices(ctx, userID)
	for i := range ds {
		ds[i] = ownView(ds[i])
	}
	return ds, err
}

// ownView is a device as its user sees it: another user's id is never
// shown to a user.
func ownView(d heraldtype.Device) heraldtype.Device {
	d.PreviousUserID = ""
	return d
}

// OwnHeartbeat names the caller's device by its id or by its push token
// (exactly one).
type OwnHeartbeat struct {
	DeviceID string `json:"device_id,omitempty"`
	Token    string `json:"token,omitempty"`
}

// HeartbeatOwnDevice records a heartbeat for one of the user's own devices
// (POST /v1/tokens/heartbeat). Another user's device is not_found, exactly
// like a device that does not exist, so ids cannot be probed.
func (c *Client) HeartbeatOwnDevice(ctx context.Context, userID string, hb OwnHeartbeat) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	switch {
	case hb.DeviceID != "" && hb.Token != "":
		return heraldtype.FieldErrorf("device_id", "give device_id or token, not both")
	case hb.DeviceID != "":
		if err := validID("device_id", hb.DeviceID); err != nil {
			return err
		}
		d, err := c.store.GetDevice(ctx, hb.DeviceID)
		if err != nil && !isCode(err, heraldtype.ENOTFOUND) {
			return err
		}
		if err != nil || d.UserID != userID {
			return heraldtype.Errorf(heraldtype.ENOTFOUND, "device %q not found for this user", hb.DeviceID)
		}
		return c.store.TouchDevice(ctx, d.ID, c.now().UTC())
	case hb.Token != "":
		if len(hb.Token) > MaxTokenLength {
			return heraldtype.FieldErrorf("token", "must be at most %d bytes", MaxTokenLength)
		}
		ds, err := c.store.ListDevices(ctx, userID)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Token == hb.Token {
				return c.store.TouchDevice(ctx, d.ID, c.now().UTC())
			}
		}
		return heraldtype.Errorf(heraldtype.ENOTFOUND, "no device of this user has that token")
	}
	return heraldtype.FieldErrorf("device_id", "device_id or token is required")
}

// isCode reports whether err is a *heraldtype.Error with code.
func isCode(err error, code string) bool {
	return err != nil && heraldtype.ErrorCode(err) == code
}
