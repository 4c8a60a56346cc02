package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Templates commands (issue 37): a type's message templates per channel
// and locale, their versions, a preview and a test-send.

func newTemplatesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Save, show, preview and test-send a type's message templates per channel and locale",
		Long: `A notification type's message templates: per locale (ko-KR, ko, en…), a form per channel —
push, SMS, e-mail, in-app. Each save is a new version; a notification records the version it
was rendered from. See docs/templates.md.`,
	}
	cmd.AddCommand(newTemplatesListCmd(e), newTemplatesGetCmd(e), newTemplatesPutCmd(e), newTemplatesVersionsCmd(e),
		newTemplatesPreviewCmd(e), newTemplatesTestSendCmd(e))
	return cmd
}

func newTemplatesListCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the types that have templates, with their latest version",
		Long: `List the types that have templates, with their latest version: the declared types
(herald types list), each asked for its templates.`,
		Example: "  herald templates list",
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
			vs := []heraldtype.TemplateVersion{}
			for _, t := range ts {
				v, err := c.GetTemplates(cmd.Context(), t.Name, 0)
				if heraldclient.IsCode(err, heraldclient.CodeNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				vs = append(vs, v)
			}
			if asJSON {
				return printJSON(e.stdout, map[string]any{"templates": vs})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TYPE\tVERSION\tDEFAULT\tLOCALES\tCHANNELS\tSAVED")
			for _, v := range vs {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", printable(v.Type), v.Version, printable(v.Templates.DefaultLocale),
					printable(strings.Join(locales(v.Templates), " ")), joinChannels(templateChannels(v.Templates)), timeOrEmpty(&v.CreatedAt))
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newTemplatesGetCmd(e *env) *cobra.Command {
	var server string
	var version int
	cmd := &cobra.Command{
		Use:   "get TYPE",
		Short: "Print a type's templates as JSON: the latest version, or --version N",
		Example: `  herald templates get order_shipped
  herald templates get order_shipped --version 3 > order_shipped.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			v, err := c.GetTemplates(cmd.Context(), args[0], version)
			if err != nil {
				return err
			}
			return printJSON(e.stdout, v)
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().IntVar(&version, "version", 0, "the version to print (default: the latest)")
	return cmd
}

func newTemplatesPutCmd(e *env) *cobra.Command {
	var server, file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "put TYPE -f FILE",
		Short: "Save a type's templates as its next version (admin key)",
		Long: `Save a type's templates as its next version; the previous versions stay. The file holds
the templates as JSON — default_locale, sample_data, and per locale the channels' forms. A
template the server refuses is named (templates.locales.ko.sms.text) with why.`,
		Example: `  herald templates put order_shipped -f order_shipped.json
  # {"default_locale":"en","sample_data":{"order":"A-1"},
  #  "locales":{"en":{"push":{"title":"Order {{.order}} shipped","body":"On its way"}},
  #             "ko":{"push":{"title":"주문 {{.order}} 발송","body":"배송이 시작되었습니다"}}}}`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return fmt.Errorf("--file is required: the templates as JSON (- for standard input)")
			}
			raw, err := readJSONFile(cmd, file)
			if err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var v heraldtype.TemplateVersion
			if err := sendFile(cmd.Context(), c, http.MethodPut, apiPath("/v1/types/%s/templates", args[0]), nil, raw, &v); err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, v)
			}
			fmt.Fprintf(e.stdout, "%s: version %d saved (%s)\n", printable(v.Type), v.Version, printable(strings.Join(locales(v.Templates), ", ")))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	addFileFlag(cmd, &file, "the templates")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newTemplatesVersionsCmd(e *env) *cobra.Command {
	var server string
	var before, limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "versions TYPE",
		Short: "List a type's saved template versions, newest first",
		Example: `  herald templates versions order_shipped
  herald templates versions order_shipped --before 5 --limit 10`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			vs, err := c.ListTemplateVersions(cmd.Context(), args[0], before, limit)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, map[string]any{"versions": vs})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tSAVED\tDEFAULT\tLOCALES\tCHANNELS")
			for _, v := range vs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", v.Version, timeOrEmpty(&v.CreatedAt), printable(v.Templates.DefaultLocale),
					printable(strings.Join(locales(v.Templates), " ")), joinChannels(templateChannels(v.Templates)))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if n := len(vs); n > 0 && n == pageSize(limit) && vs[n-1].Version > 1 {
				fmt.Fprintf(e.stdout, "\nmore: --before %d\n", vs[n-1].Version)
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	cmd.Flags().IntVar(&before, "before", 0, "only the versions below this one (the next page)")
	cmd.Flags().IntVar(&limit, "limit", 0, "page size (default 20, max 100)")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// pageSize is the versions page the server gives for limit.
func pageSize(limit int) int {
	if limit <= 0 {
		return 20
	}
	return limit
}

func newTemplatesPreviewCmd(e *env) *cobra.Command {
	var server, file, user, zone string
	var version int
	var data []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "preview TYPE",
		Short: "Render a type's templates in every locale, and for a user; nothing is sent",
		Long: `Render a type's templates — the latest version, --version N, or a draft from --file — in
every locale with the sample data (or --data), dates in --time-zone, and with --user what that
user would get: the locale theirs picks, in their zone. Each channel shows its size, an SMS its
encoding and segments; a locale that does not render says why. Nothing is sent.`,
		Example: `  herald templates preview order_shipped
  herald templates preview order_shipped --user kim --data order=A-7
  herald templates preview order_shipped -f draft.json --time-zone Asia/Seoul`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := heraldclient.PreviewRequest{Version: version, UserID: user, TimeZone: zone}
			var err error
			if in.Data, err = parseKeyValues("data", data); err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var p heraldtype.TemplatePreview
			if file == "" {
				p, err = c.PreviewTemplates(cmd.Context(), args[0], in)
			} else {
				if version != 0 {
					return fmt.Errorf("give --file or --version, not both")
				}
				p, err = previewDraft(cmd, c, args[0], file, in)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, p)
			}
			return printPreview(e.stdout, p)
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.IntVar(&version, "version", 0, "the saved version to render (default: the latest)")
	f.StringVar(&user, "user", "", "also render what this user would get")
	f.StringVar(&zone, "time-zone", "", "the IANA zone of the locales' dates (default UTC)")
	f.StringArrayVar(&data, "data", nil, "a data field, key=value (repeatable; default: the sample data)")
	addFileFlag(cmd, &file, "a draft of the templates")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// previewDraft previews the draft in file as it is written: the server
// names what it refuses in it.
func previewDraft(cmd *cobra.Command, c *heraldclient.Client, typ, file string, in heraldclient.PreviewRequest) (heraldtype.TemplatePreview, error) {
	var p heraldtype.TemplatePreview
	raw, err := readJSONFile(cmd, file)
	if err != nil {
		return p, err
	}
	body, err := json.Marshal(struct {
		Templates json.RawMessage   `json:"templates"`
		Data      map[string]string `json:"data,omitempty"`
		TimeZone  string            `json:"time_zone,omitempty"`
		UserID    string            `json:"user_id,omitempty"`
	}{raw, in.Data, in.TimeZone, in.UserID})
	if err != nil {
		return p, err
	}
	err = sendFile(cmd.Context(), c, http.MethodPost, apiPath("/v1/types/%s/preview", typ), nil, body, &p)
	return p, err
}

// printPreview writes each locale's render, then the user's.
func printPreview(w io.Writer, p heraldtype.TemplatePreview) error {
	if p.Version != 0 {
		fmt.Fprintf(w, "%s, version %d\n", printable(p.Type), p.Version)
	} else {
		fmt.Fprintf(w, "%s, draft\n", printable(p.Type))
	}
	for _, l := range p.Locales {
		printLocalePreview(w, "locale "+l.Locale, l)
	}
	if u := p.User; u != nil {
		devices := make([]string, len(u.Devices))
		for i, d := range u.Devices {
			devices[i] = d.ID + " (" + string(d.Platform) + ")"
		}
		printLocalePreview(w, fmt.Sprintf("user %s (locale %s picks %s, zone %s, devices: %s)", u.UserID, orNone(u.Locale),
			u.LocalePreview.Locale, orNone(u.TimeZone), orNone(strings.Join(devices, ", "))), u.LocalePreview)
	}
	return nil
}

func printLocalePreview(w io.Writer, head string, l heraldtype.LocalePreview) {
	fmt.Fprintf(w, "\n%s\n", printable(head))
	if l.Error != "" {
		fmt.Fprintf(w, "  does not render: %s\n", printable(l.Error))
		return
	}
	m := l.Message
	if m == nil {
		return
	}
	if p := m.Push; p != nil {
		fmt.Fprintf(w, "  push:   %s / %s  (APNs %d bytes, FCM %d bytes)\n", printable(p.Title), printable(p.Body), p.APNsBytes, p.FCMBytes)
	}
	if s := m.SMS; s != nil {
		fmt.Fprintf(w, "  sms:    %s  (%d segment(s), %s, %d units)\n", printable(s.Text), s.Segments, s.Encoding, s.Units)
	}
	if e := m.Email; e != nil {
		fmt.Fprintf(w, "  email:  %s  (%d bytes)\n", printable(e.Subject), e.Bytes)
	}
	if a := m.InApp; a != nil {
		fmt.Fprintf(w, "  in_app: %s / %s\n", printable(a.Title), printable(a.Body))
	}
	if l.OverLimit != "" {
		fmt.Fprintf(w, "  over a limit: %s\n", printable(l.OverLimit))
	}
}

func newTemplatesTestSendCmd(e *env) *cobra.Command {
	var server, user string
	var data, channels []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test-send TYPE --user ID",
		Short: "Send a type's latest templates to one user now, as a test",
		Long: `Send a type's latest templates to one user now, with the sample data (or --data), on the
type's channels (or --channel). A test bypasses the user's quiet hours, de-duplication, the
daily cap and digests, never their opt-outs: each channel is listed queued or skipped with why.
The notification is marked as a test; the engagement report leaves it out.`,
		Example: `  herald templates test-send order_shipped --user kim
  herald templates test-send order_shipped --user kim --channel sms --data order=A-7`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if user == "" {
				return fmt.Errorf("--user is required: who gets the test")
			}
			in := heraldclient.TestSendRequest{UserID: user, Channels: channelList(channels)}
			var err error
			if in.Data, err = parseKeyValues("data", data); err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			res, err := c.TestSendTemplates(cmd.Context(), args[0], in)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, res)
			}
			for _, n := range res.Notifications {
				fmt.Fprintf(e.stdout, "notification %s for %s\n", n.ID, printable(n.UserID))
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CHANNEL\tSTATUS\tDELIVERIES\tWHY")
			for _, ch := range res.Channels {
				why := ""
				if ch.Code != "" {
					why = printable(ch.Reason) + " (" + printable(ch.Code) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", ch.Channel, ch.Status, ch.Deliveries, why)
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&user, "user", "", "the user who gets the test (required)")
	f.StringArrayVar(&data, "data", nil, "a data field, key=value (repeatable; default: the sample data)")
	f.StringSliceVar(&channels, "channel", nil, "a channel: push, in_app, email, sms (repeatable; default: the type's)")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// locales are the templates' locale names, sorted.
func locales(t heraldtype.MessageTemplates) []string {
	out := make([]string, 0, len(t.Locales))
	for l := range t.Locales {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// templateChannels are the channels any locale has a form for.
func templateChannels(t heraldtype.MessageTemplates) []heraldtype.Channel {
	var out []heraldtype.Channel
	add := func(ok bool, ch heraldtype.Channel) {
		if ok && !slices.Contains(out, ch) {
			out = append(out, ch)
		}
	}
	for _, l := range locales(t) {
		ct := t.Locales[l]
		add(ct.Push != nil, heraldtype.ChannelPush)
		add(ct.SMS != nil, heraldtype.ChannelSMS)
		add(ct.Email != nil, heraldtype.ChannelEmail)
		add(ct.InApp != nil, heraldtype.ChannelInApp)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
