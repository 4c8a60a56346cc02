package cli

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

func newSendCmd(e *env) *cobra.Command {
	var server, key, sendAt string
	var r herald.Request
	var data, channels []string
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Trigger a notification through a running Herald (POST /v1/notifications)",
		Example: `  herald send --user u1 --type reservation_confirmed --title Booked --body "See you at 7"
  herald send --user u1 --user u2 --type promo --data-only --data product_id=42 --idempotency-key promo-42`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			users, _ := cmd.Flags().GetStringSlice("user")
			switch len(users) {
			case 0:
				return fmt.Errorf("--user is required")
			case 1:
				r.UserID = users[0]
			default:
				r.UserIDs = users
			}
			if len(data) > 0 {
				r.Data = map[string]string{}
				for _, kv := range data {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						return fmt.Errorf("--data %q: use key=value", kv)
					}
					r.Data[k] = v
				}
			}
			for _, ch := range channels {
				r.Channels = append(r.Channels, heraldtype.Channel(ch))
			}
			if sendAt != "" {
				t, err := time.Parse(time.RFC3339, sendAt)
				if err != nil {
					return fmt.Errorf("--send-at: %w (use RFC 3339, e.g. 2026-11-22T09:00:00+09:00)", err)
				}
				r.SendAt = &t
			}
			h := http.Header{}
			if key != "" {
				h.Set("Idempotency-Key", key)
			}
			var out map[string]any
			if err := newAPIClient(cmd, server).do(cmd.Context(), http.MethodPost, "/v1/notifications", h, &r, &out); err != nil {
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
	f.StringVar(&key, "idempotency-key", "", "Idempotency-Key: retrying with the same key never sends twice")
	return cmd
}
