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

Name the notification (--notification), a rule's run (--rule and --rule-run,
as "herald rules runs" lists them: the notification it wrote for the user, or
why none — outside its audience, not reached yet, the run failed), or a type
(--type) to explain the user's newest notification of that type, optionally
created since a time.`,
		Example: "  herald why u1 --type promo\n  herald why u1 --notification 01JDQ8ZV4YB3K6G3W6M1T2N5PQ\n  herald why u1 --type promo --since 2026-11-27T00:00:00Z --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if p.Since, err = parseTimeFlag("since", since); err != nil {
				return err
			}
			if p.Type == "" && p.NotificationID == "" && p.Rule == "" && p.RuleRun == "" {
				return fmt.Errorf("name what to explain: --type TYPE, --notification ID, or --rule NAME --rule-run ID")
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
	fl.StringVar(&p.Rule, "rule", "", "with --rule-run, explain what this rule's run did for the user")
	fl.StringVar(&p.RuleRun, "rule-run", "", "the run of --rule to explain")
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
		{"rule", printable(x.Rule)}, {"rule run", printable(x.RuleRun)},
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
