package cli

import (
	"fmt"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func newEventsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Inspect and replay the Kafka records Herald gave up on",
	}
	cmd.AddCommand(newEventsDeadCmd(e), newEventsReplayCmd(e))
	return cmd
}

func newEventsDeadCmd(e *env) *cobra.Command {
	var server, topic, kind, replayed, from, to, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "dead [ID]",
		Short:   "List dead events newest first, or show one (JSON)",
		Example: "  herald events dead\n  herald events dead --topic notification.push.v1 --replayed no\n  herald events dead 42",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				id, err := parseDeadEventID(args[0])
				if err != nil {
					return err
				}
				d, err := c.GetDeadEvent(cmd.Context(), id)
				if err != nil {
					return err
				}
				return printJSON(e.stdout, d)
			}
			df := heraldtype.DeadEventFilter{Topic: topic, Kind: kind, Replayed: replayed, Cursor: cursor, Limit: limit}
			if df.From, err = parseTimeFlag("from", from); err != nil {
				return err
			}
			if df.To, err = parseTimeFlag("to", to); err != nil {
				return err
			}
			page, err := c.ListDeadEvents(cmd.Context(), df)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTOPIC\tPARTITION\tOFFSET\tKIND\tATTEMPTS\tREPLAYED\tERROR")
			for _, d := range page.DeadEvents {
				replayed := "-"
				if d.ReplayedAt != nil {
					replayed = d.ReplayedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\n", d.ID, printable(d.Topic), d.Partition, d.Offset, d.Kind,
					d.Attempts, replayed, printable(d.Error))
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
	f.StringVar(&topic, "topic", "", "the record's topic")
	f.StringVar(&kind, "kind", "", "notifications, events, interests or render_failed")
	f.StringVar(&replayed, "replayed", "", "yes or no")
	f.StringVar(&from, "from", "", "given up on at or after (RFC 3339)")
	f.StringVar(&to, "to", "", "given up on before (RFC 3339)")
	addPageFlags(cmd, &cursor, &limit, &asJSON)
	return cmd
}

func newEventsReplayCmd(e *env) *cobra.Command {
	var server, topic, kind, from, to string
	var all, dryRun bool
	cmd := &cobra.Command{
		Use:   "replay [ID...]",
		Short: "Feed dead events back: by id, or --all of a topic or kind (--dry-run counts them)",
		Long: `Feed dead events back: the call each record made is made again. --all takes every dead event
not yet replayed of --topic and --kind; records that never decoded cannot be replayed and are
skipped (the producer must send them again); --dry-run counts what would be replayed. The command
exits non-zero when any replay fails.`,
		Example: "  herald events replay 42 43\n  herald events replay --all --topic notification.push.v1 --dry-run\n" +
			"  herald events replay --all --kind events",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return fmt.Errorf("give dead event ids, or --all (with --topic and/or --kind)")
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if all {
				sel := heraldclient.DeadEventSelector{Topic: topic, Kind: kind, DryRun: dryRun}
				if sel.From, err = parseTimeFlag("from", from); err != nil {
					return err
				}
				if sel.To, err = parseTimeFlag("to", to); err != nil {
					return err
				}
				return replayAllDeadEvents(cmd, e, c, sel)
			}
			// Every id is tried; the command fails if any replay did.
			failed := 0
			for _, id := range args {
				n, err := parseDeadEventID(id)
				if err == nil {
					_, err = c.ReplayDeadEvent(cmd.Context(), n)
				}
				if err != nil {
					failed++
					fmt.Fprintf(e.stdout, "dead event %s: %s\n", printable(id), printable(errorText(err)))
					continue
				}
				fmt.Fprintf(e.stdout, "replayed dead event %s\n", printable(id))
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d replays failed", failed, len(args))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.BoolVar(&all, "all", false, "every dead event not yet replayed that matches --topic and --kind")
	f.StringVar(&topic, "topic", "", "with --all: only this topic's")
	f.StringVar(&kind, "kind", "", "with --all: only this kind's")
	f.StringVar(&from, "from", "", "with --all: only those given up on at or after (RFC 3339)")
	f.StringVar(&to, "to", "", "with --all: only those given up on before (RFC 3339)")
	f.BoolVar(&dryRun, "dry-run", false, "with --all: only count them")
	return cmd
}

// replayAllDeadEvents is events replay --all: it says what was replayed,
// what failed (by id) and what was skipped because it cannot be replayed
// (records that never decoded), and fails when any replay failed, so a
// script sees it. A dry run counts only what a replay would make again
// (issue 30 item 4).
func replayAllDeadEvents(cmd *cobra.Command, e *env, c *heraldclient.Client, sel heraldclient.DeadEventSelector) error {
	out, err := c.ReplayDeadEvents(cmd.Context(), sel)
	if err != nil {
		return err
	}
	skipped := ""
	if out.Skipped > 0 {
		skipped = fmt.Sprintf("; %s cannot be replayed (never decoded: the producer must send them again)",
			count(out.Skipped, "dead event", "dead events"))
	}
	if sel.DryRun {
		fmt.Fprintf(e.stdout, "would replay %s%s\n", count(out.Matched-out.Skipped, "dead event", "dead events"), skipped)
		return nil
	}
	fmt.Fprintf(e.stdout, "replayed %s, %s failed%s\n", count(out.Replayed, "dead event", "dead events"), strconv.Itoa(out.Failed), skipped)
	ids := make([]int64, 0, len(out.Errors))
	for id := range out.Errors {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(e.stdout, "  %d: %s\n", id, printable(out.Errors[id]))
	}
	if out.Failed > 0 {
		return fmt.Errorf("%d of %d replays failed", out.Failed, out.Replayed+out.Failed)
	}
	return nil
}

// parseDeadEventID reads a dead event's id: a positive integer.
func parseDeadEventID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not a dead event id", s)
	}
	return id, nil
}
