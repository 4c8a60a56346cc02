package heraldclient

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// Operations whose body the caller already holds as JSON.
//
// A program builds its requests from the typed inputs (UserInput,
// TypeConfig, heraldtype.Rule, …). A tool that forwards a document a
// person wrote — the herald command's --file, a body kept in a
// repository — sends it with the operation's JSON variant instead: the
// bytes go to the server as written, and the server's strict decoder
// judges them, naming an unknown or ill-typed field by its whole path
// ("types.promo.disabld") in the *Error's Field. Decoding such a document
// into a typed input first would drop what the input has no field for, or
// fail with a message that names no path. Answers, errors and retries are
// those of the typed method. body must be one JSON value; it is sent
// compacted.

// PutUserJSON is PutUser with the body (UserInput's JSON) as written.
func (c *Client) PutUserJSON(ctx context.Context, id string, body json.RawMessage) (heraldtype.User, error) {
	var u heraldtype.User
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/users/%s", id), body: body, out: &u})
	return u, err
}

// RegisterDeviceJSON is RegisterDevice with the body (DeviceInput's JSON)
// as written.
func (c *Client) RegisterDeviceJSON(ctx context.Context, userID string, body json.RawMessage) (heraldtype.Device, error) {
	var d heraldtype.Device
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/users/%s/devices", userID), body: body, out: &d, safe: true})
	return d, err
}

// PutTypeJSON is PutType with the body (TypeConfig's JSON) as written.
func (c *Client) PutTypeJSON(ctx context.Context, name string, body json.RawMessage) (NotificationType, error) {
	var t NotificationType
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/types/%s", name), body: body, out: &t})
	return t, err
}

// PutPreferencesJSON is PutPreferences with the body as written: the
// preferences' JSON without the fields the server owns (user_id,
// timezone, updated_at).
func (c *Client) PutPreferencesJSON(ctx context.Context, userID string, body json.RawMessage) (heraldtype.Preferences, error) {
	var p heraldtype.Preferences
	_, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/users/%s/preferences", userID), body: body, out: &p})
	return p, err
}

// RecordInterestsJSON is RecordInterests with the body as written: one
// interest (InterestInput's JSON) or a batch, {"interests": […]}. It is
// not retried.
func (c *Client) RecordInterestsJSON(ctx context.Context, body json.RawMessage) (int, error) {
	var out struct {
		Recorded int `json:"recorded"`
	}
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/interests", body: body, out: &out})
	return out.Recorded, err
}

// TriggerJSON is Trigger with the body (TriggerRequest's JSON) as written
// and key as its Idempotency-Key. With key empty, the body's own
// idempotency_key is the header's, or else a random key is made for the
// call, so that its retries are never a second trigger.
func (c *Client) TriggerJSON(ctx context.Context, body json.RawMessage, key string) (TriggerResult, error) {
	if key == "" {
		var in struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		if json.Unmarshal(body, &in) == nil {
			key = in.IdempotencyKey
		}
	}
	if key == "" {
		key = NewIdempotencyKey()
	}
	var out TriggerResult
	res, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/notifications", body: body, out: &out,
		header: http.Header{"Idempotency-Key": {key}}, safe: true})
	if err != nil {
		return TriggerResult{}, err
	}
	out.IdempotencyKey = key
	if res.header.Get("Idempotent-Replayed") == "true" {
		out.Replayed = true
	}
	return out, nil
}

// PutRuleJSON is PutRule for the rule name, with the body (the rule's
// source, when, audience, notify and disabled) as written.
func (c *Client) PutRuleJSON(ctx context.Context, name string, body json.RawMessage) (rule heraldtype.Rule, created bool, err error) {
	res, err := c.do(ctx, call{method: http.MethodPut, path: pathf("/v1/rules/%s", name), body: body, out: &rule})
	return rule, err == nil && res.status == http.StatusCreated, err
}

// DryRunRuleJSON is DryRunRule with the event (Event's JSON) as written.
func (c *Client) DryRunRuleJSON(ctx context.Context, name string, event json.RawMessage) (RuleDryRun, error) {
	var out RuleDryRun
	_, err := c.do(ctx, call{method: http.MethodPost, path: pathf("/v1/rules/%s/dry-run", name), body: event, out: &out, safe: true})
	return out, err
}
