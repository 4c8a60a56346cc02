package cli

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Setup commands (issue 32 item 6): a user's preferences and interests.

func newPreferencesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "preferences",
		Short: "Show and set what a user wants to receive, where and when",
	}
	cmd.AddCommand(newPreferencesGetCmd(e), newPreferencesPutCmd(e))
	return cmd
}

func newPreferencesGetCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "get USER",
		Short:   "Show a user's preferences",
		Example: "  herald preferences get u1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			p, err := c.GetPreferences(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, p)
			}
			return printPreferences(e.stdout, p)
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func printPreferences(w io.Writer, p heraldtype.Preferences) error {
	quiet, limit := "none", "the server's"
	if p.QuietHours != nil {
		quiet = printable(p.QuietHours.Start) + "-" + printable(p.QuietHours.End)
	}
	if p.DailyCap > 0 {
		limit = fmt.Sprint(p.DailyCap)
	}
	opted := "none"
	if len(p.OptedOutChannels) > 0 {
		opted = joinChannels(p.OptedOutChannels)
	}
	if err := printFields(w, []field{
		{"user", printable(p.UserID)}, {"timezone", printable(p.Timezone)}, {"opted out of", opted},
		{"quiet hours", quiet}, {"daily cap", limit}, {"updated", timeOrEmpty(&p.UpdatedAt)},
	}); err != nil {
		return err
	}
	if len(p.Types) == 0 {
		fmt.Fprintln(w, "\nevery type on, on every channel")
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tON\tCHANNELS\tUNSUBSCRIBED")
	for _, name := range slices.Sorted(maps.Keys(p.Types)) {
		tp := p.Types[name]
		channels := "any"
		if len(tp.Channels) > 0 {
			channels = joinChannels(tp.Channels)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(name), onOff(!tp.Disabled), channels, timeOrEmpty(tp.UnsubscribedAt))
	}
	return tw.Flush()
}

// preferenceFlags are the flags of preferences put that build its body.
var preferenceFlags = []string{"opt-out", "quiet-hours", "daily-cap", "type-off", "type-channels"}

func newPreferencesPutCmd(e *env) *cobra.Command {
	var server, file, quiet string
	var optOut, typeOff, typeChannels []string
	var dailyCap int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "put USER",
		Short: "Replace a user's preferences",
		Long: `Replace a user's preferences as a whole: what is not given is cleared (every type
on, on every channel, no quiet hours, the server's daily cap). Quiet hours are in the user's
time zone.`,
		Example: `  herald preferences put u1 --type-off promo --opt-out sms --quiet-hours 22:00-08:00
  herald preferences put u1 --type-channels order_shipped=push,email --daily-cap 5
  herald preferences put u1 -f preferences.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, ok, err := bodyFromFile(cmd, file, preferenceFlags...)
			if err != nil {
				return err
			}
			var p heraldtype.Preferences
			if !ok {
				if p, err = preferencesFromFlags(optOut, typeOff, typeChannels, quiet, dailyCap); err != nil {
					return err
				}
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if ok {
				err = sendFile(cmd.Context(), c, http.MethodPut, apiPath("/v1/users/%s/preferences", args[0]), nil, raw, &p)
			} else {
				p, err = c.PutPreferences(cmd.Context(), args[0], p)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, p)
			}
			return printPreferences(e.stdout, p)
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringSliceVar(&optOut, "opt-out", nil, "a channel the user refuses for every type (repeatable)")
	f.StringVar(&quiet, "quiet-hours", "", "a daily window HH:MM-HH:MM, e.g. 22:00-08:00")
	f.IntVar(&dailyCap, "daily-cap", 0, "the user's own daily cap (0: the server's)")
	f.StringArrayVar(&typeOff, "type-off", nil, "a type the user turned off (repeatable)")
	f.StringArrayVar(&typeChannels, "type-channels", nil, "TYPE=ch1,ch2: the only channels a type may use (repeatable)")
	addFileFlag(cmd, &file, "the preferences")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// preferencesFromFlags builds the body of preferences put from its flags.
// The server checks the values (channel names, times, limits).
func preferencesFromFlags(optOut, typeOff, typeChannels []string, quiet string, dailyCap int) (heraldtype.Preferences, error) {
	p := heraldtype.Preferences{OptedOutChannels: channelList(optOut), DailyCap: dailyCap}
	if quiet != "" {
		start, end, ok := strings.Cut(quiet, "-")
		if !ok {
			return p, fmt.Errorf("--quiet-hours %q: use HH:MM-HH:MM, e.g. 22:00-08:00", quiet)
		}
		p.QuietHours = &heraldtype.QuietHours{Start: start, End: end}
	}
	typ := func(name string) heraldtype.TypePreference {
		if p.Types == nil {
			p.Types = map[string]heraldtype.TypePreference{}
		}
		return p.Types[name]
	}
	for _, name := range typeOff {
		tp := typ(name)
		tp.Disabled = true
		p.Types[name] = tp
	}
	for _, v := range typeChannels {
		name, chs, ok := strings.Cut(v, "=")
		if !ok || name == "" || chs == "" {
			return p, fmt.Errorf("--type-channels %q: use TYPE=ch1,ch2, e.g. order_shipped=push,email", v)
		}
		tp := typ(name)
		tp.Channels = channelList(strings.Split(chs, ","))
		p.Types[name] = tp
	}
	return p, nil
}

func newInterestsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "interests",
		Short: "Record and list what users showed interest in: the audiences of event rules",
	}
	cmd.AddCommand(newInterestsRecordCmd(e), newInterestsListCmd(e))
	return cmd
}

func newInterestsRecordCmd(e *env) *cobra.Command {
	var server, file, at string
	var in heraldclient.InterestInput
	var data []string
	cmd := &cobra.Command{
		Use:   "record",
		Short: "Record that a user showed interest in a subject",
		Long: `Record that a user showed interest of some kind (viewed, clicked, added to cart,
watched) in a subject, such as a product. With --file, the JSON is one interest, or a batch:
{"interests": [{"user_id": …, "subject": …, "kind": …}, …]}.`,
		Example: `  herald interests record --user u1 --subject product:42 --kind VIEW
  herald interests record --user u1 --subject product:42 --kind WATCH --data target_price=8000
  herald interests record -f interests.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			raw, ok, err := bodyFromFile(cmd, file, "user", "subject", "kind", "at", "data")
			if err != nil {
				return err
			}
			if !ok {
				if in.UserID == "" || in.Subject == "" || in.Kind == "" {
					return fmt.Errorf("--user, --subject and --kind are required (or give interests with --file)")
				}
				if in.Data, err = parseKeyValues("data", data); err != nil {
					return err
				}
				t, err := parseTimeFlag("at", at)
				if err != nil {
					return err
				}
				if !t.IsZero() {
					in.At = &t
				}
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var n int
			if ok {
				var out struct {
					Recorded int `json:"recorded"`
				}
				err = sendFile(cmd.Context(), c, http.MethodPost, "/v1/interests", nil, raw, &out)
				n = out.Recorded
			} else {
				n, err = c.RecordInterests(cmd.Context(), in)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "recorded %s\n", count(n, "interest", "interests"))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&in.UserID, "user", "", "user id")
	f.StringVar(&in.Subject, "subject", "", "what the interest is in, e.g. product:42")
	f.StringVar(&in.Kind, "kind", "", "VIEW, CLICK, ADD_TO_CART, WATCH or a name of yours")
	f.StringVar(&at, "at", "", "when (RFC 3339; default now)")
	f.StringArrayVar(&data, "data", nil, "data entry key=value kept with the interest (repeatable)")
	addFileFlag(cmd, &file, "one interest, or a batch")
	return cmd
}

func newInterestsListCmd(e *env) *cobra.Command {
	var server string
	var f heraldtype.InterestFilter
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list USER",
		Short:   "List a user's interests by subject and kind",
		Example: "  herald interests list u1\n  herald interests list u1 --subject product:42",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.UserID = args[0]
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			page, err := c.ListInterests(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SUBJECT\tKIND\tAT\tDATA")
			for _, in := range page.Interests {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(in.Subject), printable(in.Kind), in.At.Format(time.RFC3339),
					keyValues(in.Data))
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
	fl.StringVar(&f.Subject, "subject", "", "only this subject's interests")
	fl.StringVar(&f.Cursor, "cursor", "", "continue after a previous page")
	fl.IntVar(&f.Limit, "limit", 50, "page size (max 200)")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// keyValues renders a data map for a table, sorted: "a=1 b=2".
func keyValues(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, printable(k)+"="+printable(m[k]))
	}
	return strings.Join(parts, " ")
}
