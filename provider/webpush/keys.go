package webpush

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Key sizes fixed by RFC 8291 and RFC 8292.
const (
	// publicKeyLen is an uncompressed P-256 point: 0x04 || X || Y.
	publicKeyLen = 65
	// privateKeyLen is a P-256 scalar.
	privateKeyLen = 32
	// authSecretLen is the subscription's auth secret (RFC 8291 §3.2).
	authSecretLen = 16
)

// GenerateVAPIDKeys creates a VAPID key pair (RFC 8292) for `herald vapid
// generate`: an uncompressed P-256 public key and its private scalar, both
// base64url without padding — the encoding browsers expect for
// PushManager.subscribe's applicationServerKey and Config expects back.
func GenerateVAPIDKeys() (public, private string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("webpush: generating a VAPID key: %w", err)
	}
	pub, err := k.PublicKey.Bytes()
	if err != nil {
		return "", "", fmt.Errorf("webpush: encoding the VAPID public key: %w", err)
	}
	priv, err := k.Bytes()
	if err != nil {
		return "", "", fmt.Errorf("webpush: encoding the VAPID private key: %w", err)
	}
	return b64(pub), b64(priv), nil
}

// parseVAPIDKeys decodes and cross-checks a VAPID key pair. Its errors name
// the faulty setting but never quote the private key.
func parseVAPIDKeys(public, private string) (*ecdsa.PrivateKey, []byte, error) {
	if private == "" {
		return nil, nil, errors.New("webpush: VAPIDPrivateKey is required (generate a pair with `herald vapid generate`)")
	}
	if public == "" {
		return nil, nil, errors.New("webpush: VAPIDPublicKey is required (generate a pair with `herald vapid generate`)")
	}
	d, err := decodeB64(private)
	if err != nil || len(d) != privateKeyLen {
		return nil, nil, errors.New("webpush: VAPIDPrivateKey is not a base64url-encoded 32-byte P-256 private key")
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, nil, errors.New("webpush: VAPIDPrivateKey is not a valid P-256 private key")
	}
	pub, err := decodeB64(public)
	if err != nil || len(pub) != publicKeyLen {
		return nil, nil, fmt.Errorf("webpush: VAPIDPublicKey %q is not a base64url-encoded uncompressed P-256 public key (65 bytes)", public)
	}
	derived, err := key.PublicKey.Bytes()
	if err != nil {
		return nil, nil, fmt.Errorf("webpush: VAPIDPrivateKey: %w", err)
	}
	if string(derived) != string(pub) {
		return nil, nil, errors.New("webpush: VAPIDPublicKey does not belong to VAPIDPrivateKey")
	}
	return key, pub, nil
}

// parseP256DH decodes a subscription's p256dh key and checks it is a point
// on the curve, which ecdh.NewPublicKey verifies.
func parseP256DH(s string) (*ecdh.PublicKey, error) {
	if s == "" {
		return nil, errors.New("p256dh is missing")
	}
	raw, err := decodeB64(s)
	if err != nil {
		return nil, errors.New("p256dh is not base64url")
	}
	if len(raw) != publicKeyLen || raw[0] != 4 {
		return nil, fmt.Errorf("p256dh is %d bytes, want a 65-byte uncompressed P-256 point", len(raw))
	}
	pub, err := ecdh.P256().NewPublicKey(raw)
	if err != nil {
		return nil, errors.New("p256dh is not a point on P-256")
	}
	return pub, nil
}

// parseAuth decodes a subscription's 16-byte auth secret.
func parseAuth(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("auth is missing")
	}
	raw, err := decodeB64(s)
	if err != nil {
		return nil, errors.New("auth is not base64url")
	}
	if len(raw) != authSecretLen {
		return nil, fmt.Errorf("auth is %d bytes, want %d", len(raw), authSecretLen)
	}
	return raw, nil
}

// b64 encodes as base64url without padding, the encoding of every Web Push
// key and of JWTs.
func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// decodeB64 decodes base64url with or without padding. Standard base64
// ('+', '/') is accepted too: some subscription libraries and hand-written
// registration code send it, and the bytes are the same.
func decodeB64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if strings.ContainsAny(s, "+/") {
		return base64.RawStdEncoding.DecodeString(s)
	}
	return base64.RawURLEncoding.DecodeString(s)
}
