package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// herald why (issue 34 item 2): why a user did or did not get a
// notification, through heraldclient like the other commands for a
// running server.

func newWhyCmd(e *env) *cobra.Command {
	var server, since string
	var p heraldclient.ExplainParams
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "why USER",
		Short: "Explain why a user did or did not get a notification",
		Long: `Explain why a user did or did not get a notification, from what Herald recorded:
sent, still pending, deferred by quiet hours (until when), opted out (which
preference), a duplicate (of which notification), over the daily cap (which
notifications counted), no device or an invalidated one (since when, why), no
address or a suppressed one, or the provider's failure (its answer).

Name the notification (--notification), a trigger (--idempotency-key: the
user's newest notification it created, among their newest 50), a rule's run (--rule and --rule-run,
as "herald rules runs" lists them: the notification it wrote for the user, or
why none — outside its audience, not reached yet, the run failed), an event
(--event, with --event-source for a Kafka topic's event and --event-namespace
for another API key's: what each rule decided on it — not detected and why,
stale — and the notification the runs it started wrote for the user, or why
none), or a type (--type) to explain the user's newest notification of that
type, optionally created since a time. When several are named, --notification
wins over --rule, which wins over --event, then --idempotency-key, then --type.

An event posted to POST /v1/events is recorded under the posting API key's id:
without --event-namespace it is looked up under the calling key's own, and only
an admin key may name another's. Herald records only the events some rule
considered, for rules.event_retention.`,
		Example: "  herald why u1 --type promo\n  herald why u1 --notification 01JDQ8ZV4YB3K6G3W6M1T2N5PQ\n" +
			"  herald why u1 --event ev-1 --event-source product.inventory.v1\n  herald why u1 --type promo --since 2026-11-27T00:00:00Z --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if p.Since, err = parseTimeFlag("since", since); err != nil {
				return err
			}
			if p.Event == "" && (p.EventSource != "" || p.EventNamespace != "") {
				return fmt.Errorf("--event-source and --event-namespace need --event ID")
			}
			if p.Type == "" && p.NotificationID == "" && p.IdempotencyKey == "" && p.Rule == "" && p.RuleRun == "" && p.Event == "" {
				return fmt.Errorf("name what to explain: --type TYPE, --notification ID, --idempotency-key KEY, --rule NAME --rule-run ID, or --event ID")
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			x, err := c.Explain(cmd.Context(), args[0], p)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, x)
			}
			return printExplanation(e.stdout, x)
		},
	}
	addServerFlag(cmd, e, &server)
	fl := cmd.Flags()
	fl.StringVar(&p.Type, "type", "", "explain the user's newest notification of this type")
	fl.StringVar(&p.NotificationID, "notification", "", "explain this notification of the user")
	fl.StringVar(&p.IdempotencyKey, "idempotency-key", "", "explain the notification the trigger with this Idempotency-Key created for the user")
	fl.StringVar(&p.Rule, "rule", "", "with --rule-run, explain what this rule's run did for the user")
	fl.StringVar(&p.RuleRun, "rule-run", "", "the run of --rule to explain")
	fl.StringVar(&p.Event, "event", "", "explain what this event (its id) did for the user")
	fl.StringVar(&p.EventSource, "event-source", "", "with --event, the Kafka topic it was read from (empty: posted to the API)")
	fl.StringVar(&p.EventNamespace, "event-namespace", "", "with --event, the id of the API key that posted it (empty: the calling key's)")
	fl.StringVar(&since, "since", "", "with --type, only notifications created at or after (RFC 3339)")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// printExplanation writes the answer first, then the notification it is
// about, then each finding with what the records hold.
func printExplanation(w io.Writer, x heraldtype.Explanation) error {
	fmt.Fprintf(w, "%s\n\n", printable(x.Message))
	if err := printFields(w, []field{
		{"verdict", x.Verdict}, {"user", printable(x.UserID)}, {"type", printable(x.Type)},
		{"event", printable(x.Event)}, {"rule", printable(x.Rule)}, {"rule run", printable(x.RuleRun)},
		{"notification", printable(x.NotificationID)}, {"status", string(x.Status)}, {"created", timeOrEmpty(&x.CreatedAt)},
	}); err != nil {
		return err
	}
	if len(x.Reasons) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", count(len(x.Reasons), "finding", "findings")+":")
	for _, r := range x.Reasons {
		fmt.Fprintf(w, "  %s\n", printable(r.Message))
		var detail []string
		add := func(name, v string) {
			if v != "" {
				detail = append(detail, name+" "+printable(v))
			}
		}
		add("code", r.Code)
		add("rule", r.Rule)
		add("channel", string(r.Channel))
		if r.DeliveryID != 0 {
			add("delivery", strconv.FormatInt(r.DeliveryID, 10))
		}
		add("device", r.DeviceID)
		add("address", r.Address)
		add("state", string(r.State))
		add("error_code", r.ErrorCode)
		add("error", r.Error)
		add("at", timeOrEmpty(r.At))
		add("until", timeOrEmpty(r.Until))
		add("notifications", strings.Join(r.NotificationIDs, ","))
		fmt.Fprintf(w, "    %s\n", strings.Join(detail, " · "))
	}
	return nil
}
