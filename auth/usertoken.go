package auth

import (
	"crypto/elliptic"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/heraldtype"
)

// A user token is a JWT the customer's backend signs for one of its users,
// so the user's app can call Herald directly for its own devices, inbox
// and preferences — and nobody else's. Herald only verifies: sub is the
// user id, exp is required, the key is chosen by kid so keys can rotate.
const (
	AlgHS256 = "HS256"
	AlgES256 = "ES256"
	// DefaultMaxLifetime caps how far in the future exp may be: a user
	// token is a session credential, not a permanent one.
	DefaultMaxLifetime = 30 * 24 * time.Hour
	// DefaultLeeway tolerates clock skew between Herald and the signer.
	DefaultLeeway = 30 * time.Second
	// MaxUserTokenBytes bounds what is parsed at all; real tokens are a
	// few hundred bytes.
	MaxUserTokenBytes = 8 << 10
	// minHMACSecret is RFC 7518 §3.2's minimum for HS256: a key at least
	// as long as the hash.
	minHMACSecret = 32
	maxSubjectLen = 128
)

// UserTokenKey is one key user tokens may be signed with.
type UserTokenKey struct {
	// ID is the JWT header's kid. Required when more than one key is
	// configured; with one key, a token without kid uses it.
	ID string
	// Algorithm is HS256 or ES256; a token must use its key's algorithm.
	Algorithm string
	// Secret is the HS256 shared secret, at least 32 bytes.
	Secret []byte
	// PublicKeyPEM is the ES256 (P-256) public key, PEM "PUBLIC KEY".
	PublicKeyPEM []byte
}

// UserTokenConfig configures UserTokens.
type UserTokenConfig struct {
	// Keys that may sign user tokens. At least one.
	Keys []UserTokenKey
	// Issuer, when set, must equal the token's iss.
	Issuer string
	// Audience, when set, must be one of the token's aud.
	Audience string
	// MaxLifetime: exp may be at most this far after iat and after now.
	// Default DefaultMaxLifetime.
	MaxLifetime time.Duration
	// Leeway for exp, nbf and iat. Default DefaultLeeway.
	Leeway time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// UserClaims is what a verified user token says.
type UserClaims struct {
	// Subject is the user id the token speaks for.
	Subject   string
	ExpiresAt time.Time
	KeyID     string
}

// UserTokens verifies user tokens. It is safe for concurrent use.
type UserTokens struct {
	keys   map[string]verifyKey
	single string // the kid used by a token without one, when exactly one key exists
	parser *jwt.Parser
	cfg    UserTokenConfig
}

type verifyKey struct {
	alg string
	key any // []byte (HS256) or *ecdsa.PublicKey (ES256)
}

// NewUserTokens validates cfg and builds a verifier. Errors name the key
// by its kid, never by its material.
func NewUserTokens(cfg UserTokenConfig) (*UserTokens, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("auth: at least one user token key is required")
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = DefaultLeeway
	}
	if cfg.MaxLifetime < 0 || cfg.Leeway < 0 {
		return nil, errors.New("auth: user token MaxLifetime and Leeway must not be negative")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := &UserTokens{keys: map[string]verifyKey{}, cfg: cfg}
	for _, k := range cfg.Keys {
		if k.ID == "" && len(cfg.Keys) > 1 {
			return nil, errors.New("auth: with several user token keys, each needs a kid")
		}
		if _, dup := v.keys[k.ID]; dup {
			return nil, fmt.Errorf("auth: user token key %q is configured twice", k.ID)
		}
		vk, err := newVerifyKey(k)
		if err != nil {
			return nil, err
		}
		v.keys[k.ID] = vk
	}
	if len(cfg.Keys) == 1 {
		v.single = cfg.Keys[0].ID
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{AlgHS256, AlgES256}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

func newVerifyKey(k UserTokenKey) (verifyKey, error) {
	switch k.Algorithm {
	case AlgHS256:
		if len(k.PublicKeyPEM) > 0 {
			return verifyKey{}, fmt.Errorf("auth: user token key %q: HS256 takes a secret, not a public key", k.ID)
		}
		if len(k.Secret) < minHMACSecret {
			return verifyKey{}, fmt.Errorf("auth: user token key %q: an HS256 secret must be at least %d bytes (it has %d)", k.ID, minHMACSecret, len(k.Secret))
		}
		return verifyKey{alg: AlgHS256, key: append([]byte(nil), k.Secret...)}, nil
	case AlgES256:
		if len(k.Secret) > 0 {
			return verifyKey{}, fmt.Errorf("auth: user token key %q: ES256 takes a public key, not a secret", k.ID)
		}
		pub, err := jwt.ParseECPublicKeyFromPEM(k.PublicKeyPEM)
		if err != nil {
			return verifyKey{}, fmt.Errorf("auth: user token key %q: the public key is not a PEM EC public key", k.ID)
		}
		if pub.Curve != elliptic.P256() {
			return verifyKey{}, fmt.Errorf("auth: user token key %q: ES256 needs a P-256 key", k.ID)
		}
		return verifyKey{alg: AlgES256, key: pub}, nil
	}
	return verifyKey{}, fmt.Errorf("auth: user token key %q: algorithm %q must be HS256 or ES256", k.ID, k.Algorithm)
}

// userTokenError is an unauthenticated error about a user token.
func userTokenError(format string, args ...any) error {
	return heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, "user token: "+format, args...)
}

// Verify checks a user token and returns its claims, or an
// unauthenticated error saying what is wrong (never echoing the token).
func (v *UserTokens) Verify(token string) (UserClaims, error) {
	if len(token) > MaxUserTokenBytes {
		return UserClaims{}, userTokenError("longer than %d bytes", MaxUserTokenBytes)
	}
	var kid string
	var claims jwt.RegisteredClaims
	_, err := v.parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		if err := checkCrit(t.Header); err != nil {
			return nil, err
		}
		raw, present := t.Header["kid"]
		if present {
			s, ok := raw.(string)
			if !ok {
				return nil, userTokenError("kid must be a string")
			}
			kid = s
		} else {
			if v.single == "" && len(v.keys) != 1 {
				return nil, userTokenError("kid is required (several keys are configured)")
			}
			kid = v.single
		}
		k, ok := v.keys[kid]
		if !ok {
			return nil, userTokenError("unknown kid")
		}
		if t.Method.Alg() != k.alg {
			return nil, userTokenError("kid %q is an %s key; the token says %s", kid, k.alg, t.Method.Alg())
		}
		return k.key, nil
	})
	if err != nil {
		if errors.Is(err, jwt.ErrTokenRequiredClaimMissing) {
			// The library reports every missing claim as this one error,
			// naming the claim only in prose; name it from the claims,
			// which are decoded by now (the signature verified).
			return UserClaims{}, userTokenError("%s", v.missingClaims(&claims))
		}
		return UserClaims{}, translateJWTError(err)
	}
	now := v.cfg.Now()
	exp := claims.ExpiresAt.Time
	if exp.Sub(now) > v.cfg.MaxLifetime+v.cfg.Leeway ||
		(claims.IssuedAt != nil && exp.Sub(claims.IssuedAt.Time) > v.cfg.MaxLifetime) {
		return UserClaims{}, userTokenError("lives longer than the maximum of %s; sign shorter-lived tokens", v.cfg.MaxLifetime)
	}
	sub := claims.Subject
	if sub == "" || len(sub) > maxSubjectLen || !utf8.ValidString(sub) || strings.ContainsAny(sub, "/\\?#%") {
		return UserClaims{}, userTokenError("sub must be a user id (1 to %d bytes, no / \\ ? # %%)", maxSubjectLen)
	}
	for _, r := range sub {
		if r <= ' ' || heraldtype.Unprintable(r) || unicode.IsSpace(r) {
			return UserClaims{}, userTokenError("sub must not contain whitespace, control, format or bidi characters")
		}
	}
	return UserClaims{Subject: sub, ExpiresAt: exp, KeyID: kid}, nil
}

// missingClaims says which of the claims the parser requires c lacks:
// exp always, iss and aud when configured.
func (v *UserTokens) missingClaims(c *jwt.RegisteredClaims) string {
	var missing []string
	if c.ExpiresAt == nil {
		missing = append(missing, "exp")
	}
	if v.cfg.Issuer != "" && c.Issuer == "" {
		missing = append(missing, "iss")
	}
	if v.cfg.Audience != "" && (len(c.Audience) == 0 || len(c.Audience) == 1 && c.Audience[0] == "") {
		missing = append(missing, "aud")
	}
	switch len(missing) {
	case 0:
		return "a required claim is missing"
	case 1:
		return missing[0] + " is required"
	}
	return strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1] + " are required"
}

// checkCrit refuses a token whose header has crit. RFC 7515 §4.1.11: crit
// lists header extensions the recipient must understand or else reject
// the token; Herald understands none, so any crit is refused — a
// well-formed one because its extensions may change what the signature
// means (b64, RFC 7797), a malformed one (not a non-empty array of
// non-empty strings) because the RFC says so. The names are not echoed:
// they are the caller's text.
func checkCrit(h map[string]any) error {
	raw, present := h["crit"]
	if !present {
		return nil
	}
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		return userTokenError("crit must be a non-empty array of header parameter names (RFC 7515 §4.1.11)")
	}
	for _, x := range list {
		if s, ok := x.(string); !ok || s == "" {
			return userTokenError("crit must be a non-empty array of header parameter names (RFC 7515 §4.1.11)")
		}
	}
	return userTokenError("crit lists %d critical header extension(s); Herald understands none, so it cannot verify the token", len(list))
}

// translateJWTError turns the jwt library's errors into stable messages.
func translateJWTError(err error) error {
	var he *heraldtype.Error
	if errors.As(err, &he) {
		return he
	}
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return userTokenError("malformed; send a JWT (header.payload.signature)")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		// Also what the library says for an algorithm outside the list
		// (none, RS256, …).
		return userTokenError("the signature does not verify, or the algorithm is not HS256 or ES256")
	case errors.Is(err, jwt.ErrTokenExpired):
		return userTokenError("expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return userTokenError("not valid yet (nbf)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return userTokenError("issued in the future (iat)")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return userTokenError("wrong issuer (iss)")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return userTokenError("wrong audience (aud)")
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return userTokenError("cannot be verified")
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		return userTokenError("invalid claims")
	}
	return userTokenError("not valid")
}
