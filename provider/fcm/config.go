package fcm

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultEndpoint is the production FCM HTTP v1 API.
	DefaultEndpoint = "https://fcm.googleapis.com"
	// DefaultTimeout bounds one send, including a token refresh.
	DefaultTimeout = 10 * time.Second
	// MaxTTL is FCM's longest time to live (28 days); it is also FCM's
	// default when a message carries none.
	MaxTTL = 28 * 24 * time.Hour
)

// messagingScope is the OAuth2 scope FCM HTTP v1 requires.
const messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

// Config configures a Client. Only CredentialsJSON is required.
type Config struct {
	// CredentialsJSON is a Google service-account key file (type,
	// project_id, private_key, client_email, token_uri). It is a secret:
	// Config's String, Format and LogValue never print it.
	CredentialsJSON []byte
	// ProjectID overrides the credentials' project_id.
	ProjectID string
	// Endpoint is the API base URL, DefaultEndpoint if empty. Tests and
	// `herald emulate fcm` users point it at an Emulator.
	Endpoint string
	// HTTPClient sends the requests. If nil, a client with a connection
	// pool sized for a busy sender is used. Its Timeout, if any, applies in
	// addition to Timeout.
	HTTPClient *http.Client
	// Timeout bounds one Send (token refresh included); DefaultTimeout if
	// zero.
	Timeout time.Duration
	// DefaultTTL is how long FCM keeps a message for an offline device;
	// MaxTTL (FCM's own default) if zero. At most MaxTTL.
	DefaultTTL time.Duration
	// QuotaMinRetryAfter is the least Retry-After reported for
	// QUOTA_EXCEEDED: FCM asks senders over their project quota for a
	// minimum initial delay of 1 minute (PROTOCOLS.md), the default. Lower
	// it only against an emulator (fault-injection runs).
	QuotaMinRetryAfter time.Duration
	// Now is the clock, time.Now if nil. It dates apns-expiration,
	// resolves HTTP-date Retry-After values and decides when an access
	// token is renewed.
	Now func() time.Time
}

// serviceAccount is the part of a service-account key file Herald reads.
type serviceAccount struct {
	Type        string `json:"type"`
	ProjectID   string `json:"project_id"`
	PrivateKey  string `json:"private_key"`
	ClientEmail string `json:"client_email"`
	TokenURI    string `json:"token_uri"`
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	account serviceAccount
	sendURL string
}

// validate checks c and fills in defaults. Error messages name the bad
// setting but never quote the credentials.
func (c Config) validate() (*resolved, error) {
	r := &resolved{Config: c}
	if len(c.CredentialsJSON) == 0 {
		return nil, errors.New("fcm: CredentialsJSON is required")
	}
	if err := json.Unmarshal(c.CredentialsJSON, &r.account); err != nil {
		// Never wrap the decoder's error verbatim: some quote input bytes.
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("fcm: CredentialsJSON is not valid JSON (syntax error at byte %d)", syn.Offset)
		}
		return nil, errors.New("fcm: CredentialsJSON is not a service-account key (wrong JSON shape)")
	}
	a := &r.account
	switch {
	case a.Type != "service_account":
		return nil, fmt.Errorf("fcm: CredentialsJSON has type %q, want \"service_account\"", a.Type)
	case a.ClientEmail == "":
		return nil, errors.New("fcm: CredentialsJSON has no client_email")
	case a.PrivateKey == "":
		return nil, errors.New("fcm: CredentialsJSON has no private_key")
	}
	if err := checkPrivateKey(a.PrivateKey); err != nil {
		return nil, err
	}
	if a.TokenURI != "" {
		if u, err := url.Parse(a.TokenURI); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("fcm: CredentialsJSON token_uri %q is not an http(s) URL", a.TokenURI)
		}
	}
	if r.ProjectID == "" {
		r.ProjectID = a.ProjectID
	}
	if r.ProjectID == "" {
		return nil, errors.New("fcm: no project: set ProjectID or project_id in CredentialsJSON")
	}
	if strings.ContainsAny(r.ProjectID, "/?#% ") {
		return nil, fmt.Errorf("fcm: ProjectID %q contains characters not allowed in a project id", r.ProjectID)
	}
	if r.Endpoint == "" {
		r.Endpoint = DefaultEndpoint
	}
	u, err := url.Parse(r.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("fcm: Endpoint %q is not an http(s) URL", r.Endpoint)
	}
	r.sendURL = strings.TrimSuffix(r.Endpoint, "/") + "/v1/projects/" + r.ProjectID + "/messages:send"
	switch {
	case r.Timeout < 0:
		return nil, fmt.Errorf("fcm: Timeout %v is negative", r.Timeout)
	case r.Timeout == 0:
		r.Timeout = DefaultTimeout
	}
	switch {
	case r.DefaultTTL < 0 || r.DefaultTTL > MaxTTL:
		return nil, fmt.Errorf("fcm: DefaultTTL %v is outside FCM's range 0..%v", r.DefaultTTL, MaxTTL)
	case r.DefaultTTL == 0:
		r.DefaultTTL = MaxTTL
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	switch {
	case r.QuotaMinRetryAfter < 0:
		return nil, fmt.Errorf("fcm: QuotaMinRetryAfter %v must not be negative", r.QuotaMinRetryAfter)
	case r.QuotaMinRetryAfter == 0:
		r.QuotaMinRetryAfter = quotaMinRetry
	}
	return r, nil
}

// checkPrivateKey reports whether key is a PEM RSA key, as Google's JWT
// signer needs. x509's errors describe the structure, never the key bytes.
func checkPrivateKey(key string) error {
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return errors.New("fcm: CredentialsJSON private_key is not PEM encoded")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); !ok {
			return errors.New("fcm: CredentialsJSON private_key is not an RSA key")
		}
		return nil
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return errors.New("fcm: CredentialsJSON private_key is neither a PKCS#8 nor a PKCS#1 RSA key")
	}
	return nil
}

// String describes c without its credentials.
func (c Config) String() string {
	creds := "none"
	if len(c.CredentialsJSON) > 0 {
		creds = "[redacted]"
	}
	return fmt.Sprintf("fcm.Config{CredentialsJSON:%s ProjectID:%q Endpoint:%q Timeout:%v DefaultTTL:%v}",
		creds, c.ProjectID, c.Endpoint, c.Timeout, c.DefaultTTL)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the private key.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the credentials out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("credentials_set", len(c.CredentialsJSON) > 0),
		slog.String("project_id", c.ProjectID),
		slog.String("endpoint", c.Endpoint),
		slog.Duration("timeout", c.Timeout),
		slog.Duration("default_ttl", c.DefaultTTL),
	)
}
