// Package webhook is Herald's outbound webhooks (issue 35 item 4; the
// design is docs/ARCHITECTURE.md, "Outbound webhooks"). This file is the
// signature of the Standard Webhooks specification (standardwebhooks.com):
// a message is signed over its id, the timestamp of the attempt and the
// exact body, with HMAC-SHA256 and each of an endpoint's valid secrets, so
// a receiver can check that Herald sent it, unchanged, recently.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a signed message.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix marks a serialized signing secret, as the specification
// asks, so it is recognized wherever it is pasted.
const SecretPrefix = "whsec_"

// The specification's bounds on a symmetric secret's length, in bytes,
// and the length of the ones Herald generates.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
	secretBytes    = 32
)

// DefaultTolerance is how far a message's timestamp may be from the
// receiver's clock before Verify refuses it as a possible replay.
const DefaultTolerance = 5 * time.Minute

// A Secret is a decoded signing key.
type Secret struct{ key []byte }

// NewSecret returns a fresh secret, serialized ("whsec_" and the base64 of
// 32 random bytes).
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: a new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// ParseSecret decodes a serialized secret: the base64 of 24 to 64 bytes,
// with or without its "whsec_" prefix.
func ParseSecret(s string) (Secret, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if err != nil {
		return Secret{}, errors.New("a webhook secret is \"whsec_\" followed by base64")
	}
	if len(b) < MinSecretBytes || len(b) > MaxSecretBytes {
		return Secret{}, fmt.Errorf("a webhook secret must decode to %d to %d bytes, not %d", MinSecretBytes, MaxSecretBytes, len(b))
	}
	return Secret{key: b}, nil
}

// Sign returns the webhook-signature header of a message: one "v1,"
// signature per secret, space-separated (two during a rotation, so a
// receiver holding either secret accepts it). The id must not contain a
// '.', which would make the signed content ambiguous.
func Sign(id string, at time.Time, body []byte, secrets ...Secret) (string, error) {
	if id == "" || strings.Contains(id, ".") {
		return "", fmt.Errorf("webhook: message id %q: must be non-empty, without '.'", id)
	}
	if len(secrets) == 0 {
		return "", errors.New("webhook: no secret to sign with")
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, len(secrets))
	for i, s := range secrets {
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(mac(s, id, ts, body))
	}
	return strings.Join(sigs, " "), nil
}

// Headers returns a message's three headers, signed at at.
func Headers(id string, at time.Time, body []byte, secrets ...Secret) (http.Header, error) {
	sig, err := Sign(id, at, body, secrets...)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// The reasons Verify refuses a message.
var (
	ErrMissingHeader = errors.New("webhook: a webhook-id, webhook-timestamp or webhook-signature header is missing")
	ErrTimestamp     = errors.New("webhook: the timestamp is not a number of seconds within the tolerance of now")
	ErrSignature     = errors.New("webhook: no signature matches")
)

// Verify checks a received message as a receiver does: its three headers
// are present, its timestamp is within tolerance of now (either way), and
// one of its "v1," signatures is the body's under one of secrets
// (compared in constant time). Signatures of other schemes are skipped.
func Verify(h http.Header, body []byte, now time.Time, tolerance time.Duration, secrets ...Secret) error {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeader
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	for _, s := range secrets {
		want := mac(s, id, ts, body)
		for _, sig := range strings.Fields(sigs) {
			v, b64, ok := strings.Cut(sig, ",")
			if !ok || v != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrSignature
}

// mac is HMAC-SHA256 under s of "id.timestamp.body".
func mac(s Secret, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
