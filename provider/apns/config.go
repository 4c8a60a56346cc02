package apns

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Environment selects Apple's production or development (sandbox) push
// service. A device token is only valid in the environment the app was
// built for: a debug build's token sent to production (or the reverse) is
// answered BadDeviceToken.
type Environment string

const (
	// Production is api.push.apple.com: App Store, TestFlight and ad-hoc
	// builds.
	Production Environment = "production"
	// Sandbox is api.sandbox.push.apple.com: builds signed for development.
	Sandbox Environment = "sandbox"
)

// Endpoints of the two environments.
const (
	ProductionEndpoint = "https://api.push.apple.com"
	SandboxEndpoint    = "https://api.sandbox.push.apple.com"
)

// Defaults and limits of Config.
const (
	// DefaultTimeout bounds one send.
	DefaultTimeout = 10 * time.Second
	// DefaultTTL is how long APNs keeps a message for an offline device
	// unless Config.DefaultTTL says otherwise. Apple publishes no maximum;
	// four weeks matches FCM's longest TTL, so a notification lives as long
	// whichever provider carries it.
	DefaultTTL = 28 * 24 * time.Hour
)

// Config configures a Client. KeyP8, KeyID, TeamID and Topic are required.
type Config struct {
	// KeyP8 is the token-signing key downloaded from Apple's developer
	// portal (AuthKey_<KeyID>.p8): a PEM "PRIVATE KEY" block holding a
	// PKCS#8 P-256 key. It is a secret: Config's String, Format and
	// LogValue never print it.
	KeyP8 []byte
	// KeyID is the 10-character id of KeyP8 (the JWT's kid).
	KeyID string
	// TeamID is the 10-character Apple developer team id (the JWT's iss).
	TeamID string
	// Topic is the app's bundle id, sent as apns-topic.
	Topic string
	// Environment is Production (the default) or Sandbox.
	Environment Environment
	// Endpoint overrides the environment's base URL (https://host[:port]),
	// e.g. to send to an Emulator.
	Endpoint string
	// RootCAs, if set, is the set of CAs the Client trusts instead of the
	// system's: an Emulator's CertPool. It cannot be combined with
	// HTTPClient.
	RootCAs *x509.CertPool
	// HTTPClient sends the requests. If nil, a client speaking HTTP/2 over
	// TLS with a connection pool sized for a busy sender is used. Its
	// transport must negotiate HTTP/2: APNs speaks nothing else.
	HTTPClient *http.Client
	// Timeout bounds one Send; DefaultTimeout if zero.
	Timeout time.Duration
	// DefaultTTL sets apns-expiration to now + DefaultTTL; the package's
	// DefaultTTL if zero.
	DefaultTTL time.Duration
	// Now is the clock, time.Now if nil. It dates the provider token (and
	// so decides when it is refreshed) and apns-expiration.
	Now func() time.Time
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	key     *ecdsa.PrivateKey
	baseURL string // endpoint + "/3/device/"
}

// validate checks c and fills in defaults. Error messages name the bad
// setting but never quote the key.
func (c Config) validate() (*resolved, error) {
	r := &resolved{Config: c}
	key, err := parseKeyP8(c.KeyP8)
	if err != nil {
		return nil, err
	}
	r.key = key
	if !appleID(c.KeyID) {
		return nil, fmt.Errorf("apns: KeyID %q is not a 10-character Apple key id (A-Z, 0-9)", c.KeyID)
	}
	if !appleID(c.TeamID) {
		return nil, fmt.Errorf("apns: TeamID %q is not a 10-character Apple team id (A-Z, 0-9)", c.TeamID)
	}
	if c.Topic == "" {
		return nil, errors.New("apns: Topic (the app's bundle id) is required")
	}
	if strings.ContainsFunc(c.Topic, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("apns: Topic %q contains spaces or control characters", c.Topic)
	}
	switch r.Environment {
	case "":
		r.Environment = Production
		fallthrough
	case Production:
		if r.Endpoint == "" {
			r.Endpoint = ProductionEndpoint
		}
	case Sandbox:
		if r.Endpoint == "" {
			r.Endpoint = SandboxEndpoint
		}
	default:
		return nil, fmt.Errorf("apns: Environment %q is neither %q nor %q", c.Environment, Production, Sandbox)
	}
	u, err := url.Parse(r.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		// APNs speaks HTTP/2 over TLS only, and so does the Emulator.
		return nil, fmt.Errorf("apns: Endpoint %q is not an https base URL (https://host[:port])", r.Endpoint)
	}
	r.baseURL = strings.TrimSuffix(r.Endpoint, "/") + "/3/device/"
	if c.RootCAs != nil && c.HTTPClient != nil {
		return nil, errors.New("apns: set RootCAs or HTTPClient, not both (put the CAs into HTTPClient's transport)")
	}
	switch {
	case r.Timeout < 0:
		return nil, fmt.Errorf("apns: Timeout %v is negative", r.Timeout)
	case r.Timeout == 0:
		r.Timeout = DefaultTimeout
	}
	switch {
	case r.DefaultTTL < 0:
		return nil, fmt.Errorf("apns: DefaultTTL %v is negative", r.DefaultTTL)
	case r.DefaultTTL == 0:
		r.DefaultTTL = DefaultTTL
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}

// parseKeyP8 reads an Apple .p8 key. x509's errors describe the structure,
// never the key bytes, but are still not passed on verbatim.
func parseKeyP8(p8 []byte) (*ecdsa.PrivateKey, error) {
	if len(p8) == 0 {
		return nil, errors.New("apns: KeyP8 (the .p8 token-signing key) is required")
	}
	block, _ := pem.Decode(p8)
	if block == nil {
		return nil, errors.New("apns: KeyP8 is not PEM encoded (expected the contents of AuthKey_<KeyID>.p8)")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("apns: KeyP8 is not a PKCS#8 private key")
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("apns: KeyP8 is not a P-256 EC key, as APNs' ES256 tokens need")
	}
	return ec, nil
}

// appleID reports whether s looks like an Apple team or key id: ten
// characters of A-Z and 0-9.
func appleID(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// String describes c without its key.
func (c Config) String() string {
	key := "none"
	if len(c.KeyP8) > 0 {
		key = "[redacted]"
	}
	return fmt.Sprintf("apns.Config{KeyP8:%s KeyID:%q TeamID:%q Topic:%q Environment:%q Endpoint:%q Timeout:%v DefaultTTL:%v}",
		key, c.KeyID, c.TeamID, c.Topic, c.Environment, c.Endpoint, c.Timeout, c.DefaultTTL)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the key.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the key out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("key_set", len(c.KeyP8) > 0),
		slog.String("key_id", c.KeyID),
		slog.String("team_id", c.TeamID),
		slog.String("topic", c.Topic),
		slog.String("environment", string(c.Environment)),
		slog.String("endpoint", c.Endpoint),
		slog.Duration("timeout", c.Timeout),
		slog.Duration("default_ttl", c.DefaultTTL),
	)
}
