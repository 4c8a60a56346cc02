package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Setup commands (issue 32 item 6): the notifications a trigger made, and
// what became of them (herald send makes them).

func newNotificationsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notifications",
		Short: "Show notifications and what became of them on each channel",
	}
	cmd.AddCommand(newNotificationsGetCmd(e), newNotificationsListCmd(e), newNotificationsCancelCmd(e))
	return cmd
}

func newNotificationsGetCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "get ID",
		Short:   "Show a notification: its status, and each delivery with its attempts",
		Example: "  herald notifications get 01JDQ8ZV4YB3K6G3W6M1T2N5PQ",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			n, err := c.GetNotification(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, n)
			}
			return printNotification(e.stdout, n)
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func printNotification(w io.Writer, n heraldclient.NotificationStatus) error {
	if err := printFields(w, []field{
		{"id", printable(n.ID)}, {"user", printable(n.UserID)}, {"type", printable(n.Type)},
		{"title", printable(n.Title)}, {"body", printable(n.Body)}, {"data", keyValues(n.Data)},
		{"status", strings.TrimSuffix(string(n.Status)+" ("+printable(n.Reason)+")", " ()")},
		{"channels", channelStatus(n.ChannelStatus)}, {"priority", string(n.Priority)},
		{"guarantee", string(n.Guarantee)}, {"dedupe key", printable(n.DedupeKey)},
		{"cancellation key", printable(n.CancellationKey)},
		{"send at", timeOrEmpty(&n.SendAt)}, {"created", timeOrEmpty(&n.CreatedAt)},
	}); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", count(len(n.Deliveries), "delivery", "deliveries")+":")
	if len(n.Deliveries) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCHANNEL\tDEVICE\tSTATE\tATTEMPT\tERROR\tPROVIDER ID")
	for _, d := range n.Deliveries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", d.ID, printable(string(d.Channel)), printable(d.DeviceID),
			d.State, d.Attempt, d.MaxAttempts, printable(d.LastErrorCode), printable(d.ProviderMessageID))
	}
	return tw.Flush()
}

// channelStatus renders a notification's status per channel, sorted:
// "in_app SENT, push DEFERRED".
func channelStatus(m map[heraldtype.Channel]heraldtype.HistoryStatus) string {
	var parts []string
	for _, ch := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, printable(string(ch))+" "+string(m[ch]))
	}
	return strings.Join(parts, ", ")
}

func newNotificationsListCmd(e *env) *cobra.Command {
	var server, from, to string
	var f heraldtype.HistoryFilter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List notifications, newest first, with their status",
		Long: `List notifications, newest first, with their status: PENDING, DEFERRED, SENT,
PARTIALLY_SENT, CANCELLED, RATE_LIMITED, USER_OPTED_OUT or FAILED, and the reason.

With --status a page examines at most the server's history_scan notifications
(2,000 by default), so it may list fewer than --limit, even none, and still end
with "more: --cursor …": go on with that cursor to look further back.`,
		Example: "  herald notifications list --user u1\n  herald notifications list --status FAILED --from 2026-11-01T00:00:00Z",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if f.From, err = parseTimeFlag("from", from); err != nil {
				return err
			}
			if f.To, err = parseTimeFlag("to", to); err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListNotifications(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUSER\tTYPE\tSTATUS\tREASON\tCHANNELS\tCREATED")
			for _, n := range page.Notifications {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(n.NotificationID), printable(n.UserID),
					printable(n.Type), n.Status, printable(n.Reason), channelStatus(n.ChannelStatus),
					n.CreatedAt.Format(time.RFC3339))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printMore(e.stdout, page.NextCursor)
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	fl := cmd.Flags()
	fl.StringVar(&f.UserID, "user", "", "one user's notifications")
	fl.StringVar(&f.Type, "type", "", "notification type")
	fl.StringVar((*string)(&f.Status), "status", "", "PENDING, DEFERRED, SENT, PARTIALLY_SENT, RATE_LIMITED, USER_OPTED_OUT or FAILED")
	fl.StringVar(&from, "from", "", "created at or after (RFC 3339)")
	fl.StringVar(&to, "to", "", "created before (RFC 3339)")
	fl.StringVar(&f.Cursor, "cursor", "", "continue after a previous page")
	fl.IntVar(&f.Limit, "limit", 50, "page size (max 200)")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newNotificationsCancelCmd(e *env) *cobra.Command {
	var server string
	var r heraldclient.CancelRequest
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel [ID]",
		Short: "Cancel notifications not sent yet, by id or by cancellation key",
		Long: `Cancel a notification (by its id) or every notification triggered with a
cancellation key (--key; with --user only that user's). What is not sent yet is
never sent; a delivery being sent is waited for, and reported sent if it was.
Each delivery is listed with what became of it: cancelled, sent, not_sent or
in_flight (still being sent when the server stopped waiting).`,
		Example: "  herald notifications cancel 01JDQ8ZV4YB3K6G3W6M1T2N5PQ\n  herald notifications cancel --key order-1042 --user u1",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				r.NotificationID = args[0]
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			res, err := c.Cancel(cmd.Context(), r)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, res)
			}
			fmt.Fprintf(e.stdout, "%s: cancelled %d, sent %d, not sent %d, in flight %d\n",
				count(len(res.NotificationIDs), "notification", "notifications"), res.Cancelled, res.Sent, res.NotSent, res.InFlight)
			if len(res.Deliveries) == 0 {
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DELIVERY\tNOTIFICATION\tCHANNEL\tSTATE\tOUTCOME")
			for _, d := range res.Deliveries {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", d.ID, printable(d.NotificationID), d.Channel, d.State, d.Outcome)
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.CancellationKey, "key", "", "cancel the notifications triggered with this cancellation key")
	f.StringVar(&r.UserID, "user", "", "with --key: only this user's (default: every user's)")
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}
