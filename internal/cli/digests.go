package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"

	"github.com/heraldhq/herald/heraldtype"
)

// newDigestsCmd inspects digests through a running server (issue 36).
func newDigestsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "digests",
		Short: "Inspect the digests of a running Herald",
	}
	cmd.AddCommand(newDigestsListCmd(e), newDigestsGetCmd(e))
	return cmd
}

func newDigestsListCmd(e *env) *cobra.Command {
	var server, user, typ, state, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List digests, newest first",
		Example: "  herald digests list --user u1\n  herald digests list --state open --type comment",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListDigests(cmd.Context(), heraldtype.DigestFilter{UserID: user, Type: typ, State: state,
				Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUSER\tTYPE\tKEY\tSTATE\tCLOSES\tITEMS\tNOTIFICATION")
			for _, d := range page.Digests {
				n := d.NotificationID
				if n == "" {
					n = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, printable(d.UserID), printable(d.Type), printable(d.Key),
					d.State, d.CloseAt.Format(time.RFC3339), d.Items-d.Cancelled, n)
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
	f.StringVar(&state, "state", "", "open, closed, sent or failed")
	addPageFlags(cmd, &cursor, &limit, &asJSON)
	return cmd
}

func newDigestsGetCmd(e *env) *cobra.Command {
	return newGetJSONCmd(e, "get ID", "Show one digest and the triggers it holds (JSON)", (*heraldclient.Client).GetDigest)
}
