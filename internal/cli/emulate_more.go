package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	recommendemu "github.com/heraldhq/herald/emulator/recommend"
	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/provider/webpush"
)

// runUntilDone keeps an emulator up until the command's context ends.
func runUntilDone(cmd *cobra.Command, closer interface{ Close() error }) error {
	defer closer.Close()
	<-cmd.Context().Done()
	return nil
}

func newEmulateAPNsCmd(e *env) *cobra.Command {
	var addr, teamID, keyOut, caOut string
	var topics []string
	var acceptAny, strictTokens bool
	cmd := &cobra.Command{
		Use:   "apns",
		Short: "Run the APNs emulator (TLS + HTTP/2, token auth, Apple's error JSON, fault injection)",
		Long: `Run the APNs emulator: POST /3/device/{token} over TLS and HTTP/2, validating the ES256
provider token and the apns-* headers as Apple does. It mints a provider key (.p8) for
--team-id and writes it to --key-out, and its CA certificate to --ca-out: configure
Herald's apns.key_file, apns.key_id, apns.team_id, apns.endpoint and apns.ca_file with them.

POST /emulator/device-tokens {"topic":"…"} issues a device token for that bundle id (a send
with another apns-topic is DeviceTokenNotForTopic); DELETE /emulator/device-tokens/{token}
uninstalls the app (410 Unregistered). With --registered-tokens-only a well-formed token it
never issued is BadDeviceToken.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em, err := apnsemu.New(apnsemu.Config{Logger: log, Topics: topics, AcceptUnknownKeys: acceptAny,
				RegisteredTokensOnly: strictTokens})
			if err != nil {
				return err
			}
			if _, err := em.Start(addr); err != nil {
				return err
			}
			p8, keyID, err := em.NewProviderKey(teamID)
			if err != nil {
				em.Close()
				return err
			}
			for path, data := range map[string][]byte{keyOut: p8, caOut: em.CACertPEM()} {
				if path == "" {
					continue
				}
				if err := os.WriteFile(path, data, 0o600); err != nil {
					em.Close()
					return err
				}
			}
			log.Info("apns emulator listening", "url", em.URL(), "team_id", teamID, "key_id", keyID,
				"topics", topics, "key_file", keyOut, "ca_file", caOut)
			return runUntilDone(cmd, em)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8443", "listen address")
	f.StringVar(&teamID, "team-id", apnsemu.DefaultTeamID, "team id of the minted provider key")
	f.StringSliceVar(&topics, "topic", []string{devTopic}, "accepted apns-topic (bundle id); repeatable")
	f.StringVar(&keyOut, "key-out", "", "write the minted .p8 provider key here")
	f.StringVar(&caOut, "ca-out", "", "write the emulator's CA certificate (PEM) here")
	f.BoolVar(&acceptAny, "accept-any-key", false, "accept provider tokens signed by keys the emulator did not mint")
	f.BoolVar(&strictTokens, "registered-tokens-only", false,
		"answer BadDeviceToken for well-formed device tokens the emulator never issued (POST /emulator/device-tokens issues them)")
	return cmd
}

func newEmulateWebPushCmd(e *env) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "webpush",
		Short: "Run the Web Push service emulator (RFC 8030; verifies VAPID and decrypts RFC 8291)",
		Long: `Run an RFC 8030 push service. POST /emulator/subscriptions creates a browser-like
subscription (endpoint, p256dh, auth) to register as a web device; pushes to it are
VAPID-verified, decrypted and listed at GET /emulator/messages.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em := webpushemu.New(webpushemu.Config{Logger: log})
			if _, err := em.Start(addr); err != nil {
				return err
			}
			log.Info("webpush emulator listening", "url", em.URL(), "subscriptions", em.URL()+"/emulator/subscriptions")
			return runUntilDone(cmd, em)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8082", "listen address")
	return cmd
}

func newEmulateTwilioCmd(e *env) *cobra.Command {
	var addr, sid, token string
	cmd := &cobra.Command{
		Use:   "twilio",
		Short: "Run the Twilio Messages API emulator (error codes, STOP opt-outs, signed status callbacks)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em := twilioemu.New(twilioemu.Config{Logger: log, AccountSID: sid, AuthToken: token})
			if _, err := em.Start(addr); err != nil {
				return err
			}
			// The auth token is the emulator's own test credential; it is
			// printed so the user can configure twilio.auth_token.
			log.Info("twilio emulator listening", "base_url", em.URL(), "account_sid", em.AccountSID())
			fmt.Fprintf(e.stdout, "twilio.base_url: %s\ntwilio.account_sid: %s\ntwilio.auth_token: %s\n", em.URL(), em.AccountSID(), em.AuthToken())
			return runUntilDone(cmd, em)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8083", "listen address")
	f.StringVar(&sid, "account-sid", "", "account SID to accept (default: a fixed test SID)")
	f.StringVar(&token, "auth-token", "", "auth token to accept (default: a fixed test token)")
	return cmd
}

func newEmulateSMTPCmd(e *env) *cobra.Command {
	var addr, httpAddr, user, pass, tlsMode, token string
	var mechs []string
	cmd := &cobra.Command{
		Use:   "smtp",
		Short: "Run the SMTP server emulator (STARTTLS, AUTH PLAIN/LOGIN/CRAM-MD5/XOAUTH2, scripted 4xx/5xx replies)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em, err := smtpemu.New(smtpemu.Config{Logger: log, Username: user, Password: pass, TLS: tlsMode,
				Mechanisms: mechs, OAuth2Token: token})
			if err != nil {
				return err
			}
			if _, err := em.Start(addr); err != nil {
				return err
			}
			if _, err := em.StartHTTP(httpAddr); err != nil {
				em.Close()
				return err
			}
			log.Info("smtp emulator listening", "smtp", em.Addr(), "messages", em.HTTPURL()+"/emulator/messages", "tls", tlsMode,
				"auth", em.Mechanisms())
			return runUntilDone(cmd, em)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:2525", "SMTP listen address")
	f.StringVar(&httpAddr, "http-addr", "127.0.0.1:8084", "address of the emulator's HTTP API (/emulator/messages)")
	f.StringVar(&user, "username", "", "require AUTH as this user (default: accept any credentials)")
	f.StringVar(&pass, "password", "", "password for --username (PLAIN, LOGIN, CRAM-MD5)")
	f.StringSliceVar(&mechs, "auth-mechanisms", nil, "AUTH mechanisms to advertise, in order (default PLAIN,LOGIN,CRAM-MD5,XOAUTH2)")
	f.StringVar(&token, "oauth2-token", "", "bearer token XOAUTH2 accepts for --username")
	f.StringVar(&tlsMode, "tls", smtp.TLSNone, "none, starttls or tls (implicit)")
	return cmd
}

func newVAPIDCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vapid",
		Short: "Manage VAPID keys for Web Push",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "generate",
		Short: "Generate a VAPID key pair (RFC 8292) for webpush.vapid_public_key / vapid_private_key",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pub, priv, err := webpush.GenerateVAPIDKeys()
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "vapid_public_key: %s\nvapid_private_key: %s\n", pub, priv)
			return nil
		},
	})
	return cmd
}

func newEmulateRecommendCmd(e *env) *cobra.Command {
	var addr string
	var items int
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Run the recommendation emulator a campaign's fetch can call",
		Long: `Run a recommendation service of the shape a campaign's content fetch calls:
POST /v1/recommendations {"campaign","run","user_ids"} is answered
{"users":{"<id>":{"items":[{"id","name","price"}…],"fields":{…}}}}, each user's items
picked from a small product catalog by the user's id (the same picks every run).
Give a campaign "fetch":{"url":"<url>/v1/recommendations"}.

GET /emulator/messages lists the calls; PUT /emulator/faults fails a campaign's calls
({"campaigns":{"daily-reco":{"status":503,"times":1}}}), a fraction of all calls
({"unavailable":{"rate":0.2}}), leaves users out ({"omit_users":["user-1842"]}) or
slows every call ({"latency_ms":6000}); PUT /emulator/users/{id} sets one user's
content; GET /emulator/stats counts the calls.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em := recommendemu.New(recommendemu.Config{Logger: log, Items: items})
			if _, err := em.Start(addr); err != nil {
				return err
			}
			log.Info("recommend emulator listening", "url", em.URL(), "fetch_url", em.FetchURL())
			return runUntilDone(cmd, em)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8086", "listen address")
	cmd.Flags().IntVar(&items, "items", 3, "items per user")
	return cmd
}

func newEmulateWebhookCmd(e *env) *cobra.Command {
	var addr string
	var secrets []string
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Run a webhook receiver that checks Standard Webhooks signatures",
		Long: `Run a receiver of signed webhooks, as your own endpoint would run one: a POST to any
path is a message to the endpoint at that path. With --secret (repeatable: a rotation's old and
new secret), each message's webhook-signature must match one of them over its webhook-id,
webhook-timestamp (within 5 minutes) and exact body, or it is answered 401; without, messages are
recorded unchecked. Accepted messages are answered 204; a webhook-id accepted before is counted
as a redelivery.

GET /emulator/messages[?path=] lists the messages with their status and body; PUT
/emulator/faults fails a path's messages ({"paths":{"/hooks/crm":{"status":503,"times":3}}};
410 asks the sender to stop, a 3xx is a redirect a sender must not follow), a fraction of all
messages ({"unavailable":{"rate":0.2}}), closes every connection unanswered ({"down":true}) or
slows every answer ({"latency_ms":20000}); GET /emulator/stats counts them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(e.stderr, LogConfig{Level: "info", Format: "json"})
			if err != nil {
				return err
			}
			em, err := webhookemu.New(webhookemu.Config{Logger: log, Secrets: secrets})
			if err != nil {
				return err
			}
			if _, err := em.Start(addr); err != nil {
				return err
			}
			log.Info("webhook emulator listening", "url", em.URL(), "verifying", len(secrets) > 0)
			return runUntilDone(cmd, em)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8087", "listen address")
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "a signing secret (whsec_…) messages must be signed with; repeat for a rotation")
	return cmd
}
