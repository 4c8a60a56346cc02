package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// The parts of RFC 8030, 8188 and 8291 the emulator plays the push
// service and the browser with. The Client in provider/webpush speaks the
// other end of the same RFCs; the emulator keeps its own copy so that it
// stays apart from what it imitates.
const (
	// MaxBodyBytes is the largest encrypted body a push service must
	// accept (RFC 8030 §7.2); a larger one earns 413.
	MaxBodyBytes = 4096
	// publicKeyLen is an uncompressed P-256 point: 0x04 || X || Y.
	publicKeyLen = 65
	// authSecretLen is a subscription's auth secret (RFC 8291 §3.2).
	authSecretLen = 16
	// maxTopicLen bounds the Topic header (RFC 8030 §5.4).
	maxTopicLen = 32
)

// b64 encodes as base64url without padding.
func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// decodeB64 decodes base64url or standard base64, with or without padding.
func decodeB64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	enc := base64.RawURLEncoding
	if strings.ContainsAny(s, "+/") {
		enc = base64.RawStdEncoding
	}
	return enc.DecodeString(s)
}

// validTopic reports whether t is 1..32 characters of the base64url
// alphabet (RFC 8030 §5.4).
func validTopic(t string) bool {
	if t == "" || len(t) > maxTopicLen {
		return false
	}
	return strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == ""
}

// Decrypt opens an aes128gcm body (RFC 8188, one record) with the
// subscription's private key and auth secret, as the browser does.
func Decrypt(body []byte, ua *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	const saltLen, tagLen = 16, 16
	const headerLen = saltLen + 4 + 1 + publicKeyLen
	if len(body) < headerLen+tagLen+1 {
		return nil, errors.New("body is shorter than an aes128gcm header and one record")
	}
	salt, rs, idlen := body[:saltLen], binary.BigEndian.Uint32(body[saltLen:]), body[saltLen+4]
	if idlen != publicKeyLen {
		return nil, fmt.Errorf("keyid is %d bytes, want the 65-byte sender public key", idlen)
	}
	asPublic, ciphertext := body[saltLen+5:headerLen], body[headerLen:]
	if rs < tagLen+2 || uint64(len(ciphertext)) > uint64(rs) {
		return nil, fmt.Errorf("record size %d does not hold the %d-byte record (more than one record?)", rs, len(ciphertext))
	}
	asKey, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, errors.New("keyid is not a P-256 public key")
	}
	secret, err := ua.ECDH(asKey)
	if err != nil {
		return nil, fmt.Errorf("ECDH: %w", err)
	}
	aead, nonce, err := recordCipher(secret, auth, ua.PublicKey().Bytes(), asPublic, salt)
	if err != nil {
		return nil, err
	}
	record, err := aead.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, errors.New("authentication failed: wrong keys or corrupted body")
	}
	// Padding is zeros after the delimiter 0x02 of the last record.
	end := strings.TrimRight(string(record), "\x00")
	if !strings.HasSuffix(end, "\x02") {
		return nil, errors.New("record does not end with the last-record delimiter 0x02")
	}
	return []byte(end[:len(end)-1]), nil
}

// recordCipher derives the AES-128-GCM key and nonce of RFC 8291 §3.3–3.4
// and RFC 8188 §2.2–2.3.
func recordCipher(secret, auth, uaPublic, asPublic, salt []byte) (cipher.AEAD, []byte, error) {
	info := "WebPush: info\x00" + string(uaPublic) + string(asPublic)
	ikm, err := hkdf.Key(sha256.New, secret, auth, info, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, err
	}
	aead, err := cipher.NewGCM(block)
	return aead, nonce, err
}
