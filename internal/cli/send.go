package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
)

func newSendCmd(e *env) *cobra.Command {
	var server, key, sendAt, file string
	var r heraldclient.TriggerRequest
	var data, channels []string
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Trigger a notification through a running Herald (POST /v1/notifications)",
		Example: `  herald send --user u1 --type reservation_confirmed --title Booked --body "See you at 7"
  herald send --user u1 --user u2 --type promo --data-only --data product_id=42 --idempotency-key promo-42
  herald send -f notification.json --idempotency-key order-1234-shipped`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			raw, ok, err := bodyFromFile(cmd, file, sendFlags...)
			if err != nil {
				return err
			}
			if !ok {
				if err := requestFromFlags(cmd, &r, data, channels, sendAt); err != nil {
					return err
				}
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var out heraldclient.TriggerResult
			if ok {
				out, err = triggerFromFile(cmd.Context(), c, raw, key)
			} else {
				r.IdempotencyKey = key
				out, err = c.Trigger(cmd.Context(), r)
			}
			if err != nil {
				return err
			}
			return printJSON(e.stdout, out)
		},
	}
	f := cmd.Flags()
	addServerFlag(cmd, e, &server)
	f.StringSlice("user", nil, "recipient user id (repeat for several)")
	f.StringVar(&r.Type, "type", "", "notification type")
	f.StringVar(&r.Title, "title", "", "title")
	f.StringVar(&r.Body, "body", "", "body")
	f.StringArrayVar(&data, "data", nil, "data entry key=value (repeatable)")
	f.StringSliceVar(&channels, "channel", nil, "channel (default push)")
	f.StringVar((*string)(&r.Priority), "priority", "", "LOW, NORMAL (default) or HIGH")
	f.BoolVar(&r.DataOnly, "data-only", false, "send a data-only message the app renders itself")
	f.StringVar(&sendAt, "send-at", "", "deliver at this time (RFC 3339)")
	f.StringVar(&r.DedupeKey, "dedupe-key", "", "not sent when the user got a notification of this type with the same key within the type's de-duplication window")
	f.StringVar(&r.CancellationKey, "cancellation-key", "", "a key to cancel it by later (herald notifications cancel --key)")
	f.StringVar(&key, "idempotency-key", "", "Idempotency-Key: retrying with the same key never sends twice")
	addFileFlag(cmd, &file, "the notification request (POST /v1/notifications' body)")
	return cmd
}

// sendFlags are the flags of send that build its body; --file replaces
// them all (the Idempotency-Key goes with either).
var sendFlags = []string{"user", "type", "title", "body", "data", "channel", "priority", "data-only", "send-at", "dedupe-key", "cancellation-key"}

// requestFromFlags completes r, which the flags filled, with the flags
// that need parsing.
func requestFromFlags(cmd *cobra.Command, r *heraldclient.TriggerRequest, data, channels []string, sendAt string) error {
	users, _ := cmd.Flags().GetStringSlice("user")
	switch len(users) {
	case 0:
		return fmt.Errorf("--user is required (or give the request with --file)")
	case 1:
		r.UserID = users[0]
	default:
		r.UserIDs = users
	}
	var err error
	if r.Data, err = parseKeyValues("data", data); err != nil {
		return err
	}
	r.Channels = channelList(channels)
	if sendAt != "" {
		t, err := parseTimeFlag("send-at", sendAt)
		if err != nil {
			return err
		}
		r.SendAt = &t
	}
	return nil
}

// triggerFromFile posts a trigger the user wrote (--file) as written, with
// an Idempotency-Key: --idempotency-key, else the body's own
// idempotency_key, else one made for the call, so that the client's
// retries of it are never a second trigger.
func triggerFromFile(ctx context.Context, c *heraldclient.Client, body json.RawMessage, key string) (heraldclient.TriggerResult, error) {
	if key == "" {
		var in struct {
			IdempotencyKey string `json:"idempotency_key"`
		}
		if json.Unmarshal(body, &in) == nil {
			key = in.IdempotencyKey
		}
	}
	if key == "" {
		key = heraldclient.NewIdempotencyKey()
	}
	var out heraldclient.TriggerResult
	err := sendFile(ctx, c, http.MethodPost, "/v1/notifications", http.Header{"Idempotency-Key": {key}}, body, &out)
	out.IdempotencyKey = key
	return out, err
}
