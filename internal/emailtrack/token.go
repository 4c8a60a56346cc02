// Package emailtrack signs and checks the tokens of e-mail tracking (issue
// 35 item 2) — an open pixel's and a tracked link's — and rewrites an
// e-mail's HTML to carry them. A token names one delivery (its messageId),
// what it tracks (an open, or a click on one link, whose original URL it
// carries) and when it expires, under an HMAC-SHA256 of Herald's secret:
// the redirect of a click goes only to the URL the token carries, so a
// token altered in any byte, or made with another secret, leads nowhere.
// Pure: no store, no clock.
package emailtrack

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/signedtoken"
)

// MinSecretBytes is the shortest signing secret accepted: 256 bits, the
// HMAC-SHA256 key size.
const MinSecretBytes = 32

// MaxURLBytes bounds the link a token may carry: a longer link is left
// as written (untracked), so a token stays within what mail clients and
// browsers keep of a URL. It is the bound of a clicked receipt's action,
// which records the link.
const MaxURLBytes = heraldtype.MaxReceiptLinkLen

// MaxMessageIDBytes bounds a token's message id (a notification id of at
// most 128 bytes, a dot and a delivery id).
const MaxMessageIDBytes = 160

// version prefixes every token, so a later format can be told apart.
const version = "t1"

// maxPayload bounds a token's encoded payload before it is decoded.
const maxPayload = (MaxURLBytes + MaxMessageIDBytes + 64) * 4 / 3

// Kind is what a token tracks.
type Kind string

const (
	// Open: the e-mail's open pixel was fetched.
	Open Kind = "o"
	// Click: one of the e-mail's links was followed.
	Click Kind = "c"
)

// Errors of Parse.
var (
	// ErrMalformed: the token is not one Herald could have made.
	ErrMalformed = errors.New("emailtrack: malformed token")
	// ErrForged: well formed, but not signed with the secret.
	ErrForged = errors.New("emailtrack: token signature does not match")
	// ErrExpired: signed with the secret, but past its expiry.
	ErrExpired = errors.New("emailtrack: token expired")
)

// Claims are what a token names.
type Claims struct {
	Kind Kind
	// MessageID is the delivery's messageId ("<notification id>.<delivery
	// id>", heraldtype.DeliveryKey).
	MessageID string
	// URL is a click's original link (an absolute http or https URL); ""
	// for an open.
	URL string
	// Expires is when the token stops being honoured, at second
	// precision.
	Expires time.Time
}

// Signer makes and checks tokens with one secret.
type Signer struct {
	secret []byte
}

// NewSigner returns a Signer for secret, at least MinSecretBytes long.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("emailtrack: the secret is %d bytes; at least %d are needed (openssl rand -hex 32)", len(secret), MinSecretBytes)
	}
	return &Signer{secret: bytes.Clone(secret)}, nil
}

// Token returns the token for c: "t1.<payload>.<mac>" (signedtoken.Seal),
// where the payload is the kind, the message id, the expiry in Unix
// seconds and the URL separated by NUL bytes (none of them holds one: a
// URL Trackable accepts has no control character).
func (s *Signer) Token(c Claims) string {
	payload := string(c.Kind) + "\x00" + c.MessageID + "\x00" + strconv.FormatInt(c.Expires.Unix(), 10) + "\x00" + c.URL
	return signedtoken.Seal(s.secret, version, payload)
}

// Parse checks a token of kind want at time now and returns its claims:
// ErrMalformed, ErrForged or ErrExpired (wrapped) when it is not one this
// Signer made, or no longer honoured. It is strict: exactly what Token
// writes, a MAC of exactly 32 bytes, the kind asked for, a click's URL an
// absolute http(s) one (Trackable) — so a redirect can only ever go where
// Herald signed it to.
func (s *Signer) Parse(token string, want Kind, now time.Time) (Claims, error) {
	_, payload, err := signedtoken.Open(s.secret, token, maxPayload, version)
	switch {
	case errors.Is(err, signedtoken.ErrForged):
		return Claims{}, ErrForged
	case err != nil:
		return Claims{}, ErrMalformed
	}
	f := strings.SplitN(payload, "\x00", 4)
	if len(f) != 4 || Kind(f[0]) != want || f[1] == "" || len(f[1]) > MaxMessageIDBytes {
		return Claims{}, ErrMalformed
	}
	exp, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != f[2] {
		return Claims{}, ErrMalformed
	}
	c := Claims{Kind: want, MessageID: f[1], URL: f[3], Expires: time.Unix(exp, 0).UTC()}
	switch {
	case want == Open && c.URL != "":
		return Claims{}, ErrMalformed
	case want == Click && !Trackable(c.URL):
		return Claims{}, ErrMalformed
	case !now.Before(c.Expires):
		return c, ErrExpired
	}
	return c, nil
}

// Trackable reports whether link may be rewritten into a tracked one: an
// absolute http or https URL with a host, no credentials, no whitespace
// or control character, at most MaxURLBytes. Anything else — a relative
// link, mailto:, tel:, javascript:, a template placeholder — is left as
// written.
func Trackable(link string) bool {
	if link == "" || len(link) > MaxURLBytes {
		return false
	}
	for i := 0; i < len(link); i++ {
		if c := link[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	u, err := url.Parse(link)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return (scheme == "http" || scheme == "https") && strings.HasPrefix(strings.ToLower(link), scheme+"://")
}
