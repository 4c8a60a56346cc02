package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

var (
	testNow    = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	hmacSecret = []byte("0123456789abcdef0123456789abcdef-secret")
)

// sign makes a token with the given header fields and claims.
func sign(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func claims(sub string, exp time.Time) jwt.MapClaims {
	return jwt.MapClaims{"sub": sub, "exp": exp.Unix(), "iat": testNow.Unix()}
}

func ecKey(t testing.TB) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return priv, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func newVerifier(t testing.TB, pubPEM []byte, mod func(*auth.UserTokenConfig)) *auth.UserTokens {
	t.Helper()
	cfg := auth.UserTokenConfig{
		Keys: []auth.UserTokenKey{
			{ID: "h1", Algorithm: auth.AlgHS256, Secret: hmacSecret},
			{ID: "e1", Algorithm: auth.AlgES256, PublicKeyPEM: pubPEM},
		},
		Now: func() time.Time { return testNow },
	}
	if mod != nil {
		mod(&cfg)
	}
	v, err := auth.NewUserTokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUserTokenValid(t *testing.T) {
	priv, pub := ecKey(t)
	v := newVerifier(t, pub, nil)
	exp := testNow.Add(time.Hour)
	for name, tok := range map[string]string{
		"HS256": sign(t, jwt.SigningMethodHS256, hmacSecret, "h1", claims("alice", exp)),
		"ES256": sign(t, jwt.SigningMethodES256, priv, "e1", claims("alice", exp)),
	} {
		c, err := v.Verify(tok)
		if err != nil || c.Subject != "alice" || !c.ExpiresAt.Equal(exp) {
			t.Errorf("%s: %+v, %v", name, c, err)
		}
	}
}

// Every way a token can be wrong is unauthenticated, with a message that
// never contains the token.
func TestUserTokenRejected(t *testing.T) {
	priv, pub := ecKey(t)
	otherPriv, _ := ecKey(t)
	v := newVerifier(t, pub, func(c *auth.UserTokenConfig) { c.Issuer = "shop"; c.Audience = "herald" })
	good := func() jwt.MapClaims {
		c := claims("alice", testNow.Add(time.Hour))
		c["iss"], c["aud"] = "shop", "herald"
		return c
	}
	with := func(k string, val any) jwt.MapClaims {
		c := good()
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, hmacSecret, "h1", c) }
	none := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "h1", good())
	// HS256 signed with the ES256 key's public PEM as the HMAC secret: the
	// classic algorithm-confusion attack.
	confused := sign(t, jwt.SigningMethodHS256, pub, "e1", good())
	parts := strings.Split(hs(good()), ".")
	cases := map[string]string{
		"empty":              "",
		"garbage":            "not a token",
		"two parts":          parts[0] + "." + parts[1],
		"bad base64":         parts[0] + ".%%%." + parts[2],
		"alg none":           none,
		"alg confusion":      confused,
		"unknown kid":        sign(t, jwt.SigningMethodHS256, hmacSecret, "zz", good()),
		"wrong secret":       sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 40)), "h1", good()),
		"ES256 wrong key":    sign(t, jwt.SigningMethodES256, otherPriv, "e1", good()),
		"ES256 under HS kid": sign(t, jwt.SigningMethodES256, priv, "h1", good()),
		"no kid, two keys":   sign(t, jwt.SigningMethodHS256, hmacSecret, "", good()),
		"expired":            hs(with("exp", testNow.Add(-time.Hour).Unix())),
		"no exp":             hs(with("exp", nil)),
		"exp as string":      hs(with("exp", "tomorrow")),
		"huge exp":           hs(with("exp", 1e300)),
		"negative exp":       hs(with("exp", -1)),
		"too long lived":     hs(with("exp", testNow.Add(31*24*time.Hour).Unix())),
		"not yet valid":      hs(with("nbf", testNow.Add(time.Hour).Unix())),
		"issued in future":   hs(with("iat", testNow.Add(time.Hour).Unix())),
		"wrong issuer":       hs(with("iss", "evil")),
		"no audience":        hs(with("aud", nil)),
		"wrong audience":     hs(with("aud", []string{"other"})),
		"no sub":             hs(with("sub", nil)),
		"sub not string":     hs(with("sub", 42)),
		"sub path traversal": hs(with("sub", "../bob")),
		"sub with slash":     hs(with("sub", "a/b")),
		"sub too long":       hs(with("sub", strings.Repeat("a", 129))),
		"sub control char":   hs(with("sub", "a\nb")),
		"oversized":          hs(with("pad", strings.Repeat("x", auth.MaxUserTokenBytes))),
		"kid not string":     signHeader(t, map[string]any{"alg": "HS256", "kid": 7}, good()),
		"tampered payload":   parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"bob","exp":9999999999}`)) + "." + parts[2],
		"header not json":    base64.RawURLEncoding.EncodeToString([]byte("{")) + "." + parts[1] + "." + parts[2],
		"alg RS256":          signHeader(t, map[string]any{"alg": "RS256", "kid": "h1"}, good()),
	}
	for name, tok := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := v.Verify(tok)
			wantCode(t, err, heraldtype.EUNAUTHENTICATED)
			if len(tok) > 20 && strings.Contains(err.Error(), tok[len(tok)-20:]) {
				t.Fatalf("the error echoes the token: %v", err)
			}
		})
	}
}

// signHeader builds a token with an arbitrary header, HMAC-signed with the
// test secret, for headers the jwt library would not produce.
func signHeader(t *testing.T, header map[string]any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header = header
	s, err := tok.SigningString()
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jwt.SigningMethodHS256.Sign(s, hmacSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// With a single key, kid may be left out; rotation adds a second key and
// then every token must name its key.
func TestUserTokenRotation(t *testing.T) {
	one, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: []auth.UserTokenKey{{ID: "k1", Algorithm: auth.AlgHS256, Secret: hmacSecret}}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Verify(sign(t, jwt.SigningMethodHS256, hmacSecret, "", claims("a", testNow.Add(time.Hour)))); err != nil {
		t.Fatalf("single key without kid: %v", err)
	}
	newSecret := []byte(strings.Repeat("n", 32))
	two, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: []auth.UserTokenKey{
		{ID: "k1", Algorithm: auth.AlgHS256, Secret: hmacSecret}, {ID: "k2", Algorithm: auth.AlgHS256, Secret: newSecret},
	}, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	for kid, secret := range map[string][]byte{"k1": hmacSecret, "k2": newSecret} {
		if _, err := two.Verify(sign(t, jwt.SigningMethodHS256, secret, kid, claims("a", testNow.Add(time.Hour)))); err != nil {
			t.Errorf("kid %s during rotation: %v", kid, err)
		}
	}
}

func TestUserTokenConfigErrors(t *testing.T) {
	_, pub := ecKey(t)
	secret := "a-secret-that-must-never-appear-in-errors"
	bad := map[string][]auth.UserTokenKey{
		"no keys":         nil,
		"short secret":    {{ID: "k", Algorithm: auth.AlgHS256, Secret: []byte("short")}},
		"unknown alg":     {{ID: "k", Algorithm: "RS256", Secret: []byte(secret)}},
		"none alg":        {{ID: "k", Algorithm: "none"}},
		"bad pem":         {{ID: "k", Algorithm: auth.AlgES256, PublicKeyPEM: []byte(secret)}},
		"es with secret":  {{ID: "k", Algorithm: auth.AlgES256, PublicKeyPEM: pub, Secret: []byte(secret)}},
		"hs with pem":     {{ID: "k", Algorithm: auth.AlgHS256, PublicKeyPEM: pub, Secret: []byte(secret)}},
		"duplicate kid":   {{ID: "k", Algorithm: auth.AlgHS256, Secret: []byte(secret)}, {ID: "k", Algorithm: auth.AlgHS256, Secret: []byte(secret)}},
		"missing kid of2": {{Algorithm: auth.AlgHS256, Secret: []byte(secret)}, {ID: "k", Algorithm: auth.AlgHS256, Secret: []byte(secret)}},
	}
	for name, keys := range bad {
		_, err := auth.NewUserTokens(auth.UserTokenConfig{Keys: keys})
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error echoes the secret: %v", name, err)
		}
	}
}

// Herald understands no JWS extension, so a token whose header has crit is
// refused whatever it lists (RFC 7515 §4.1.11: a recipient must reject
// critical extensions it does not understand); a malformed crit — not a
// non-empty array of strings — is refused too, and the message names crit
// (issue 18). The signature is valid in every case.
func TestUserTokenCrit(t *testing.T) {
	_, pub := ecKey(t)
	v := newVerifier(t, pub, nil)
	good := claims("alice", testNow.Add(time.Hour))
	for name, crit := range map[string]any{
		"unknown extension":  []any{"b64"},
		"two extensions":     []any{"exp", "x-herald"},
		"registered name":    []any{"alg"},
		"empty array":        []any{},
		"string, not array":  "b64",
		"number in array":    []any{1},
		"empty string":       []any{""},
		"null":               nil,
		"object":             map[string]any{"b64": true},
		"listed and present": []any{"b64"},
	} {
		t.Run(name, func(t *testing.T) {
			h := map[string]any{"alg": "HS256", "kid": "h1", "crit": crit}
			if name == "listed and present" {
				h["b64"] = true
			}
			_, err := v.Verify(signHeader(t, h, good))
			wantCode(t, err, heraldtype.EUNAUTHENTICATED)
			if !strings.Contains(err.Error(), "crit") {
				t.Errorf("the refusal %q does not name crit", err)
			}
		})
	}
	if _, err := v.Verify(signHeader(t, map[string]any{"alg": "HS256", "kid": "h1"}, good)); err != nil {
		t.Fatalf("the same token without crit: %v", err)
	}
}

// A missing iss or aud is named as such, not as a missing exp (the jwt
// library reports every missing claim as one error kind) (issue 18).
func TestUserTokenMissingClaimNamed(t *testing.T) {
	_, pub := ecKey(t)
	v := newVerifier(t, pub, func(c *auth.UserTokenConfig) { c.Issuer = "shop"; c.Audience = "herald" })
	full := func(drop ...string) jwt.MapClaims {
		c := claims("alice", testNow.Add(time.Hour))
		c["iss"], c["aud"] = "shop", "herald"
		for _, k := range drop {
			delete(c, k)
		}
		return c
	}
	for name, tc := range map[string]struct {
		c         jwt.MapClaims
		want, not []string
	}{
		"no iss":         {full("iss"), []string{"iss is required"}, []string{"exp", "aud"}},
		"no aud":         {full("aud"), []string{"aud is required"}, []string{"exp", "iss"}},
		"empty aud":      {func() jwt.MapClaims { c := full(); c["aud"] = ""; return c }(), []string{"aud is required"}, []string{"exp"}},
		"no exp":         {full("exp"), []string{"exp is required"}, []string{"iss", "aud"}},
		"no iss, no aud": {full("iss", "aud"), []string{"iss", "aud", "required"}, []string{"exp"}},
		"no iss, expired": {func() jwt.MapClaims { c := full("iss"); c["exp"] = testNow.Add(-time.Hour).Unix(); return c }(),
			[]string{"iss is required"}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.Verify(sign(t, jwt.SigningMethodHS256, hmacSecret, "h1", tc.c))
			wantCode(t, err, heraldtype.EUNAUTHENTICATED)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("%q mentions %q", err, n)
				}
			}
		})
	}
}
