package twilio

import (
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
	// DefaultBaseURL is Twilio's REST API.
	DefaultBaseURL = "https://api.twilio.com"
	// DefaultTimeout bounds one Send.
	DefaultTimeout = 10 * time.Second
)

// Config configures a Client. AccountSID, credentials (AuthToken, or
// APIKeySID and APIKeySecret) and exactly one sender (From or
// MessagingServiceSID) are required.
type Config struct {
	// AccountSID is the account the messages are sent from ("AC…"). It is
	// part of the request path, and the Basic-auth user with AuthToken.
	AccountSID string
	// AuthToken is the account's auth token. Without an API key it is the
	// Basic-auth password; with one it only verifies the status callbacks,
	// which Twilio signs with the account's auth token whatever
	// credentials sent the message. It is a secret: Config's String,
	// Format and LogValue never print it.
	AuthToken string
	// APIKeySID ("SK…") and APIKeySecret are an API key, which Twilio
	// recommends over the auth token (it can be revoked alone): the
	// Basic-auth user and password, the account still named by AccountSID
	// in the path. APIKeySecret is a secret like AuthToken.
	APIKeySID    string
	APIKeySecret string
	// From is the sender: an E.164 Twilio number, a short code or an
	// alphanumeric sender id. Exactly one of From and MessagingServiceSID.
	From string
	// MessagingServiceSID ("MG…") sends through a Messaging Service, which
	// picks the sender from its pool, instead of From.
	MessagingServiceSID string
	// BaseURL is the API base URL, DefaultBaseURL if empty. Tests and
	// `herald emulate twilio` users point it at an Emulator.
	BaseURL string
	// StatusCallback, if set, is the URL Twilio POSTs delivery status
	// changes to (signed with X-Twilio-Signature; see ValidateSignature):
	// Herald's POST /v1/providers/twilio/status as the internet reaches it.
	// Each message's callback is this URL with the delivery's key added as
	// the query parameter "delivery", so the signed URL names the delivery.
	// It needs AuthToken, to verify the signatures.
	StatusCallback string
	// HTTPClient sends the requests; a client with a pool sized for a busy
	// sender if nil. Its Timeout, if any, applies in addition to Timeout.
	HTTPClient *http.Client
	// Timeout bounds one Send; DefaultTimeout if zero.
	Timeout time.Duration
	// Now is the clock, time.Now if nil. It resolves HTTP-date Retry-After
	// values.
	Now func() time.Time
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	createURL string
}

// validate checks c and fills in defaults. Error messages name the bad
// setting but never quote the auth token.
func (c Config) validate() (*resolved, error) {
	r := &resolved{Config: c}
	switch {
	case c.AccountSID == "":
		return nil, errors.New("twilio: AccountSID is required")
	case strings.ContainsAny(c.AccountSID, "/?#%: "):
		return nil, fmt.Errorf("twilio: AccountSID %q contains characters not allowed in an account SID", c.AccountSID)
	case c.APIKeySID == "" && c.APIKeySecret != "":
		return nil, errors.New("twilio: APIKeySecret is set without APIKeySID")
	case c.APIKeySID != "" && (!strings.HasPrefix(c.APIKeySID, "SK") || strings.ContainsAny(c.APIKeySID, "/?#%: ")):
		return nil, fmt.Errorf("twilio: APIKeySID %q is not an API key SID (\"SK…\")", c.APIKeySID)
	case c.APIKeySID != "" && c.APIKeySecret == "":
		return nil, errors.New("twilio: APIKeySecret is required with APIKeySID")
	case c.APIKeySID == "" && c.AuthToken == "":
		return nil, errors.New("twilio: AuthToken (or APIKeySID and APIKeySecret) is required")
	case c.From == "" && c.MessagingServiceSID == "":
		return nil, errors.New("twilio: one of From and MessagingServiceSID is required")
	case c.From != "" && c.MessagingServiceSID != "":
		return nil, errors.New("twilio: set exactly one of From and MessagingServiceSID, not both")
	case c.StatusCallback != "" && c.AuthToken == "":
		return nil, errors.New("twilio: StatusCallback needs AuthToken, which Twilio signs status callbacks with (also with an API key)")
	case c.MessagingServiceSID != "" && !strings.HasPrefix(c.MessagingServiceSID, "MG"):
		return nil, fmt.Errorf("twilio: MessagingServiceSID %q does not start with \"MG\"", c.MessagingServiceSID)
	}
	if r.BaseURL == "" {
		r.BaseURL = DefaultBaseURL
	}
	if !httpURL(r.BaseURL) {
		return nil, fmt.Errorf("twilio: BaseURL %q is not an http(s) URL", r.BaseURL)
	}
	if r.StatusCallback != "" && (!httpURL(r.StatusCallback) || strings.Contains(r.StatusCallback, "#")) {
		return nil, fmt.Errorf("twilio: StatusCallback %q is not an http(s) URL without a fragment", r.StatusCallback)
	}
	r.createURL = strings.TrimSuffix(r.BaseURL, "/") + "/2010-04-01/Accounts/" + r.AccountSID + "/Messages.json"
	switch {
	case r.Timeout < 0:
		return nil, fmt.Errorf("twilio: Timeout %v is negative", r.Timeout)
	case r.Timeout == 0:
		r.Timeout = DefaultTimeout
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}

// httpURL reports whether s is an absolute http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// String describes c without its auth token.
func (c Config) String() string {
	redacted := func(secret string) string {
		if secret == "" {
			return "none"
		}
		return "[redacted]"
	}
	return fmt.Sprintf("twilio.Config{AccountSID:%q AuthToken:%s APIKeySID:%q APIKeySecret:%s From:%q MessagingServiceSID:%q BaseURL:%q StatusCallback:%q Timeout:%v}",
		c.AccountSID, redacted(c.AuthToken), c.APIKeySID, redacted(c.APIKeySecret), c.From, c.MessagingServiceSID,
		c.BaseURL, c.StatusCallback, c.Timeout)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the auth token.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the auth token out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("account_sid", c.AccountSID),
		slog.Bool("auth_token_set", c.AuthToken != ""),
		slog.String("api_key_sid", c.APIKeySID),
		slog.Bool("api_key_secret_set", c.APIKeySecret != ""),
		slog.String("from", c.From),
		slog.String("messaging_service_sid", c.MessagingServiceSID),
		slog.String("base_url", c.BaseURL),
		slog.String("status_callback", c.StatusCallback),
		slog.Duration("timeout", c.Timeout),
	)
}
