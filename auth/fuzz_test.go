package auth_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/heraldhq/herald/heraldtype"
)

// FuzzVerifyUserToken feeds arbitrary strings to the user-token verifier:
// it must never panic, must answer every failure with unauthenticated, and
// may only accept a token that really carries a subject and an expiry in
// range. The committed corpus is in testdata/fuzz/FuzzVerifyUserToken.
func FuzzVerifyUserToken(f *testing.F) {
	_, pub := ecKey(f)
	v := newVerifier(f, pub, nil)
	f.Add(sign(f, jwt.SigningMethodHS256, hmacSecret, "h1", claims("alice", testNow.Add(time.Hour))))
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
	})
}
