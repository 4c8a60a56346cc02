package heraldclient

import (
	"context"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// GetPreferences reads a user's delivery preferences (GET
// /v1/users/{id}/preferences).
func (c *Client) GetPreferences(ctx context.Context, userID string) (heraldtype.Preferences, error) {
	var p heraldtype.Preferences
	_, err := c.do(ctx, call{method: http.MethodGet, path: pathf("/v1/users/%s/preferences", userID), out: &p})
	return p, err
}

// PutPreferences replaces a user's preferences (PUT
// /v1/users/{id}/preferences): the types turned off or limited to some
// channels, the channels opted out of, quiet hours and the daily cap. The
// server owns p's UserID, Timezone,
// ChannelsResubscribedAt and UpdatedAt; they are not sent.
func (c *Client) PutPreferences(ctx context.Context, userID string, p heraldtype.Preferences) (heraldtype.Preferences, error) {
	in := preferencesInput{Types: p.Types, OptedOutChannels: p.OptedOutChannels, QuietHours: p.QuietHours, DailyCap: p.DailyCap}
	var out heraldtype.Preferences
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/users/%s/preferences", userID), body: in, out: &out})
	return out, err
}

// preferencesInput is the body of PutPreferences: the fields of
// heraldtype.Preferences that the caller sets (the others are the
// server's).
type preferencesInput struct {
	Types            map[string]heraldtype.TypePreference `json:"types,omitempty"`
	OptedOutChannels []heraldtype.Channel                 `json:"opted_out_channels,omitempty"`
	QuietHours       *heraldtype.QuietHours               `json:"quiet_hours,omitempty"`
	DailyCap         int                                  `json:"daily_cap,omitempty"`
}
