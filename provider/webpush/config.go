package webpush

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultTimeout bounds one send.
	DefaultTimeout = 10 * time.Second
	// MaxTTL is the longest time to live Herald asks for: four weeks, what
	// FCM's and Mozilla's push services keep a message at most. It is also
	// the default.
	MaxTTL = 28 * 24 * time.Hour
)

// Config configures a Client. VAPIDPublicKey, VAPIDPrivateKey and Subject
// are required.
type Config struct {
	// VAPIDPublicKey and VAPIDPrivateKey are the application server's
	// key pair (RFC 8292), base64url as GenerateVAPIDKeys prints them. The
	// public key is the applicationServerKey the web app subscribes with;
	// changing it orphans every existing subscription. The private key is
	// a secret: Config's String, Format and LogValue never print it.
	VAPIDPublicKey  string
	VAPIDPrivateKey string
	// Subject is the VAPID "sub" claim, a contact for the push service's
	// operators: a "mailto:" or "https:" URI. It is sent verbatim.
	Subject string
	// HTTPClient sends the requests. If nil, a client with a connection
	// pool sized for a busy sender, no redirects and (unless
	// AllowPrivateEndpoints) the dial-time address guard is used. A
	// client given here is used as is: the guard is then up to it.
	HTTPClient *http.Client
	// Timeout bounds one Send; DefaultTimeout if zero.
	Timeout time.Duration
	// DefaultTTL is the TTL header: how long the push service keeps a
	// message for an offline browser. MaxTTL if zero; at most MaxTTL.
	DefaultTTL time.Duration
	// TopicDataKey, if set, names the notification data key whose value
	// becomes the Topic header, so a newer message replaces an undelivered
	// one with the same topic (RFC 8030 §5.4). A value that is not already
	// at most 32 base64url characters is hashed into one.
	TopicDataKey string
	// AllowInsecureEndpoints accepts http:// subscription endpoints. Real
	// push services are all https; only an Emulator served over plain
	// HTTP needs this.
	AllowInsecureEndpoints bool
	// AllowPrivateEndpoints lets Herald post to endpoints on loopback,
	// private, link-local and other non-public addresses: every range of
	// the IANA special-purpose registries that is not globally reachable,
	// with NAT64, 6to4 and IPv4-compatible IPv6 judged as the IPv4 address
	// inside them (address.go).
	//
	// Subscription endpoints come from browsers, that is from anyone who
	// can register a web device, and Herald POSTs to them: without this
	// guard a crafted "subscription" turns Herald into a request forger
	// against its own network (cloud metadata at 169.254.169.254, admin
	// ports on localhost). So by default such endpoints are refused, both
	// by name (IP literals, "localhost") and by the address actually
	// dialled (which also defeats DNS names resolving or rebinding to
	// internal addresses). Set it for an Emulator on loopback, or when
	// egress is filtered elsewhere (e.g. Herald sends through a proxy on
	// a private address, which the dial-time guard would also refuse).
	AllowPrivateEndpoints bool
	// Now is the clock, time.Now if nil. It dates VAPID tokens and
	// resolves HTTP-date Retry-After values.
	Now func() time.Time
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	key       *ecdsa.PrivateKey
	publicKey []byte
}

// validate checks c and fills in defaults. Errors never quote the private
// key.
func (c Config) validate() (*resolved, error) {
	key, pub, err := parseVAPIDKeys(c.VAPIDPublicKey, c.VAPIDPrivateKey)
	if err != nil {
		return nil, err
	}
	r := &resolved{Config: c, key: key, publicKey: pub}
	if err := checkSubject(c.Subject); err != nil {
		return nil, err
	}
	switch {
	case r.Timeout < 0:
		return nil, fmt.Errorf("webpush: Timeout %v is negative", r.Timeout)
	case r.Timeout == 0:
		r.Timeout = DefaultTimeout
	}
	switch {
	case r.DefaultTTL < 0 || r.DefaultTTL > MaxTTL:
		return nil, fmt.Errorf("webpush: DefaultTTL %v is outside 0..%v", r.DefaultTTL, MaxTTL)
	case r.DefaultTTL == 0:
		r.DefaultTTL = MaxTTL
	case r.DefaultTTL < time.Second:
		return nil, fmt.Errorf("webpush: DefaultTTL %v is under the header's one-second resolution", r.DefaultTTL)
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	return r, nil
}

// checkSubject enforces RFC 8292 §2.1: the contact is a mailto: or https:
// URI. Herald does not add a prefix itself (webpush-go's "mailto:" prefix
// breaks https: subjects), so a bare address is an error here.
func checkSubject(s string) error {
	switch {
	case s == "":
		return errors.New(`webpush: Subject is required: a "mailto:" or "https:" contact URI (RFC 8292 §2.1)`)
	case strings.HasPrefix(s, "mailto:") && len(s) > len("mailto:"):
	case strings.HasPrefix(s, "https://") && len(s) > len("https://"):
	default:
		return fmt.Errorf(`webpush: Subject %q is not a "mailto:" or "https:" URI (RFC 8292 §2.1)`, s)
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return fmt.Errorf("webpush: Subject %q contains white space", s)
	}
	return nil
}

// String describes c without its private key.
func (c Config) String() string {
	priv := "none"
	if c.VAPIDPrivateKey != "" {
		priv = "[redacted]"
	}
	return fmt.Sprintf("webpush.Config{VAPIDPublicKey:%q VAPIDPrivateKey:%s Subject:%q Timeout:%v DefaultTTL:%v TopicDataKey:%q AllowInsecureEndpoints:%v AllowPrivateEndpoints:%v}",
		c.VAPIDPublicKey, priv, c.Subject, c.Timeout, c.DefaultTTL, c.TopicDataKey, c.AllowInsecureEndpoints, c.AllowPrivateEndpoints)
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q) print String, so a
// Config dumped into a log or an error never shows the private key.
func (c Config) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// LogValue keeps the private key out of slog output.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("vapid_public_key", c.VAPIDPublicKey),
		slog.Bool("vapid_private_key_set", c.VAPIDPrivateKey != ""),
		slog.String("subject", c.Subject),
		slog.Duration("timeout", c.Timeout),
		slog.Duration("default_ttl", c.DefaultTTL),
		slog.Bool("allow_insecure_endpoints", c.AllowInsecureEndpoints),
		slog.Bool("allow_private_endpoints", c.AllowPrivateEndpoints),
	)
}
