package cli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
)

func newEmulateCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "emulate",
		Short: "Run a provider emulator that speaks the provider's real wire protocol",
	}
	var addr, project, credsOut string
	var strictTokens bool
	fcmCmd := &cobra.Command{
		Use:   "fcm",
		Short: "Run the FCM HTTP v1 emulator (messages:send, OAuth token endpoint, fault injection)",
		Long: `Run the FCM HTTP v1 emulator.

It serves POST /v1/projects/{project}/messages:send and the OAuth2 token endpoint,
validates requests as FCM does and answers with FCM's exact error JSON. It prints a
service-account JSON whose token_uri points at itself: give it to Herald (or to the
Firebase Admin SDK) as credentials. GET /emulator/messages lists what it accepted,
DELETE resets; PUT /emulator/faults injects errors, Retry-After and latency.

A registration token that is not FCM's syntax (a URL, spaces) is answered
INVALID_ARGUMENT as FCM answers it. With --registered-tokens-only a well-formed
token the emulator never issued is answered UNREGISTERED: POST /emulator/tokens
issues one (or registers {"token":"…"}), DELETE /emulator/tokens/{token} forgets it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em := fcmemu.New(fcmemu.Config{Logger: log, RegisteredTokensOnly: strictTokens})
			if _, err := em.Start(addr); err != nil {
				return err
			}
			defer em.Close()
			creds := em.ServiceAccountJSON(project)
			if credsOut != "" {
				if err := os.WriteFile(credsOut, creds, 0o600); err != nil {
					return err
				}
			}
			log.Info("fcm emulator listening", "url", em.URL(), "project", project, "credentials_file", credsOut)
			if credsOut == "" {
				fmt.Fprintf(e.stdout, "%s\n", creds)
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	fcmCmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8081", "listen address")
	fcmCmd.Flags().StringVar(&project, "project", devProject, "project id of the printed service account")
	fcmCmd.Flags().BoolVar(&strictTokens, "registered-tokens-only", false,
		"answer UNREGISTERED for well-formed tokens the emulator never issued (POST /emulator/tokens issues them)")
	fcmCmd.Flags().StringVar(&credsOut, "credentials-out", "", "write the service-account JSON to this file instead of stdout")
	cmd.AddCommand(fcmCmd, newEmulateAPNsCmd(e), newEmulateWebPushCmd(e), newEmulateTwilioCmd(e), newEmulateSMTPCmd(e), newEmulateKafkaCmd(e),
		newEmulateRecommendCmd(e), newEmulateWebhookCmd(e))
	return cmd
}

// startDevEmulator starts the FCM emulator for serve --dev, logging every
// message it accepts so a newcomer sees the push arrive.
func startDevEmulator(addr string, log *slog.Logger) (*fcmemu.Emulator, error) {
	em := fcmemu.New(fcmemu.Config{Logger: log.With("component", "fcm-emulator")})
	if _, err := em.Start(addr); err != nil {
		return nil, listenError("the FCM emulator", addr, "dev.fcm_addr", "--emulator-addr", err)
	}
	return em, nil
}

// announceEmulator logs, for serve --dev, where an emulator listens (url)
// and where its control routes are (control, the base URL they share):
// the messages it received (GET; DELETE clears them), its fault injection
// (GET, PUT, DELETE) and its counters — so every emulator can be found
// from the start-up log alone (issue 22 item 6).
func announceEmulator(log *slog.Logger, name, url, control string, extra ...any) {
	args := append([]any{"emulator", name, "url", url, "messages", control + "/emulator/messages",
		"faults", control + "/emulator/faults", "stats", control + "/emulator/stats"}, extra...)
	log.Info("dev mode: emulator started", args...)
}
