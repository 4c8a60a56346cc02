package cli

import (
	"fmt"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func newRulesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Manage the event rules of a running Herald",
	}
	cmd.AddCommand(newRulesListCmd(e), newRulesGetCmd(e), newRulesPutCmd(e), newRulesDeleteCmd(e), newRulesDryRunCmd(e), newRulesRunsCmd(e))
	return cmd
}

func newRulesListCmd(e *env) *cobra.Command {
	var server, source, event, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List rules by name",
		Example: "  herald rules list\n  herald rules list --source product.inventory.v1 --event PRICE_CHANGE",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListRules(cmd.Context(), heraldtype.RuleFilter{Source: source, Event: event, Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tEVENT\tTYPE\tENABLED")
			for _, r := range page.Rules {
				source := r.Source.KafkaTopic
				if source == "" {
					source = "http"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", printable(r.Name), printable(source), printable(r.When.Event),
					printable(r.Notify.Type), !r.Disabled)
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
	f.StringVar(&source, "source", "", "a Kafka topic, or http")
	f.StringVar(&event, "event", "", "event name")
	addPageFlags(cmd, &cursor, &limit, &asJSON)
	return cmd
}

func newRulesGetCmd(e *env) *cobra.Command {
	return newGetJSONCmd(e, "get NAME", "Show one rule (JSON)", (*heraldclient.Client).GetRule)
}

func newRulesPutCmd(e *env) *cobra.Command {
	var server, file string
	cmd := &cobra.Command{
		Use:     "put NAME -f rule.json",
		Short:   "Create or replace a rule from its JSON (PUT /v1/rules/NAME's body)",
		Example: "  herald rules put price-drop -f price-drop.json\n  cat rule.json | herald rules put price-drop -f -",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := readJSONFile(cmd, file)
			if err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var r heraldtype.Rule
			if err := sendFile(cmd.Context(), c, http.MethodPut, apiPath("/v1/rules/%s", args[0]), nil, body, &r); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "rule %s saved (%s, %s)\n", printable(r.Name), printable(r.When.Event), printable(r.Notify.Type))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the rule's JSON (- for standard input)")
	cmd.MarkFlagRequired("file")
	return cmd
}

func newRulesDeleteCmd(e *env) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete rules",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := c.DeleteRule(cmd.Context(), name); err != nil {
					return fmt.Errorf("rule %s: %w", name, err)
				}
				fmt.Fprintf(e.stdout, "deleted rule %s\n", printable(name))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}

func newRulesDryRunCmd(e *env) *cobra.Command {
	var server, file string
	cmd := &cobra.Command{
		Use:   "dry-run NAME -f event.json",
		Short: "Show what a rule would do with an event — detection, audience, message — without sending",
		Example: `  echo '{"name":"PRICE_CHANGE","subject":"product:42","data":{"product_name":"Kettle","previous_price":"10000","current_price":"8500"}}' \
    | herald rules dry-run price-drop -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := readJSONFile(cmd, file)
			if err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var out heraldclient.RuleDryRun
			if err := sendFile(cmd.Context(), c, http.MethodPost, apiPath("/v1/rules/%s/dry-run", args[0]), nil, body, &out); err != nil {
				return err
			}
			return printJSON(e.stdout, out)
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().StringVarP(&file, "file", "f", "", "the event's JSON, POST /v1/events' body (- for standard input)")
	cmd.MarkFlagRequired("file")
	return cmd
}

func newRulesRunsCmd(e *env) *cobra.Command {
	var server, cursor string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "runs NAME",
		Short:   "List a rule's runs, newest first: each event it fired on and how far its fan-out went",
		Example: "  herald rules runs price-drop",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListRuleRuns(cmd.Context(), heraldtype.RuleRunFilter{Rule: args[0], Cursor: cursor, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tEVENT\tSUBJECT\tSTATE\tRECIPIENTS\tENQUEUED\tCREATED\tLAST ERROR")
			for _, r := range page.Runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", printable(r.ID), printable(r.Event), printable(r.Subject),
					r.State, r.Recipients, r.Enqueued, r.CreatedAt.Format(time.RFC3339), printable(r.LastError))
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
