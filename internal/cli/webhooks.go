package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"

	"github.com/heraldhq/herald/heraldtype"
)

// herald webhooks: the outbound webhook endpoints of a running Herald,
// over /v1/webhooks (issue 35 item 4).

func newWebhooksCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Manage the endpoints a running Herald sends its signed webhooks to",
		Long: `Manage the endpoints a running Herald sends its signed webhooks to: register one,
change it, test it, rotate its secret, and read and replay its messages.

An endpoint's signing secret is printed once, by create and by rotate: keep it where
the receiver reads it.`,
	}
	cmd.AddCommand(newWebhooksListCmd(e), newWebhooksGetCmd(e), newWebhooksCreateCmd(e), newWebhooksUpdateCmd(e),
		newWebhooksDeleteCmd(e), newWebhooksRotateCmd(e), newWebhooksTestCmd(e), newWebhooksMessagesCmd(e),
		newWebhooksReplayCmd(e))
	return cmd
}

// eventsText is an endpoint's event types as the listing shows them.
func eventsText(events []string) string {
	if len(events) == 0 {
		return "(every type)"
	}
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = printable(ev)
	}
	return strings.Join(out, ",")
}

// endpointState is an endpoint's state in words: enabled, failing since
// a time, or disabled with its reason.
func endpointState(ep heraldtype.WebhookEndpoint) string {
	switch {
	case !ep.Enabled && ep.DisabledReason != "":
		return "disabled: " + printable(ep.DisabledReason)
	case !ep.Enabled:
		return "disabled"
	case ep.FailingSince != nil:
		return "failing since " + ep.FailingSince.UTC().Format(time.RFC3339)
	}
	return "enabled"
}

func newWebhooksListCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the endpoints, oldest first",
		Example: "  herald webhooks list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			eps, err := c.ListWebhooks(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, eps)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tURL\tEVENTS\tSTATE")
			for _, ep := range eps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(ep.ID), printable(ep.URL), eventsText(ep.Events), endpointState(ep))
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newWebhooksGetCmd(e *env) *cobra.Command {
	return newGetJSONCmd(e, "get ID", "Show one endpoint (JSON; never its secret)", (*heraldclient.Client).GetWebhook)
}

func newWebhooksCreateCmd(e *env) *cobra.Command {
	var server, url, description string
	var events []string
	cmd := &cobra.Command{
		Use:   "create --url URL [--event TYPE]...",
		Short: "Register an endpoint and print its signing secret, shown this once",
		Example: `  herald webhooks create --url https://crm.example.com/hooks/herald --event delivery.finished --description CRM
  herald webhooks create --url https://crm.example.com/hooks/herald      # every event type`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			ep, err := c.CreateWebhook(cmd.Context(), heraldtype.WebhookEndpointInput{URL: url, Description: description, Events: events})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "endpoint %s registered (%s)\nsecret: %s\n\nThe secret is not shown again: keep it where the receiver reads it.\n",
				printable(ep.ID), eventsText(ep.Events), ep.Secret)
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "where the messages are POSTed (http or https, a public address)")
	f.StringVar(&description, "description", "", "a note about the endpoint")
	f.StringArrayVar(&events, "event", nil, "an event type it receives (repeatable; none: every type)")
	return cmd
}

func newWebhooksUpdateCmd(e *env) *cobra.Command {
	var server, url, description string
	var events []string
	var allEvents, enable, disable bool
	cmd := &cobra.Command{
		Use:   "update ID [flags]",
		Short: "Change an endpoint: its URL, description, event types, or enable or disable it",
		Long: `Change an endpoint; what no flag names is left as it is. Enabling a disabled endpoint
sends the messages held while it was disabled, in order.`,
		Example: "  herald webhooks update wh_01J… --enable\n  herald webhooks update wh_01J… --event delivery.finished\n  herald webhooks update wh_01J… --all-events",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var u heraldtype.WebhookEndpointUpdate
			f := cmd.Flags()
			if f.Changed("url") {
				u.URL = &url
			}
			if f.Changed("description") {
				u.Description = &description
			}
			switch {
			case allEvents && f.Changed("event"):
				return fmt.Errorf("--all-events and --event cannot go together")
			case allEvents:
				u.Events = &[]string{}
			case f.Changed("event"):
				u.Events = &events
			}
			switch {
			case enable && disable:
				return fmt.Errorf("--enable and --disable cannot go together")
			case enable, disable:
				u.Enabled = &enable
			}
			if u == (heraldtype.WebhookEndpointUpdate{}) {
				return fmt.Errorf("nothing to change: give --url, --description, --event, --all-events, --enable or --disable")
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			ep, err := c.UpdateWebhook(cmd.Context(), args[0], u)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "endpoint %s updated: %s, %s\n", printable(ep.ID), eventsText(ep.Events), endpointState(ep))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "a new URL")
	f.StringVar(&description, "description", "", "a new description")
	f.StringArrayVar(&events, "event", nil, "the event types it receives (repeatable; replaces the list)")
	f.BoolVar(&allEvents, "all-events", false, "receive every event type")
	f.BoolVar(&enable, "enable", false, "enable it (its held messages are sent)")
	f.BoolVar(&disable, "disable", false, "disable it (its messages are held until it is enabled)")
	return cmd
}

func newWebhooksDeleteCmd(e *env) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete endpoints and their messages",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := c.DeleteWebhook(cmd.Context(), id); err != nil {
					return fmt.Errorf("endpoint %s: %w", printable(id), err)
				}
				fmt.Fprintf(e.stdout, "deleted endpoint %s\n", printable(id))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}

func newWebhooksRotateCmd(e *env) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "rotate ID",
		Short: "Give an endpoint a new signing secret and print it, shown this once",
		Long: `Give an endpoint a new signing secret and print it, shown this once. The previous
secret keeps signing beside the new one until the time printed (webhooks.rotation_overlap),
so the receiver can switch to the new one in between.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			ep, err := c.RotateWebhookSecret(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "endpoint %s has a new secret\nsecret: %s\n", printable(ep.ID), ep.Secret)
			if ep.PreviousSecretUntil != nil {
				fmt.Fprintf(e.stdout, "the previous secret signs too until %s\n", ep.PreviousSecretUntil.UTC().Format(time.RFC3339))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}

func newWebhooksTestCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test ID",
		Short: "Send an endpoint a webhook.test event now and print what it answered",
		Long: `Send an endpoint one webhook.test event now, signed like every message, and print
what it answered. The test is sent once: not queued, not retried, whatever the endpoint's
event types and even while it is disabled, and it changes nothing about the endpoint.
The command fails (exit status 1) when the endpoint did not answer 2xx.`,
		Example: "  herald webhooks test wh_dev",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			res, err := c.TestWebhook(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(e.stdout, res); err != nil {
					return err
				}
			} else if res.OK {
				fmt.Fprintf(e.stdout, "ok: answered %d in %d ms (event %s)\n", res.Status, res.DurationMS, printable(res.EventID))
			}
			if !res.OK {
				return fmt.Errorf("the endpoint failed the test after %d ms: %s (event %s)", res.DurationMS, printable(res.Error), printable(res.EventID))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newWebhooksMessagesCmd(e *env) *cobra.Command {
	var server, state, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "messages ID",
		Short:   "List an endpoint's messages, newest first (--state dead: its dead letter list)",
		Example: "  herald webhooks messages wh_dev\n  herald webhooks messages wh_dev --state dead",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListWebhookMessages(cmd.Context(), args[0],
				heraldtype.WebhookMessageFilter{State: heraldtype.WebhookMessageState(state), Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SEQ\tEVENT\tTYPE\tSTATE\tATTEMPTS\tOCCURRED\tLAST STATUS\tLAST ERROR")
			for _, m := range page.Messages {
				status := "—"
				if m.LastStatus != 0 {
					status = fmt.Sprint(m.LastStatus)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", m.Seq, printable(m.EventID), printable(m.Type), m.State, m.Attempt,
					m.OccurredAt.UTC().Format(time.RFC3339), status, printable(m.LastError))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printMore(e.stdout, page.NextCursor)
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "only this state: pending, leased, sent or dead")
	f.StringVar(&cursor, "cursor", "", "continue after a previous page")
	f.IntVar(&limit, "limit", 50, "page size (max 500)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newWebhooksReplayCmd(e *env) *cobra.Command {
	var server string
	var seqs []int64
	cmd := &cobra.Command{
		Use:   "replay ID [--seq N]...",
		Short: "Send an endpoint's dead messages again, with their event ids",
		Long: `Send an endpoint's dead messages again — those --seq names, or every one — each with
its event id (webhook-id) unchanged and a new retry window.`,
		Example: "  herald webhooks replay wh_dev\n  herald webhooks replay wh_dev --seq 42 --seq 43",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			res, err := c.ReplayWebhookMessages(cmd.Context(), args[0], seqs)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "replayed %s\n", count(res.Replayed, "message", "messages"))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().Int64SliceVar(&seqs, "seq", nil, "a dead message's seq (repeatable; none: every dead message)")
	return cmd
}
