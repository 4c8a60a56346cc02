package signedtoken

import (
	"errors"
	"strings"
	"testing"
)

// Open takes back exactly what Seal wrote with the same secret and one of
// the versions asked for; any other spelling is malformed, another secret
// forged.
func TestSealOpen(t *testing.T) {
	t.Parallel()
	key, other := []byte(strings.Repeat("k", 32)), []byte(strings.Repeat("x", 32))
	tok := Seal(key, "v1", "a\x00b")
	if v, p, err := Open(key, tok, 64, "v0", "v1"); err != nil || v != "v1" || p != "a\x00b" {
		t.Fatalf("Open = %q, %q, %v", v, p, err)
	}
	if _, _, err := Open(key, Seal(other, "v1", "a\x00b"), 64, "v1"); !errors.Is(err, ErrForged) {
		t.Fatalf("another secret: %v, want ErrForged", err)
	}
	_, rest, _ := strings.Cut(tok, ".")
	p, m, _ := strings.Cut(rest, ".")
	for name, bad := range map[string]string{
		"version not asked for": "v2." + p + "." + m,
		"two parts":             "v1." + p,
		"four parts":            tok + ".x",
		"empty payload":         "v1.." + m,
		"line break":            "v1." + p + "\n." + m,
		"padding":               "v1." + p + "=." + m,
		"short mac":             "v1." + p + "." + m[:10],
		"not base64":            "v1." + p + ".!!",
		"over the bound":        Seal(key, "v1", strings.Repeat("a", 100)),
	} {
		if _, _, err := Open(key, bad, 64, "v1"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
