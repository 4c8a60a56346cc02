package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldtype"
)

func newCampaignsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "campaigns",
		Short: "Inspect and run the campaigns of a running Herald",
	}
	cmd.AddCommand(newCampaignsListCmd(e), newCampaignsGetCmd(e), newCampaignsRunCmd(e))
	return cmd
}

func newCampaignsListCmd(e *env) *cobra.Command {
	var server, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List campaigns by name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := cl.ListCampaigns(cmd.Context(), heraldtype.CampaignFilter{Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSCHEDULE\tAUDIENCE\tNEXT\tPAUSED\tLAST RUN")
			for _, c := range page.Campaigns {
				next := "-"
				if !c.NextAt.IsZero() {
					next = c.NextAt.Format(time.RFC3339)
				}
				sched := c.Schedule.Cron
				if sched == "" {
					sched = c.Schedule.RRule
				}
				if c.Schedule.TimeZone != "" {
					sched += " " + c.Schedule.TimeZone
				}
				if c.LocalTime {
					sched += " (local time)"
				}
				aud := "all"
				if !c.Audience.All {
					aud = "active " + c.Audience.ActiveWithin.Std().String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", printable(c.Name), printable(sched), aud, next, c.Paused, printable(c.LastRunID))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printMore(e.stdout, page.NextCursor)
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	addPageFlags(cmd, &cursor, &limit, &asJSON)
	return cmd
}

func newCampaignsGetCmd(e *env) *cobra.Command {
	var server string
	var runs bool
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one campaign (JSON), or with --runs its latest runs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if !runs {
				out, err := c.GetCampaign(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return printJSON(e.stdout, out)
			}
			page, err := c.ListCampaignRuns(cmd.Context(), heraldtype.CampaignRunFilter{Campaign: args[0]})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATE\tRECIPIENTS\tENQUEUED\tSKIPPED\tFETCH FAILED\tRENDER FAILED\tSTARTED\tLAST ERROR")
			for _, r := range page.Runs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", printable(r.ID), r.State, r.Recipients, r.Enqueued,
					r.Skipped, r.FetchFailed, r.RenderFailed, r.StartedAt.Format(time.RFC3339), printable(r.LastError))
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().BoolVar(&runs, "runs", false, "list the campaign's runs, newest first")
	return cmd
}

func newCampaignsRunCmd(e *env) *cobra.Command {
	var server, run string
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a campaign now, or run one of its runs again (reaching only whom it missed)",
		Example: "  herald campaigns run daily-reco\n" +
			"  herald campaigns run daily-reco --run 20261207T000000Z   # recovery after a failed fetch",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			out, err := c.RunCampaign(cmd.Context(), args[0], run)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "campaign %s: run %s started; follow it with herald campaigns get %s --runs\n",
				printable(args[0]), printable(out.ID), printable(args[0]))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().StringVar(&run, "run", "", "the id of a finished run to run again")
	return cmd
}
