package cli

import (
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Setup commands (issue 32 item 6): users and their devices, through the
// HTTP API like the operations commands.

func newUsersCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "users",
		Short: "Create, replace and show the users of a running Herald",
	}
	cmd.AddCommand(newUsersPutCmd(e), newUsersGetCmd(e))
	return cmd
}

func newUsersPutCmd(e *env) *cobra.Command {
	var server, file string
	var in heraldclient.UserInput
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "put USER",
		Short: "Create a user, or replace all of an existing user's fields",
		Long: `Create a user, or replace all of an existing user's fields: a field left out is
cleared, and a user without a time zone gets the server's default one.`,
		Example: `  herald users put u1 --timezone Asia/Seoul --locale ko-KR --email kim@example.com
  herald users put u1 -f user.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, ok, err := bodyFromFile(cmd, file, "timezone", "locale", "email", "phone")
			if err != nil {
				return err
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var u heraldtype.User
			if ok {
				err = sendFile(cmd.Context(), c, http.MethodPut, apiPath("/v1/users/%s", args[0]), nil, raw, &u)
			} else {
				u, err = c.PutUser(cmd.Context(), args[0], in)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, u)
			}
			return printUser(e.stdout, u)
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&in.Timezone, "timezone", "", "IANA time zone, e.g. Asia/Seoul (default: the server's)")
	f.StringVar(&in.Locale, "locale", "", "language tag, e.g. ko-KR")
	f.StringVar(&in.Email, "email", "", "e-mail address")
	f.StringVar(&in.Phone, "phone", "", "phone number in E.164 form, e.g. +821012345678")
	addFileFlag(cmd, &file, "the user")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newUsersGetCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "get USER",
		Short:   "Show a user",
		Example: "  herald users get u1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			u, err := c.GetUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, u)
			}
			return printUser(e.stdout, u)
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func printUser(w io.Writer, u heraldtype.User) error {
	return printFields(w, []field{
		{"id", printable(u.ID)}, {"timezone", printable(u.Timezone)}, {"locale", printable(u.Locale)},
		{"email", printable(u.Email)}, {"phone", printable(u.Phone)},
		{"created", timeOrEmpty(&u.CreatedAt)}, {"updated", timeOrEmpty(&u.UpdatedAt)},
	})
}

func newDevicesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "Register, list and delete the devices users receive push notifications on",
	}
	cmd.AddCommand(newDevicesListCmd(e), newDevicesRegisterCmd(e), newDevicesDeleteCmd(e), newDevicesHeartbeatCmd(e))
	return cmd
}

func newDevicesListCmd(e *env) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list USER",
		Short:   "List a user's devices",
		Example: "  herald devices list u1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			ds, err := c.ListDevices(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, map[string]any{"devices": ds})
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DEVICE\tPLATFORM\tSTATUS\tPUSH\tFAILS\tAPP\tLAST SEEN\tTOKEN")
			for _, d := range ds {
				status := string(d.Status)
				if d.InvalidReason != "" {
					status += " (" + printable(d.InvalidReason) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", printable(d.ID), d.Platform, status,
					onOff(d.PushOptIn), d.FailCount, printable(d.AppVersion), timeOrEmpty(&d.LastSeenAt), shortToken(d.Token))
			}
			return tw.Flush()
		},
	}
	addServerFlag(cmd, e, &server)
	addJSONFlag(cmd, &asJSON)
	return cmd
}

// shortToken shows the start of a push token: enough to tell two apart in
// a table (--json prints it whole).
func shortToken(t string) string {
	const keep = 16
	if len(t) <= keep+1 {
		return printable(t)
	}
	return printable(t[:keep]) + "…"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func newDevicesRegisterCmd(e *env) *cobra.Command {
	var server, file string
	var in heraldclient.DeviceInput
	var optIn, asJSON bool
	cmd := &cobra.Command{
		Use:   "register USER",
		Short: "Register a device of a user, or refresh its token",
		Long: `Register a device of a user by its device id, or refresh the token of one already
registered. A device registered to another user moves to this one.`,
		Example: `  herald devices register u1 --device-id phone-1 --platform android --token "$FCM_TOKEN"
  herald devices register u1 --device-id laptop --platform web --token "$ENDPOINT" --p256dh "$P256DH" --auth "$AUTH"
  herald devices register u1 -f device.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, ok, err := bodyFromFile(cmd, file, "device-id", "token", "platform", "app-version", "push-opt-in", "p256dh", "auth")
			if err != nil {
				return err
			}
			if !ok {
				if in.DeviceID == "" || in.Token == "" || in.Platform == "" {
					return fmt.Errorf("--device-id, --token and --platform are required (or give the device with --file)")
				}
				if cmd.Flags().Changed("push-opt-in") {
					in.PushOptIn = &optIn
				}
			}
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			var d heraldtype.Device
			if ok {
				err = sendFile(cmd.Context(), c, http.MethodPost, apiPath("/v1/users/%s/devices", args[0]), nil, raw, &d)
			} else {
				d, err = c.RegisterDevice(cmd.Context(), args[0], in)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, d)
			}
			fmt.Fprintf(e.stdout, "device %s of user %s registered (%s, %s, push %s)\n", printable(d.ID),
				printable(d.UserID), d.Platform, d.Status, onOff(d.PushOptIn))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	f := cmd.Flags()
	f.StringVar(&in.DeviceID, "device-id", "", "the app installation's own id")
	f.StringVar(&in.Token, "token", "", "push token (for web: the subscription's endpoint URL)")
	f.StringVar((*string)(&in.Platform), "platform", "", "android, ios or web")
	f.StringVar(&in.AppVersion, "app-version", "", "app version")
	f.BoolVar(&optIn, "push-opt-in", true, "the user allows push on this device")
	f.StringVar(&in.P256DH, "p256dh", "", "a browser subscription's p256dh key (web)")
	f.StringVar(&in.Auth, "auth", "", "a browser subscription's auth secret (web)")
	addFileFlag(cmd, &file, "the device")
	addJSONFlag(cmd, &asJSON)
	return cmd
}

func newDevicesDeleteCmd(e *env) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:     "delete USER DEVICE...",
		Short:   "Delete devices of a user",
		Example: "  herald devices delete u1 phone-1",
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			for _, id := range args[1:] {
				if err := c.DeleteDevice(cmd.Context(), args[0], id); err != nil {
					return fmt.Errorf("device %s: %w", printable(id), err)
				}
				fmt.Fprintf(e.stdout, "deleted device %s of user %s\n", printable(id), printable(args[0]))
			}
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}

func newDevicesHeartbeatCmd(e *env) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "heartbeat DEVICE",
		Short: "Mark a device as seen now",
		Long: `Mark a device as seen now, as the app does when it opens: devices not seen for a long
time are removed.`,
		Example: "  herald devices heartbeat phone-1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(cmd, server)
			if err != nil {
				return err
			}
			if err := c.HeartbeatDevice(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "device %s marked seen\n", printable(args[0]))
			return nil
		},
	}
	addServerFlag(cmd, e, &server)
	return cmd
}
