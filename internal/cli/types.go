package cli

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Setup commands (issue 32 item 6): notification types.

func newTypesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "types",
		Short: "Declare and show notification types: their channels, priority and delivery policy",
	}
	cmd.AddCommand(newTypesListCmd(e), newTypesGetCmd(e), newTypesPutCmd(e))
	return cmd
}

func newTypesListCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the declared types",
		Example: "  herald types list",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			ts, err := c.ListTypes(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, map[string]any{"types": ts})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCHANNELS\tPRIORITY\tGUARANTEE\tDEDUPE\tQUIET HOURS\tDAILY CAP\tCRITICAL\tTRANSACTIONAL\tSOURCE")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(t.Name), joinChannels(t.Channels),
					t.Priority, t.Guarantee, printable(t.DedupeWindow), onOff(t.QuietHours), capMode(t.CountsTowardCap),
					strconv.FormatBool(t.Critical), strconv.FormatBool(t.Transactional), t.Source)
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newTypesGetCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "get TYPE",
		Short: "Show a type's configuration as it applies now",
		Long: `Show a type's configuration as it applies now: declared here, in the configuration
file, or the defaults for a type nobody declared (source "default").`,
		Example: "  herald types get order_shipped",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			t, err := c.GetType(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, t)
			}
			return printType(e.stdout, t)
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func printType(w io.Writer, t heraldclient.NotificationType) error {
	return printFields(w, []field{
		{"name", printable(t.Name)}, {"channels", joinChannels(t.Channels)}, {"priority", string(t.Priority)},
		{"guarantee", string(t.Guarantee)}, {"dedupe window", printable(t.DedupeWindow)},
		{"quiet hours", onOff(t.QuietHours)}, {"daily cap", capMode(t.CountsTowardCap)},
		{"critical", strconv.FormatBool(t.Critical)}, {"transactional", strconv.FormatBool(t.Transactional)},
		{"e-mail tracking", onOff(t.EmailTracking)}, {"digest", digestSummary(t.Digest)},
		{"escalation", escalationSummary(t.Escalate)}, {"source", t.Source},
		{"updated", timeOrEmpty(&t.UpdatedAt)},
	})
}

// digestSummary says a type's digest in one line: its window, key, the
// items that send it early and what happens to the first trigger.
func digestSummary(d *heraldclient.DigestConfig) string {
	if d == nil {
		return "off"
	}
	key := "per user"
	if d.Key != "" {
		key = "by " + printable(d.Key)
	}
	return fmt.Sprintf("%s %s, at most %d items, first %s", printable(d.Window), key, d.MaxItems, printable(d.First))
}

// escalationSummary says a type's escalation in one line: each step's
// wait, the receipt that makes it unnecessary and its channels.
func escalationSummary(steps []heraldclient.EscalationStep) string {
	if len(steps) == 0 {
		return "off"
	}
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = fmt.Sprintf("after %s unless %s: %s", printable(st.After), printable(string(st.Unless)), joinChannels(st.Channels))
	}
	return strings.Join(parts, "; ")
}

// typeFlags are the flags of types put that build its body.
var typeFlags = []string{"channel", "priority", "dedupe-window", "quiet-hours", "counts-toward-cap", "guarantee",
	"critical", "transactional", "email-tracking"}

func newTypesPutCmd(e *env) *cobra.Command {
	var server, file string
	var in heraldclient.TypeConfig
	var channels []string
	var quietHours, countsTowardCap, asJSON bool
	cmd := &cobra.Command{
		Use:   "put TYPE",
		Short: "Declare a type, or replace its declaration",
		Long: `Declare a type, or replace its declaration; it then overrides the configuration
file's declaration of the same type on every instance. A setting left out takes its default:
push, NORMAL priority, at_least_once, a 1h de-duplication window, quiet hours respected, not
counted toward the daily cap.`,
		Example: `  herald types put promo --channel push --channel email --counts-toward-cap
  herald types put password_reset --channel email --critical --transactional
  herald types put order_shipped -f order_shipped.json
  herald types put comment -f comment.json   # {"digest":{"window":"10m","key":"{{.post_id}}","title":"{{.Count}} new comments"}}`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, ok, err := bodyFromFile(cmd, file, typeFlags...)
			if err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var t heraldclient.NotificationType
			if ok {
				err = sendFile(cmd.Context(), c, http.MethodPut, apiPath("/v1/types/%s", args[0]), nil, raw, &t)
			} else {
				in.Channels = channelList(channels)
				if cmd.Flags().Changed("quiet-hours") {
					in.QuietHours = &quietHours
				}
				if cmd.Flags().Changed("counts-toward-cap") {
					in.CountsTowardCap = &countsTowardCap
				}
				t, err = c.PutType(cmd.Context(), args[0], in)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, t)
			}
			return printType(e.stdout, t)
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringSliceVar(&channels, "channel", nil, "channel when a trigger names none: push, in_app, email, sms (repeatable)")
	f.StringVar((*string)(&in.Priority), "priority", "", "LOW, NORMAL or HIGH")
	f.StringVar(&in.DedupeWindow, "dedupe-window", "", "how long a dedupe key blocks a repeat, e.g. 30m")
	f.BoolVar(&quietHours, "quiet-hours", true, "hold deliveries during the user's quiet hours")
	f.BoolVar(&countsTowardCap, "counts-toward-cap", false, "count every notification of the type toward the user's daily cap (true), or none (false); unset, only rules' and campaigns' count")
	f.StringVar((*string)(&in.Guarantee), "guarantee", "", "at_least_once, or at_most_once (never sent twice, may be lost)")
	f.BoolVar(&in.Critical, "critical", false, "ignore the user's opt-outs, quiet hours and daily cap (security, account notices)")
	f.BoolVar(&in.Transactional, "transactional", false, "e-mails carry no unsubscribe link (receipts, password resets)")
	f.BoolVar(&in.EmailTracking, "email-tracking", false, "HTML e-mails get an open pixel and tracked links (opened, clicked receipts)")
	addFileFlag(cmd, &file, "the type")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// capMode renders a type's counts_toward_cap: on, off, or what an unset one
// means (rules' and campaigns' notifications count, triggers' do not).
func capMode(v *bool) string {
	if v == nil {
		return "rules+campaigns"
	}
	return onOff(*v)
}

// channelList turns --channel values into channels.
func channelList(names []string) []heraldtype.Channel {
	var chs []heraldtype.Channel
	for _, n := range names {
		chs = append(chs, heraldtype.Channel(n))
	}
	return chs
}

// joinChannels renders channels for a table: "push,email", "-" for none.
func joinChannels(chs []heraldtype.Channel) string {
	if len(chs) == 0 {
		return "-"
	}
	s := make([]string, len(chs))
	for i, c := range chs {
		s[i] = printable(string(c))
	}
	return strings.Join(s, ",")
}
