package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// RFC 8188/8291 framing. Herald sends exactly one record, so the record size
// is also the upper bound of the whole body.
const (
	// recordSize is the rs Herald declares: 4096, the most push services
	// must accept (RFC 8030 §7.2).
	recordSize = 4096
	saltLen    = 16
	// headerLen is salt(16) || rs(4) || idlen(1) || keyid(65).
	headerLen = saltLen + 4 + 1 + publicKeyLen
	tagLen    = 16
	// MaxPlaintextBytes is the largest payload one 4096-byte aes128gcm
	// message can carry: 4096 − 86 header − 16 tag − 1 delimiter
	// (RFC 8291 §4).
	MaxPlaintextBytes = recordSize - headerLen - tagLen - 1
	// MaxBodyBytes is the largest encrypted body a push service must
	// accept (RFC 8030 §7.2); a larger one earns 413.
	MaxBodyBytes = recordSize
	// lastRecord is the padding delimiter of the final record (RFC 8188 §2).
	lastRecord = 0x02
)

// HKDF info strings of RFC 8291 §3.3–3.4 and RFC 8188 §2.2–2.3.
const (
	keyInfoPrefix = "WebPush: info\x00"
	cekInfo       = "Content-Encoding: aes128gcm\x00"
	nonceInfo     = "Content-Encoding: nonce\x00"
)

// encrypt builds the aes128gcm body of one push message for the user
// agent's key uaPublic and auth secret (RFC 8291). A fresh ephemeral key
// and salt are drawn for every message, as §3.1 and §4 require.
func encrypt(plaintext []byte, uaPublic *ecdh.PublicKey, auth []byte) ([]byte, error) {
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the ephemeral key: %w", err)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("drawing the salt: %w", err)
	}
	return encryptWith(plaintext, uaPublic, auth, as, salt)
}

// encryptWith is encrypt with the ephemeral key and salt given, so the
// RFC 8291 appendix A vector can pin the output byte for byte.
func encryptWith(plaintext []byte, uaPublic *ecdh.PublicKey, auth []byte, as *ecdh.PrivateKey, salt []byte) ([]byte, error) {
	if len(plaintext) > MaxPlaintextBytes {
		return nil, fmt.Errorf("payload is %d bytes, over the %d bytes one record carries", len(plaintext), MaxPlaintextBytes)
	}
	secret, err := as.ECDH(uaPublic)
	if err != nil {
		return nil, fmt.Errorf("ECDH: %w", err)
	}
	asPublic := as.PublicKey().Bytes()
	aead, nonce, err := contentKey(secret, auth, uaPublic.Bytes(), asPublic, salt)
	if err != nil {
		return nil, err
	}
	body := make([]byte, headerLen, headerLen+len(plaintext)+1+tagLen)
	copy(body, salt)
	binary.BigEndian.PutUint32(body[saltLen:], recordSize)
	body[saltLen+4] = publicKeyLen
	copy(body[saltLen+5:], asPublic)
	record := append(append(make([]byte, 0, len(plaintext)+1+tagLen), plaintext...), lastRecord)
	// The one record has sequence number 0, so its nonce is NONCE itself.
	return aead.Seal(body, nonce, record, nil), nil
}

// contentKey derives the AES-128-GCM cipher and nonce of RFC 8291 §3.3–3.4:
// IKM = HKDF(auth, ecdh_secret, "WebPush: info\0" || ua_public || as_public),
// then CEK and NONCE from HKDF(salt, IKM).
func contentKey(secret, auth, uaPublic, asPublic, salt []byte) (cipher.AEAD, []byte, error) {
	keyInfo := make([]byte, 0, len(keyInfoPrefix)+2*publicKeyLen)
	keyInfo = append(append(append(keyInfo, keyInfoPrefix...), uaPublic...), asPublic...)
	ikm, err := hkdf.Key(sha256.New, secret, auth, string(keyInfo), 32)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	cek, err := hkdf.Expand(sha256.New, prk, cekInfo, 16)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	nonce, err := hkdf.Expand(sha256.New, prk, nonceInfo, 12)
	if err != nil {
		return nil, nil, fmt.Errorf("HKDF: %w", err)
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, err
	}
	return aead, nonce, nil
}
