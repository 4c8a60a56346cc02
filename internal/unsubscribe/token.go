// Package unsubscribe signs and checks the tokens of one-click
// unsubscribe links (RFC 8058): each names one user, one notification
// type and one channel, so whoever holds the link can turn off exactly
// that and nothing else. Pure: no store, no clock.
package unsubscribe

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/signedtoken"
)

// MinSecretBytes is the shortest signing secret accepted: 256 bits, the
// HMAC-SHA256 key size.
const MinSecretBytes = 32

// version prefixes every token Herald makes now, so a future format (a
// key id for rotation) can be told apart. "u2" carries when the link was
// issued (issue 31 item 6); "u1" links, sent before, are still read, as
// issued at the beginning of time.
const (
	version   = "u2"
	versionV1 = "u1"
)

// maxPayload bounds a token's encoded payload: ids and type names are
// short.
const maxPayload = 2048

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
	// IssuedAt is when the link was made, at millisecond precision; a
	// re-subscription after it retires the link. Zero for a "u1" link.
	IssuedAt time.Time
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

// Token returns the token for c: "u2.<payload>.<mac>" (signedtoken.Seal),
// where the payload is the user id, the type, the channel, the delivery
// id (0: none) and the issue time in Unix milliseconds separated by NUL
// bytes (the ids may hold none).
// A zero IssuedAt is written as the Unix epoch.
func (s *Signer) Token(c Claims) string {
	var ms int64
	if !c.IssuedAt.IsZero() {
		ms = c.IssuedAt.UnixMilli()
	}
	payload := c.UserID + "\x00" + c.Type + "\x00" + string(c.Channel) + "\x00" +
		strconv.FormatInt(max(c.DeliveryID, 0), 10) + "\x00" + strconv.FormatInt(ms, 10)
	return signedtoken.Seal(s.secret, version, payload)
}

// Parse checks a token and returns its claims: ErrMalformed or ErrForged
// (wrapped) when it is not one this Signer made. It is strict (issue 31
// item 6): a known version, exactly three parts, the base64url alphabet
// without padding or trailing bits, a MAC of exactly 32 bytes, and
// numbers written as Token writes them — anything else is malformed, so
// one link has one spelling.
func (s *Signer) Parse(token string) (Claims, error) {
	v, payload, err := signedtoken.Open(s.secret, token, maxPayload, version, versionV1)
	switch {
	case errors.Is(err, signedtoken.ErrForged):
		return Claims{}, ErrForged
	case err != nil:
		return Claims{}, ErrMalformed
	}
	if v == versionV1 {
		return parseV1(payload)
	}
	f := strings.Split(payload, "\x00")
	if len(f) != 5 || f[0] == "" || f[1] == "" || f[2] == "" {
		return Claims{}, ErrMalformed
	}
	id, ok := canonical(f[3])
	ms, ok2 := canonical(f[4])
	if !ok || !ok2 {
		return Claims{}, ErrMalformed
	}
	c := Claims{UserID: f[0], Type: f[1], Channel: heraldtype.Channel(f[2]), DeliveryID: id}
	if ms > 0 {
		c.IssuedAt = time.UnixMilli(ms).UTC()
	}
	return c, nil
}

// parseV1 reads the payload of a "u1" token: user, type, channel and an
// optional delivery id.
func parseV1(payload string) (Claims, error) {
	f := strings.Split(payload, "\x00")
	if len(f) < 3 || len(f) > 4 || f[0] == "" || f[1] == "" || f[2] == "" {
		return Claims{}, ErrMalformed
	}
	c := Claims{UserID: f[0], Type: f[1], Channel: heraldtype.Channel(f[2])}
	if len(f) == 4 {
		id, ok := canonical(f[3])
		if !ok || id == 0 {
			return Claims{}, ErrMalformed
		}
		c.DeliveryID = id
	}
	return c, nil
}

// canonical parses a non-negative decimal written as FormatInt writes it
// (no sign, no leading zero).
func canonical(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return n, true
}
