package webpush

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"strings"
	"testing"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
)

// rfc8291 is the example of RFC 8291 §5 (appendix A gives the intermediate
// values).
var rfc8291 = struct {
	plaintext, asPrivate, uaPrivate, uaPublic, auth, salt, body string
}{
	plaintext: "When I grow up, I want to be a watermelon",
	asPrivate: "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
	uaPrivate: "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
	uaPublic:  "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
	auth:      "BTBZMqHH6r4Tts7J_aSIgg",
	salt:      "DGv6ra1nlYgDCS1FRnbzlw",
	body: "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml" +
		"mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT" +
		"pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
}

func mustB64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := decodeB64(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRFC8291Vector reproduces the RFC's encrypted body byte for byte and
// decrypts it back with the user agent's key.
func TestRFC8291Vector(t *testing.T) {
	t.Parallel()
	v := rfc8291
	as, err := ecdh.P256().NewPrivateKey(mustB64(t, v.asPrivate))
	if err != nil {
		t.Fatal(err)
	}
	uaPub, err := parseP256DH(v.uaPublic)
	if err != nil {
		t.Fatal(err)
	}
	auth := mustB64(t, v.auth)
	body, err := encryptWith([]byte(v.plaintext), uaPub, auth, as, mustB64(t, v.salt))
	if err != nil {
		t.Fatal(err)
	}
	if got := b64(body); got != v.body {
		t.Fatalf("encrypted body\n got  %s\n want %s", got, v.body)
	}

	ua, err := ecdh.P256().NewPrivateKey(mustB64(t, v.uaPrivate))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := webpushemu.Decrypt(mustB64(t, v.body), ua, auth)
	if err != nil {
		t.Fatal(err)
	}
	if string(plain) != v.plaintext {
		t.Fatalf("decrypted %q", plain)
	}
}

func TestEncryptRoundTripAndLimits(t *testing.T) {
	t.Parallel()
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, authSecretLen)
	rand.Read(auth)

	full := bytes.Repeat([]byte("x"), MaxPlaintextBytes)
	body, err := encrypt(full, ua.PublicKey(), auth)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) != MaxBodyBytes {
		t.Errorf("a %d-byte payload encrypts to %d bytes, want exactly %d", len(full), len(body), MaxBodyBytes)
	}
	got, err := webpushemu.Decrypt(body, ua, auth)
	if err != nil || !bytes.Equal(got, full) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := encrypt(append(full, 'x'), ua.PublicKey(), auth); err == nil {
		t.Error("a payload one byte over MaxPlaintextBytes was encrypted")
	}

	// Two encryptions of one payload differ: fresh salt and ephemeral key.
	a, _ := encrypt([]byte("same"), ua.PublicKey(), auth)
	b, _ := encrypt([]byte("same"), ua.PublicKey(), auth)
	if bytes.Equal(a[:headerLen], b[:headerLen]) {
		t.Error("salt and sender key were reused")
	}

	// Decryption failures the emulator reports (webpushemu.Decrypt is the
	// browser's side, written apart from this client).
	wrongAuth := bytes.Clone(auth)
	wrongAuth[0] ^= 1
	tampered := bytes.Clone(a)
	tampered[len(tampered)-1] ^= 1
	badIDLen := bytes.Clone(a)
	badIDLen[saltLen+4] = 64
	for name, tc := range map[string]struct {
		body []byte
		auth []byte
		want string
	}{
		"wrong auth": {a, wrongAuth, "authentication failed"},
		"tampered":   {tampered, auth, "authentication failed"},
		"short":      {a[:headerLen], auth, "shorter"},
		"keyid":      {badIDLen, auth, "keyid"},
	} {
		if _, err := webpushemu.Decrypt(tc.body, ua, tc.auth); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}
