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

// Config configures a Client. AccountSID, AuthToken and one of From and
// MessagingServiceSID are required.
type Config struct {
	// AccountSID is the account the messages are sent from ("AC…"). It is
	// the Basic-auth user and part of the request path.
	AccountSID string
	// AuthToken is the account's auth token. It is a secret: Config's
	// String, Format and LogValue never print it.
	AuthToken string
	// From is the sender: an E.164 Twilio number, a short code or an
	// alphanumeric sender id.
	From string
	// MessagingServiceSID ("MG…") sends through a Messaging Service, which
	// picks the sender from its pool. When both are set, Twilio uses the
	// service and From must belong to it.
	MessagingServiceSID string
	// BaseURL is the API base URL, DefaultBaseURL if empty. Tests and
	// `herald emulate twilio` users point it at an Emulator.
	BaseURL string
	// StatusCallback, if set, is the URL Twilio POSTs delivery status
	// changes to (signed with X-Twilio-Signature; see ValidateSignature).
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
	case c.AuthToken == "":
		return nil, errors.New("twilio: AuthToken is required")
	case c.From == "" && c.MessagingServiceSID == "":
		return nil, errors.New("twilio: one of From and MessagingServiceSID is required")
	case c.MessagingServiceSID != "" && !strings.HasPrefix(c.MessagingServiceSID, "MG"):
		return nil, fmt.Errorf("twilio: MessagingServiceSID %q does not start with \"MG\"", c.MessagingServiceSID)
	}
	if r.BaseURL == "" {
		r.BaseURL = DefaultBaseURL
	}
	if !httpURL(r.BaseURL) {
		return nil, fmt.Errorf("twilio: BaseURL %q is not an http(s) URL", r.BaseURL)
	}
	if r.StatusCallback != "" && !httpURL(r.StatusCallback) {
		return nil, fmt.Errorf("twilio: StatusCallback %q is not an http(s) URL", r.StatusCallback)
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
	tok := "none"
	if c.AuthToken != "" {
		tok = "[redacted]"
	}
	return fmt.Sprintf("twilio.Config{AccountSID:%q AuthToken:%s From:%q MessagingServiceSID:%q BaseURL:%q StatusCallback:%q Timeout:%v}",
		c.AccountSID, tok, c.From, c.MessagingServiceSID, c.BaseURL, c.StatusCallback, c.Timeout)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the auth token.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the auth token out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("account_sid", c.AccountSID),
		slog.Bool("auth_token_set", c.AuthToken != ""),
		slog.String("from", c.From),
		slog.String("messaging_service_sid", c.MessagingServiceSID),
		slog.String("base_url", c.BaseURL),
		slog.String("status_callback", c.StatusCallback),
		slog.Duration("timeout", c.Timeout),
	)
}
