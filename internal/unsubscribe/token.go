// Package unsubscribe signs and checks the tokens of one-click
// unsubscribe links (RFC 8058): each names one user, one notification
// type and one channel, so whoever holds the link can turn off exactly
// that and nothing else. Pure: no store, no clock.
package unsubscribe

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// MinSecretBytes is the shortest signing secret accepted: 256 bits, the
// HMAC-SHA256 key size.
const MinSecretBytes = 32

// version prefixes every token, so a future format (a key id for
// rotation) can be told apart.
const version = "u1"

// Errors of Parse.
var (
	// ErrMalformed: the token is not one Herald could have made.
	ErrMalformed = errors.New("unsubscribe: malformed token")
	// ErrForged: well formed, but not signed with the secret.
	ErrForged = errors.New("unsubscribe: token signature does not match")
)

// Claims are what a token names.
type Claims struct {
	UserID  string
	Type    string
	Channel heraldtype.Channel
	// DeliveryID is the delivery whose message carried the link (0: none
	// named): the unsubscribe is shown on that delivery's timeline.
	DeliveryID int64
}

// Signer makes and checks tokens with one secret.
type Signer struct {
	secret []byte
}

// NewSigner returns a Signer for secret, at least MinSecretBytes long.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("unsubscribe: the secret is %d bytes; at least %d are needed (openssl rand -hex 32)", len(secret), MinSecretBytes)
	}
	return &Signer{secret: bytes.Clone(secret)}, nil
}

var enc = base64.RawURLEncoding

// Token returns the token for c: "u1.<payload>.<mac>", URL-safe base64,
// where the payload is the user id, the type and the channel separated by
// NUL bytes (none of them may hold one) and the MAC is HMAC-SHA256 over
// the version and the payload.
func (s *Signer) Token(c Claims) string {
	payload := c.UserID + "\x00" + c.Type + "\x00" + string(c.Channel)
	if c.DeliveryID > 0 {
		payload += "\x00" + strconv.FormatInt(c.DeliveryID, 10)
	}
	p := enc.EncodeToString([]byte(payload))
	return version + "." + p + "." + enc.EncodeToString(s.mac(p))
}

// Parse checks a token and returns its claims: ErrMalformed or ErrForged
// (wrapped) when it is not one this Signer made.
func (s *Signer) Parse(token string) (Claims, error) {
	v, rest, ok := strings.Cut(token, ".")
	if !ok || v != version {
		return Claims{}, ErrMalformed
	}
	p, m, ok := strings.Cut(rest, ".")
	if !ok || len(p) > 2048 {
		return Claims{}, ErrMalformed
	}
	mac, err := enc.DecodeString(m)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	if !hmac.Equal(mac, s.mac(p)) {
		return Claims{}, ErrForged
	}
	payload, err := enc.DecodeString(p)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	parts := strings.Split(string(payload), "\x00")
	if len(parts) < 3 || len(parts) > 4 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Claims{}, ErrMalformed
	}
	c := Claims{UserID: parts[0], Type: parts[1], Channel: heraldtype.Channel(parts[2])}
	if len(parts) == 4 {
		id, err := strconv.ParseInt(parts[3], 10, 64)
		if err != nil || id <= 0 {
			return Claims{}, ErrMalformed
		}
		c.DeliveryID = id
	}
	return c, nil
}

func (s *Signer) mac(payload string) []byte {
	h := hmac.New(sha256.New, s.secret)
	h.Write([]byte(version + "." + payload))
	return h.Sum(nil)
}
