package herald

import (
	"context"
	"strings"

	_ "time/tzdata" // time zones must validate on machines without zoneinfo

	"github.com/heraldhq/herald/heraldtype"
)

// UserInput is the body of PUT /v1/users/{id}: the user's mutable fields.
// PUT replaces them all; an empty Timezone takes the configured default.
type UserInput struct {
	Timezone string `json:"timezone,omitempty"`
	Locale   string `json:"locale,omitempty"`
	Email    string `json:"email,omitempty"`
	Phone    string `json:"phone,omitempty"`
}

// PutUser creates or replaces a user (S0.1).
func (c *Client) PutUser(ctx context.Context, id string, in UserInput) (heraldtype.User, error) {
	if err := validID("id", id); err != nil {
		return heraldtype.User{}, err
	}
	if in.Timezone == "" {
		in.Timezone = c.cfg.DefaultTimezone
	}
	if _, err := loadTimezone("timezone", in.Timezone); err != nil {
		return heraldtype.User{}, err
	}
	if in.Locale != "" && (len(in.Locale) > maxLocaleLength || !localePattern.MatchString(in.Locale)) {
		return heraldtype.User{}, heraldtype.FieldErrorf("locale", "%q is not a BCP 47 language tag (e.g. ko-KR)", in.Locale)
	}
	if in.Email != "" {
		if err := validEmail("email", in.Email); err != nil {
			return heraldtype.User{}, err
		}
	}
	if in.Phone != "" && !phonePattern.MatchString(in.Phone) {
		return heraldtype.User{}, heraldtype.FieldErrorf("phone", "must be in E.164 form, e.g. +821012345678")
	}
	return c.store.UpsertUser(ctx, heraldtype.User{
		ID: id, Timezone: in.Timezone, Locale: in.Locale, Email: in.Email, Phone: in.Phone,
	}, c.now().UTC())
}

// GetUser returns a user or a not_found error.
func (c *Client) GetUser(ctx context.Context, id string) (heraldtype.User, error) {
	if err := validID("id", id); err != nil {
		return heraldtype.User{}, err
	}
	return c.store.GetUser(ctx, id)
}

// DeviceInput is the body of POST /v1/users/{id}/devices (S0.2).
type DeviceInput struct {
	DeviceID   string              `json:"device_id"`
	Token      string              `json:"token"`
	Platform   heraldtype.Platform `json:"platform"`
	AppVersion string              `json:"app_version,omitempty"`
	// PushOptIn defaults to true when omitted: registering a token is the
	// app's way of asking for pushes.
	PushOptIn *bool `json:"push_opt_in,omitempty"`
	// P256DH and Auth are a browser push subscription's keys (base64url),
	// required for a web device delivered through Web Push directly; Token
	// is then the subscription's endpoint URL.
	P256DH string `json:"p256dh,omitempty"`
	Auth   string `json:"auth,omitempty"`
}

// DeviceValidator is an optional Provider capability: a provider that can
// tell at registration that a device can never be reached (a malformed Web
// Push subscription) implements it, so the app gets a clear error at once.
type DeviceValidator interface {
	ValidateDevice(d *heraldtype.Device) error
}

// RegisterDevice upserts a device of a user by device id (S0.1, S0.2) for
// the app's backend (a server key). A refreshed token replaces the old
// one; a token held by another device is detached from it. The device
// becomes ACTIVE with its fail count reset. A device id registered to
// another user is re-assigned to this one, and the move is recorded on the
// device (PreviousUserID, ReassignedAt; issue 18). A user acting for itself
// goes through RegisterOwnDevice instead, which never moves a device.
func (c *Client) RegisterDevice(ctx context.Context, userID string, in DeviceInput) (heraldtype.Device, error) {
	d, err := c.deviceFromInput(userID, in)
	if err != nil {
		return heraldtype.Device{}, err
	}
	out, err := c.store.UpsertDevice(ctx, d, c.now().UTC(), c.cfg.Limits.MaxDevicesPerUser)
	if err == nil && out.ReassignedAt != nil && out.ReassignedAt.Equal(out.UpdatedAt) {
		c.log.Info("device reassigned", "device_id", out.ID, "user_id", out.UserID, "previous_user_id", out.PreviousUserID)
	}
	return out, err
}

// deviceFromInput checks a registration and returns the device it asks for.
func (c *Client) deviceFromInput(userID string, in DeviceInput) (heraldtype.Device, error) {
	if err := validID("user_id", userID); err != nil {
		return heraldtype.Device{}, err
	}
	if err := validID("device_id", in.DeviceID); err != nil {
		return heraldtype.Device{}, err
	}
	if in.Token == "" {
		return heraldtype.Device{}, heraldtype.FieldErrorf("token", "is required")
	}
	if len(in.Token) > MaxTokenLength {
		return heraldtype.Device{}, heraldtype.FieldErrorf("token", "must be at most %d bytes", MaxTokenLength)
	}
	for _, r := range in.Token {
		if r <= ' ' || r == 0x7f || r > 0x7e {
			return heraldtype.Device{}, heraldtype.FieldErrorf("token", "must be printable ASCII without spaces")
		}
	}
	platform := heraldtype.Platform(strings.ToLower(string(in.Platform)))
	if !platform.Valid() {
		return heraldtype.Device{}, heraldtype.FieldErrorf("platform", "must be android, ios or web")
	}
	if err := validText("app_version", in.AppVersion, maxAppVersion); err != nil {
		return heraldtype.Device{}, err
	}
	optIn := true
	if in.PushOptIn != nil {
		optIn = *in.PushOptIn
	}
	for field, v := range map[string]string{"p256dh": in.P256DH, "auth": in.Auth} {
		if err := validText(field, v, 256); err != nil {
			return heraldtype.Device{}, err
		}
	}
	d := heraldtype.Device{
		ID: in.DeviceID, UserID: userID, Platform: platform, Token: in.Token,
		AppVersion: in.AppVersion, PushOptIn: optIn, WebPushP256DH: in.P256DH, WebPushAuth: in.Auth,
	}
	if v, ok := c.cfg.Providers[c.cfg.PushRouting[platform]].(DeviceValidator); ok {
		if err := v.ValidateDevice(&d); err != nil {
			return heraldtype.Device{}, err
		}
	}
	return d, nil
}

// ListDevices returns a user's devices.
func (c *Client) ListDevices(ctx context.Context, userID string) ([]heraldtype.Device, error) {
	if err := validID("user_id", userID); err != nil {
		return nil, err
	}
	return c.store.ListDevices(ctx, userID)
}

// DeleteDevice removes a user's device; deliveries still queued for it are
// skipped.
func (c *Client) DeleteDevice(ctx context.Context, userID, deviceID string) error {
	if err := validID("user_id", userID); err != nil {
		return err
	}
	if err := validID("device_id", deviceID); err != nil {
		return err
	}
	return c.store.DeleteDevice(ctx, userID, deviceID)
}

// Heartbeat records that a device is still in use (S0.2): pruning counts
// from its last heartbeat or registration.
func (c *Client) Heartbeat(ctx context.Context, deviceID string) error {
	if err := validID("device_id", deviceID); err != nil {
		return err
	}
	return c.store.TouchDevice(ctx, deviceID, c.now().UTC())
}
