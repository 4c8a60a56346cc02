// Package signedtoken is the frame of Herald's signed link tokens — the
// unsubscribe links' and e-mail tracking's: "<version>.<payload>.<mac>",
// the payload and the MAC unpadded URL-safe base64, the MAC HMAC-SHA256
// over "<version>.<encoded payload>". Open is strict: exactly three parts,
// a version asked for, the base64url alphabet without padding, trailing
// bits or line breaks, a MAC of exactly 32 bytes — so one token has one
// spelling and a link altered in any byte leads nowhere. What the payload
// says is the caller's. Pure: no store, no clock.
package signedtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
)

// Errors of Open.
var (
	// ErrMalformed: not a token Seal could have written.
	ErrMalformed = errors.New("signedtoken: malformed token")
	// ErrForged: well formed, but not signed with the secret.
	ErrForged = errors.New("signedtoken: signature does not match")
)

// enc is unpadded URL-safe base64, strict (no trailing bits).
var enc = base64.RawURLEncoding.Strict()

// Seal returns the token of payload under version, signed with secret.
func Seal(secret []byte, version, payload string) string {
	p := enc.EncodeToString([]byte(payload))
	return version + "." + p + "." + enc.EncodeToString(mac(secret, version, p))
}

// Open checks token against secret and returns its version (one of
// versions) and decoded payload: ErrMalformed when it is not one Seal
// could have written with one of versions and an encoded payload of at
// most maxPayload bytes, ErrForged when its MAC is not secret's.
func Open(secret []byte, token string, maxPayload int, versions ...string) (version, payload string, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !slices.Contains(versions, parts[0]) {
		return "", "", ErrMalformed
	}
	v, p, m := parts[0], parts[1], parts[2]
	if p == "" || len(p) > maxPayload || !checkAlphabet(p) || !checkAlphabet(m) {
		return "", "", ErrMalformed
	}
	sum, err := enc.DecodeString(m)
	if err != nil || len(sum) != sha256.Size {
		return "", "", ErrMalformed
	}
	if !hmac.Equal(sum, mac(secret, v, p)) {
		return "", "", ErrForged
	}
	b, err := enc.DecodeString(p)
	if err != nil {
		return "", "", ErrMalformed
	}
	return v, string(b), nil
}

// checkAlphabet reports whether s holds only base64url characters: Go's
// decoder skips CR and LF anywhere, so they are refused here.
func checkAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func mac(secret []byte, version, payload string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(version + "." + payload))
	return h.Sum(nil)
}
