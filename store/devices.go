package store

import (
	"errors"
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// ErrDeviceTaken returns the error UpsertOwnDevice answers when the device
// id belongs to another user. The Client never shows it to a caller (it
// would tell a user that another user's device exists); it registers the
// caller's device under another id instead.
func ErrDeviceTaken(id string) error {
	return &heraldtype.Error{Code: heraldtype.ECONFLICT, Field: "device_id",
		Message: "device " + strconv.Quote(id) + " belongs to another user"}
}

// IsDeviceTaken reports whether err is ErrDeviceTaken's error.
func IsDeviceTaken(err error) bool {
	var he *heraldtype.Error
	return errors.As(err, &he) && he.Code == heraldtype.ECONFLICT && he.Field == "device_id"
}

// ErrTokenHeld returns the error UpsertOwnDevice answers when the push
// token is held by another user's device still in use. The message names
// neither the user nor the device.
func ErrTokenHeld() error {
	return &heraldtype.Error{Code: heraldtype.ECONFLICT, Field: "token",
		Message: "push token is registered to another device in use; sign out there first (which removes that device), or register it with a server key"}
}
