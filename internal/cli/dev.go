package cli

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"

	"github.com/heraldhq/herald"
	apnsemu "github.com/heraldhq/herald/emulator/apns"
	recommendemu "github.com/heraldhq/herald/emulator/recommend"
	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	twilioemu "github.com/heraldhq/herald/emulator/twilio"
	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/apns"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/provider/twilio"
	"github.com/heraldhq/herald/provider/webpush"
)

// DevConfig is where `serve --dev` starts each emulator.
type DevConfig struct {
	FCMAddr     string `koanf:"fcm_addr"`
	APNsAddr    string `koanf:"apns_addr"`
	WebPushAddr string `koanf:"webpush_addr"`
	TwilioAddr  string `koanf:"twilio_addr"`
	SMTPAddr    string `koanf:"smtp_addr"`
	SMTPHTTP    string `koanf:"smtp_http_addr"` // the SMTP emulator's /emulator/messages
	// RecommendAddr is the recommendation emulator's, the endpoint the
	// campaign examples fetch content from (issue 32 item 2).
	RecommendAddr string `koanf:"recommend_addr"`
	// KafkaAddr is the in-process Kafka broker's, when kafka.brokers is
	// not set (issue 20 item 9).
	KafkaAddr string `koanf:"kafka_addr"`
	// SchemaRegistryAddr is the in-process schema registry's, when
	// kafka.schema_registry_url is not set.
	SchemaRegistryAddr string `koanf:"schema_registry_addr"`
	// WebhookAddr is the webhook receiver emulator's, which the endpoint
	// wh_dev sends every event to (issue 35 item 6).
	WebhookAddr string `koanf:"webhook_addr"`
}

// devTopic is the bundle id the dev-mode APNs emulator accepts.
const devTopic = "dev.herald.app"

// devEmulators is what serve --dev started that Herald itself calls
// besides its providers: the recommendation emulator a campaign's fetch
// reaches. Its URLs are on loopback, which a guard on calls to
// user-supplied addresses refuses by default, so dev wiring must allow
// exactly these (Hosts).
type devEmulators struct {
	// RecommendURL is the recommendation emulator's fetch URL (a
	// campaign's fetch.url).
	RecommendURL string
	// Hosts are the host:port of every emulator Herald calls on a URL a
	// user supplies (a campaign's fetch, a rule's audience webhook).
	Hosts []string
}

// listenError says which listener could not start where, and which
// setting (and flag, when there is one) moves it (issue 32 item 4): a port
// another program holds is the usual reason.
func listenError(what, addr, key, flag string, err error) error {
	move := "the " + key + " setting (" + envName(key) + ")"
	if flag != "" {
		move = flag + " or " + move
	}
	return fmt.Errorf("start %s on %s: %w; move it with %s", what, addr, err, move)
}

// envName is the environment variable of a config key: HERALD_, the key
// upper-cased, a nested key's dot as a double underscore.
func envName(key string) string {
	return "HERALD_" + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// logRouting says which provider each platform's push goes to, so a
// newcomer sees where an iOS or a web device is sent (issue 32 item 1).
func logRouting(log *slog.Logger, routing map[heraldtype.Platform]string) {
	args := []any{}
	for _, p := range []heraldtype.Platform{heraldtype.PlatformAndroid, heraldtype.PlatformIOS, heraldtype.PlatformWeb} {
		name := routing[p]
		if name == "" {
			name = "none"
		}
		args = append(args, string(p), name)
	}
	log.Info("push routing (push_routing)", args...)
}

// devProviders starts every emulator and points a provider at each; it
// also starts the recommendation emulator, which is no provider.
func (c *Config) devProviders(ps map[string]herald.Provider, log *slog.Logger) ([]io.Closer, devEmulators, error) {
	var closers []io.Closer
	add := func(cl io.Closer, err error) error {
		if cl != nil {
			closers = append(closers, cl)
		}
		return err
	}
	if err := add(c.devFCM(ps, log)); err != nil {
		return closers, devEmulators{}, err
	}
	if err := add(c.devAPNs(ps, log)); err != nil {
		return closers, devEmulators{}, err
	}
	if err := add(c.devWebPush(ps, log)); err != nil {
		return closers, devEmulators{}, err
	}
	if err := add(c.devTwilio(ps, log)); err != nil {
		return closers, devEmulators{}, err
	}
	if err := add(c.devSMTP(ps, log)); err != nil {
		return closers, devEmulators{}, err
	}
	re := recommendemu.New(recommendemu.Config{Logger: log.With("component", "recommend-emulator")})
	if _, err := re.Start(c.Dev.RecommendAddr); err != nil {
		return closers, devEmulators{}, listenError("the recommendation emulator", c.Dev.RecommendAddr, "dev.recommend_addr", "", err)
	}
	closers = append(closers, re)
	announceEmulator(log, "recommend", re.URL(), re.URL(), "fetch_url", re.FetchURL())
	host, _ := strings.CutPrefix(re.URL(), "http://")
	return closers, devEmulators{RecommendURL: re.FetchURL(), Hosts: []string{host}}, nil
}

func emulatorLog(log *slog.Logger, name string) *slog.Logger {
	return log.With("component", name+"-emulator")
}

func (c *Config) devFCM(ps map[string]herald.Provider, log *slog.Logger) (io.Closer, error) {
	fe, err := startDevEmulator(c.Dev.FCMAddr, log)
	if err != nil {
		return nil, err
	}
	if ps["fcm"], err = fcm.New(fcm.Config{CredentialsJSON: fe.ServiceAccountJSON(devProject), Endpoint: fe.URL()}); err != nil {
		return fe, err
	}
	announceEmulator(log, "fcm", fe.URL(), fe.URL(), "project", devProject)
	return fe, nil
}

func (c *Config) devAPNs(ps map[string]herald.Provider, log *slog.Logger) (io.Closer, error) {
	ae, err := apnsemu.New(apnsemu.Config{Logger: emulatorLog(log, "apns"), Topics: []string{devTopic}})
	if err != nil {
		return nil, err
	}
	if _, err := ae.Start(c.Dev.APNsAddr); err != nil {
		return nil, listenError("the APNs emulator", c.Dev.APNsAddr, "dev.apns_addr", "", err)
	}
	p8, keyID, err := ae.NewProviderKey(apnsemu.DefaultTeamID)
	if err != nil {
		return ae, err
	}
	acfg := apns.Config{KeyP8: p8, KeyID: keyID, TeamID: apnsemu.DefaultTeamID, Topic: devTopic, Endpoint: ae.URL(), RootCAs: ae.CertPool()}
	if ps["apns"], err = apns.New(acfg); err != nil {
		return ae, err
	}
	announceEmulator(log, "apns", ae.URL(), ae.URL(), "tls", "self-signed certificate (curl -k)", "topic", devTopic,
		"device_tokens", ae.URL()+"/emulator/device-tokens")
	return ae, nil
}

func (c *Config) devWebPush(ps map[string]herald.Provider, log *slog.Logger) (io.Closer, error) {
	we := webpushemu.New(webpushemu.Config{Logger: emulatorLog(log, "webpush")})
	if _, err := we.Start(c.Dev.WebPushAddr); err != nil {
		return nil, listenError("the Web Push emulator", c.Dev.WebPushAddr, "dev.webpush_addr", "", err)
	}
	// The configured VAPID keys when there are some (a web page
	// subscribed with them keeps working across restarts), else a pair
	// made for this run.
	pub, priv, subject := c.WebPush.VAPIDPublicKey, c.WebPush.VAPIDPrivateKey, c.WebPush.Subject
	var err error
	if priv == "" {
		if pub, priv, err = webpush.GenerateVAPIDKeys(); err != nil {
			return we, err
		}
	}
	if subject == "" {
		subject = "mailto:dev@herald.invalid"
	}
	if ps["webpush"], err = webpush.New(webpush.Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv,
		Subject: subject, AllowInsecureEndpoints: true, AllowPrivateEndpoints: true}); err != nil {
		return we, fmt.Errorf("webpush: %w", err)
	}
	announceEmulator(log, "webpush", we.URL(), we.URL(), "subscriptions", we.URL()+"/emulator/subscriptions",
		"vapid_public_key", pub)
	return we, nil
}

func (c *Config) devTwilio(ps map[string]herald.Provider, log *slog.Logger) (io.Closer, error) {
	te := twilioemu.New(twilioemu.Config{Logger: emulatorLog(log, "twilio")})
	if _, err := te.Start(c.Dev.TwilioAddr); err != nil {
		return nil, listenError("the Twilio emulator", c.Dev.TwilioAddr, "dev.twilio_addr", "", err)
	}
	var err error
	if ps["twilio"], err = twilio.New(twilio.Config{AccountSID: te.AccountSID(), AuthToken: te.AuthToken(),
		From: "+15005550006", BaseURL: te.URL()}); err != nil {
		return te, err
	}
	announceEmulator(log, "twilio", te.URL(), te.URL())
	return te, nil
}

func (c *Config) devSMTP(ps map[string]herald.Provider, log *slog.Logger) (io.Closer, error) {
	se, err := smtpemu.New(smtpemu.Config{Logger: emulatorLog(log, "smtp")})
	if err != nil {
		return nil, err
	}
	if _, err := se.Start(c.Dev.SMTPAddr); err != nil {
		return nil, listenError("the SMTP emulator", c.Dev.SMTPAddr, "dev.smtp_addr", "", err)
	}
	if _, err := se.StartHTTP(c.Dev.SMTPHTTP); err != nil {
		return se, listenError("the SMTP emulator's HTTP side", c.Dev.SMTPHTTP, "dev.smtp_http_addr", "", err)
	}
	host, port := se.HostPort()
	if ps["smtp"], err = smtp.New(smtp.Config{Host: host, Port: port, TLS: smtp.TLSNone, From: "Herald <herald@localhost>"}); err != nil {
		return se, err
	}
	announceEmulator(log, "smtp", "smtp://"+se.Addr(), se.HTTPURL())
	return se, nil
}

// listenAPI listens on the API's address, naming the setting and flag
// that move it when it cannot.
func listenAPI(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError("the HTTP API", addr, "listen", "--listen", err)
	}
	return l, nil
}
