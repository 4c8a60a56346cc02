package herald

import (
	"context"

	"github.com/heraldhq/herald/heraldtype"
)

// The app-facing device calls (S0.2). An app calls Herald directly with a
// user token its backend signed; the user is the token's subject, and these
// methods make sure one user can never take over or touch another user's
// device.

// RegisterOwnDevice is RegisterDevice for a user acting for itself (POST
// /v1/tokens). A device id already registered to another user is taken
// over only with the push token that device currently holds: that is the
// same phone changing hands (log out, log in as someone else), whereas
// someone who merely knows another user's device id gets a conflict.
func (c *Client) RegisterOwnDevice(ctx context.Context, userID string, in DeviceInput) (heraldtype.Device, error) {
	if err := validID("user_id", userID); err != nil {
		return heraldtype.Device{}, err
	}
	if err := validID("device_id", in.DeviceID); err != nil {
		return heraldtype.Device{}, err
	}
	cur, err := c.store.GetDevice(ctx, in.DeviceID)
	switch {
	case isCode(err, heraldtype.ENOTFOUND):
	case err != nil:
		return heraldtype.Device{}, err
	case cur.UserID != userID && cur.Token != in.Token:
		return heraldtype.Device{}, &heraldtype.Error{Code: heraldtype.ECONFLICT, Field: "device_id",
			Message: "device_id: is registered to another user; register it from that device with its current push token, or use another device id"}
	}
	return c.RegisterDevice(ctx, userID, in)
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
