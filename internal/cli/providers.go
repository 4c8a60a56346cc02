package cli

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/apns"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/provider/twilio"
	"github.com/heraldhq/herald/provider/webpush"
)

// APNsConfig configures direct APNs delivery (token auth with a .p8 key).
type APNsConfig struct {
	KeyFile     string `koanf:"key_file"`
	KeyID       string `koanf:"key_id"`
	TeamID      string `koanf:"team_id"`
	Topic       string `koanf:"topic"`       // the app's bundle id
	Environment string `koanf:"environment"` // production (default) or sandbox
	Endpoint    string `koanf:"endpoint"`    // override, e.g. an emulator
	CAFile      string `koanf:"ca_file"`     // trust this CA (an emulator's)
}

// WebPushConfig configures direct Web Push (VAPID). Generate keys with
// `herald vapid generate`.
type WebPushConfig struct {
	VAPIDPublicKey  string `koanf:"vapid_public_key"`
	VAPIDPrivateKey string `koanf:"vapid_private_key"`
	Subject         string `koanf:"subject"` // mailto: or https: contact
	// AllowInsecureEndpoints accepts http:// subscription endpoints and
	// AllowPrivateEndpoints ones on loopback or private addresses: for a
	// test push service only (issue 21 item 6; docs/SECURITY.md).
	AllowInsecureEndpoints bool `koanf:"allow_insecure_endpoints"`
	AllowPrivateEndpoints  bool `koanf:"allow_private_endpoints"`
}

// TwilioConfig configures SMS through the Twilio Messages API.
type TwilioConfig struct {
	AccountSID string `koanf:"account_sid"`
	// AuthToken authenticates sends unless an API key is set, and verifies
	// status callbacks (Twilio signs them with it even for API-key sends).
	AuthToken string `koanf:"auth_token"`
	// AuthTokenFile holds the auth token instead (a file a SIGHUP re-reads:
	// README, Rotating credentials).
	AuthTokenFile string `koanf:"auth_token_file"`
	// APIKeySID and APIKeySecret, when set, authenticate sends instead of
	// the auth token (issue 21 item 4); APIKeySecretFile holds the secret
	// instead.
	APIKeySID        string `koanf:"api_key_sid"`
	APIKeySecret     string `koanf:"api_key_secret"`
	APIKeySecretFile string `koanf:"api_key_secret_file"`
	// From or MessagingServiceSID (exactly one) is the sender.
	From                string `koanf:"from"`
	MessagingServiceSID string `koanf:"messaging_service_sid"`
	BaseURL             string `koanf:"base_url"`
	// StatusCallbackURL, when set, is Herald's POST
	// /v1/providers/twilio/status as Twilio reaches it (https://herald.example.com/v1/providers/twilio/status):
	// every SMS asks Twilio to report its fate there. Empty: no callbacks.
	StatusCallbackURL string `koanf:"status_callback_url"`
}

// SMTPConfig configures email over SMTP submission.
type SMTPConfig struct {
	Host     string `koanf:"host"`
	Port     int    `koanf:"port"`
	Username string `koanf:"username"`
	Password string `koanf:"password"`
	// PasswordFile holds the password instead (a file a SIGHUP re-reads).
	PasswordFile string `koanf:"password_file"`
	TLS          string `koanf:"tls"` // starttls (default), tls, none
	From         string `koanf:"from"`
	// Auth is auto (default), plain, login, cram-md5 or xoauth2; HeloName
	// the EHLO name; AllowInsecureAuth lets PLAIN, LOGIN and XOAUTH2 run
	// without TLS (a local emulator only). README: E-mail (SMTP).
	Auth              string           `koanf:"auth"`
	HeloName          string           `koanf:"helo_name"`
	AllowInsecureAuth bool             `koanf:"allow_insecure_auth"`
	OAuth2            SMTPOAuth2Config `koanf:"oauth2"`
}

// SMTPOAuth2Config is smtp.oauth2: the token endpoint XOAUTH2 gets its
// tokens from (refresh-token grant with refresh_token, else client
// credentials). The secrets may come from files.
type SMTPOAuth2Config struct {
	TokenURL         string   `koanf:"token_url"`
	ClientID         string   `koanf:"client_id"`
	ClientSecret     string   `koanf:"client_secret"`
	ClientSecretFile string   `koanf:"client_secret_file"`
	RefreshToken     string   `koanf:"refresh_token"`
	RefreshTokenFile string   `koanf:"refresh_token_file"`
	Scopes           []string `koanf:"scopes"`
}

// smtpConfig maps smtp: onto the provider's Config, reading the OAuth2
// secrets' files.
func (c *SMTPConfig) smtpConfig() (smtp.Config, error) {
	pw, err := secret("smtp.password", c.Password, c.PasswordFile)
	if err != nil {
		return smtp.Config{}, err
	}
	cs, err := secret("smtp.oauth2.client_secret", c.OAuth2.ClientSecret, c.OAuth2.ClientSecretFile)
	if err != nil {
		return smtp.Config{}, err
	}
	rt, err := secret("smtp.oauth2.refresh_token", c.OAuth2.RefreshToken, c.OAuth2.RefreshTokenFile)
	if err != nil {
		return smtp.Config{}, err
	}
	return smtp.Config{Host: c.Host, Port: c.Port, Username: c.Username, Password: pw, TLS: c.TLS, From: c.From,
		Auth: c.Auth, HeloName: c.HeloName, AllowInsecureAuth: c.AllowInsecureAuth,
		OAuth2: smtp.OAuth2{TokenURL: c.OAuth2.TokenURL, ClientID: c.OAuth2.ClientID, ClientSecret: cs, RefreshToken: rt,
			Scopes: c.OAuth2.Scopes}}, nil
}

// wiredProviders is what providers builds: the providers by name, the
// push routing, what to close at the end, and in dev mode the emulators
// Herald calls besides its providers.
type wiredProviders struct {
	byName  map[string]herald.Provider
	routing map[heraldtype.Platform]string
	closers []io.Closer
	dev     devEmulators
}

// providers builds every configured provider and the push routing. In dev
// mode every provider points at an emulator started here; closers stop
// them.
func (c *Config) providers(dev bool, log *slog.Logger) (wiredProviders, error) {
	w := wiredProviders{byName: map[string]herald.Provider{}}
	fail := func(err error) (wiredProviders, error) {
		for _, cl := range w.closers {
			cl.Close()
		}
		return wiredProviders{}, err
	}
	if dev {
		var err error
		if w.closers, w.dev, err = c.devProviders(w.byName, log); err != nil {
			return fail(err)
		}
	} else if err := c.realProviders(w.byName); err != nil {
		return fail(err)
	}
	var err error
	if w.routing, err = c.routing(w.byName); err != nil {
		return fail(err)
	}
	return w, nil
}

// realProviders builds the providers whose credentials are configured.
// FCM, APNs, Twilio and SMTP are wrapped in a handle whose client a reload
// replaces when their credentials change (rotate.go); Web Push is not: its
// VAPID key pair is what every browser subscribed with.
func (c *Config) realProviders(ps map[string]herald.Provider) error {
	for _, name := range rotatableProviders {
		p, creds, err := c.rotatableProvider(name)
		if err != nil {
			return err
		}
		if p != nil {
			ps[name] = newHandle(name, p, creds)
		}
	}
	if c.WebPush.VAPIDPrivateKey != "" {
		p, err := webpush.New(webpush.Config{VAPIDPublicKey: c.WebPush.VAPIDPublicKey,
			VAPIDPrivateKey: c.WebPush.VAPIDPrivateKey, Subject: c.WebPush.Subject,
			AllowInsecureEndpoints: c.WebPush.AllowInsecureEndpoints, AllowPrivateEndpoints: c.WebPush.AllowPrivateEndpoints})
		if err != nil {
			return fmt.Errorf("webpush: %w", err)
		}
		ps["webpush"] = p
	}
	return nil
}

// rotatableProvider builds the named provider (one of rotatableProviders)
// from c, with the credentials it was built from; nil when c does not
// configure it.
func (c *Config) rotatableProvider(name string) (rotatable, credentials, error) {
	switch name {
	case "fcm":
		return nilIfNone(c.fcmProvider())
	case "apns":
		return nilIfNone(c.apnsProvider())
	case "twilio":
		return nilIfNone(c.twilioProvider())
	case "smtp":
		return nilIfNone(c.smtpProvider())
	}
	return nil, credentials{}, fmt.Errorf("%s: not a provider whose credentials rotate", name)
}

// nilIfNone turns a nil client pointer into a nil interface.
func nilIfNone[P interface {
	comparable
	rotatable
}](p P, creds credentials, err error) (rotatable, credentials, error) {
	var none P
	if err != nil || p == none {
		return nil, creds, err
	}
	return p, creds, nil
}

// fcmProvider builds FCM from fcm.*, or returns nil without credentials.
func (c *Config) fcmProvider() (*fcm.Client, credentials, error) {
	creds, err := c.FCM.credentials()
	if err != nil || len(creds) == 0 {
		return nil, credentials{}, err
	}
	p, err := fcm.New(fcm.Config{CredentialsJSON: creds, ProjectID: c.FCM.ProjectID, Endpoint: c.FCM.Endpoint,
		QuotaMinRetryAfter: c.FCM.QuotaMinRetryAfter})
	if err != nil {
		return nil, credentials{}, fmt.Errorf("fcm: %w", err)
	}
	return p, fcmCredentials(creds, p.ProjectID()), nil
}

// apnsProvider builds APNs from apns.*, or returns nil without a key file.
func (c *Config) apnsProvider() (*apns.Client, credentials, error) {
	if c.APNs.KeyFile == "" {
		return nil, credentials{}, nil
	}
	key, err := os.ReadFile(c.APNs.KeyFile)
	if err != nil {
		return nil, credentials{}, fmt.Errorf("config: apns.key_file: %w", err)
	}
	cfg := apns.Config{KeyP8: key, KeyID: c.APNs.KeyID, TeamID: c.APNs.TeamID, Topic: c.APNs.Topic,
		Environment: apns.Environment(c.APNs.Environment), Endpoint: c.APNs.Endpoint}
	if c.APNs.CAFile != "" {
		pem, err := os.ReadFile(c.APNs.CAFile)
		if err != nil {
			return nil, credentials{}, fmt.Errorf("config: apns.ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, credentials{}, errors.New("config: apns.ca_file holds no PEM certificate")
		}
	}
	p, err := apns.New(cfg)
	if err != nil {
		return nil, credentials{}, fmt.Errorf("apns: %w", err)
	}
	return p, newCredentials([][]byte{key, []byte(cfg.KeyID), []byte(cfg.TeamID)},
		"key_id", cfg.KeyID, "team_id", cfg.TeamID), nil
}

// twilioProvider builds Twilio from twilio.*, or returns nil without an
// account SID.
func (c *Config) twilioProvider() (*twilio.Client, credentials, error) {
	t := c.Twilio
	if t.AccountSID == "" {
		return nil, credentials{}, nil
	}
	token, err := secret("twilio.auth_token", t.AuthToken, t.AuthTokenFile)
	if err != nil {
		return nil, credentials{}, err
	}
	keySecret, err := secret("twilio.api_key_secret", t.APIKeySecret, t.APIKeySecretFile)
	if err != nil {
		return nil, credentials{}, err
	}
	p, err := twilio.New(twilio.Config{AccountSID: t.AccountSID, AuthToken: token,
		APIKeySID: t.APIKeySID, APIKeySecret: keySecret,
		From: t.From, MessagingServiceSID: t.MessagingServiceSID, BaseURL: t.BaseURL,
		StatusCallback: t.StatusCallbackURL})
	if err != nil {
		return nil, credentials{}, fmt.Errorf("twilio: %w", err)
	}
	who := []any{"account_sid", t.AccountSID}
	if t.APIKeySID != "" {
		who = append(who, "api_key_sid", t.APIKeySID)
	}
	return p, newCredentials([][]byte{[]byte(token), []byte(t.APIKeySID), []byte(keySecret)}, who...), nil
}

// smtpProvider builds SMTP from smtp.*, or returns nil without a host.
func (c *Config) smtpProvider() (*smtp.Client, credentials, error) {
	if c.SMTP.Host == "" {
		return nil, credentials{}, nil
	}
	cfg, err := c.SMTP.smtpConfig()
	if err != nil {
		return nil, credentials{}, err
	}
	p, err := smtp.New(cfg)
	if err != nil {
		return nil, credentials{}, fmt.Errorf("smtp: %w", err)
	}
	o := cfg.OAuth2
	who := []any{"username", cfg.Username}
	if o.ClientID != "" {
		who = append(who, "oauth2_client_id", o.ClientID)
	}
	return p, newCredentials([][]byte{[]byte(cfg.Username), []byte(cfg.Password), []byte(o.ClientID),
		[]byte(o.ClientSecret), []byte(o.RefreshToken)}, who...), nil
}

// routing maps each platform to its push provider: push_routing when set,
// otherwise the direct provider if configured (APNs for iOS, Web Push for
// web) and FCM for the rest.
func (c *Config) routing(ps map[string]herald.Provider) (map[heraldtype.Platform]string, error) {
	r := map[heraldtype.Platform]string{}
	pick := func(platform heraldtype.Platform, direct string) {
		if _, ok := ps[direct]; ok && direct != "" {
			r[platform] = direct
		} else if _, ok := ps["fcm"]; ok {
			r[platform] = "fcm"
		}
	}
	pick(heraldtype.PlatformAndroid, "")
	pick(heraldtype.PlatformIOS, "apns")
	pick(heraldtype.PlatformWeb, "webpush")
	for platform, name := range c.PushRouting {
		p := heraldtype.Platform(platform)
		if !p.Valid() {
			return nil, fmt.Errorf("config: push_routing.%s: unknown platform (android, ios, web)", platform)
		}
		if _, ok := ps[name]; !ok {
			return nil, fmt.Errorf("config: push_routing.%s: provider %q is not configured", platform, name)
		}
		r[p] = name
	}
	return r, nil
}
