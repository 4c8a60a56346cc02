package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func newRemindersCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reminders",
		Short: "Inspect and cancel the reminders of a running Herald",
	}
	cmd.AddCommand(newRemindersListCmd(e), newRemindersGetCmd(e), newRemindersCancelCmd(e))
	return cmd
}

func newRemindersListCmd(e *env) *cobra.Command {
	var server, user, typ, state, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List reminders by key",
		Example: "  herald reminders list --user u1\n  herald reminders list --state stopped --type cart_reminder",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListReminders(cmd.Context(), heraldtype.ReminderFilter{UserID: user, Type: typ,
				State: heraldtype.ReminderState(state), Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tUSER\tTYPE\tSTATE\tNEXT\tSENT\tSTOPPED")
			for _, r := range page.Reminders {
				next := "-"
				if !r.NextAt.IsZero() {
					next = r.NextAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", printable(r.Key), printable(r.UserID), printable(r.Type),
					r.State, next, r.SentCount, r.StopReason)
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
	f.StringVar(&user, "user", "", "user id")
	f.StringVar(&typ, "type", "", "notification type")
	f.StringVar(&state, "state", "", "active or stopped")
	addPageFlags(cmd, &cursor, &limit, &asJSON)
	return cmd
}

func newRemindersGetCmd(e *env) *cobra.Command {
	return newGetJSONCmd(e, "get KEY", "Show one reminder (JSON)", (*heraldclient.Client).GetReminder)
}

func newRemindersCancelCmd(e *env) *cobra.Command {
	var server, user, typ string
	cmd := &cobra.Command{
		Use:   "cancel [KEY...]",
		Short: "Delete reminders by key, or stop every reminder of a user and/or type",
		Example: "  herald reminders cancel cart-42\n  herald reminders cancel --user u1\n" +
			"  herald reminders cancel --type cart_reminder",
		RunE: func(cmd *cobra.Command, args []string) error {
			bulk := user != "" || typ != ""
			if bulk == (len(args) > 0) {
				return fmt.Errorf("give reminder keys, or --user and/or --type")
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if bulk {
				n, err := c.CancelReminders(cmd.Context(), heraldclient.ReminderSelector{UserID: user, Type: typ})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "cancelled %s\n", count(n, "reminder", "reminders"))
				return nil
			}
			for _, key := range args {
				if err := c.CancelReminder(cmd.Context(), key); err != nil {
					return fmt.Errorf("reminder %s: %w", key, err)
				}
				fmt.Fprintf(e.stdout, "cancelled reminder %s\n", key)
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().StringVar(&user, "user", "", "stop every reminder of this user")
	cmd.Flags().StringVar(&typ, "type", "", "stop every reminder of this type")
	return cmd
}
