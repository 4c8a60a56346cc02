package auth_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// FuzzVerifyUserToken feeds arbitrary strings to the user-token verifier:
// it must never panic, must answer every failure with unauthenticated, and
// may only accept a token that really carries a subject and an expiry in
// range, the configured iss and aud, and no crit header. The committed
// corpus is in testdata/fuzz/FuzzVerifyUserToken (its crit_*, no_iss* and
// no_aud seeds are validly signed, so they reach those checks).
func FuzzVerifyUserToken(f *testing.F) {
	_, pub := ecKey(f)
	v := newVerifier(f, pub, func(c *auth.UserTokenConfig) { c.Issuer = "shop"; c.Audience = "herald" })
	f.Add(sign(f, jwt.SigningMethodHS256, hmacSecret, "h1", claims("alice", testNow.Add(time.Hour))))
	withIssAud := claims("alice", testNow.Add(time.Hour))
	withIssAud["iss"], withIssAud["aud"] = "shop", "herald"
	f.Add(sign(f, jwt.SigningMethodHS256, hmacSecret, "h1", withIssAud))
	f.Add(sign(f, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "h1", claims("alice", testNow.Add(time.Hour))))
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.")
	f.Add("a.b.c")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := v.Verify(token)
		if err != nil {
			var he *heraldtype.Error
			if !errors.As(err, &he) || he.Code != heraldtype.EUNAUTHENTICATED {
				t.Fatalf("error %v is not unauthenticated", err)
			}
			return
		}
		if c.Subject == "" || strings.ContainsAny(c.Subject, "/\\?#% \n") || !c.ExpiresAt.After(testNow.Add(-time.Minute)) {
			t.Fatalf("accepted claims %+v", c)
		}
		var rc jwt.RegisteredClaims
		tok, _, err := jwt.NewParser().ParseUnverified(token, &rc)
		if err != nil {
			t.Fatalf("accepted a token the library cannot even decode: %v", err)
		}
		if _, crit := tok.Header["crit"]; crit {
			t.Fatalf("accepted a token with crit %v", tok.Header["crit"])
		}
		if rc.Issuer != "shop" || !slices.Contains(rc.Audience, "herald") {
			t.Fatalf("accepted iss %q aud %q", rc.Issuer, rc.Audience)
		}
	})
}
