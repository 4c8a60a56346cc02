package unsubscribe

import (
	"errors"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

func TestTokenRoundTripAndForgery(t *testing.T) {
	t.Parallel()
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	c := Claims{UserID: "u-1", Type: "promo", Channel: heraldtype.ChannelEmail}
	tok := s.Token(c)
	if got, err := s.Parse(tok); err != nil || got != c {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	// Another user's claims under the same signature, another secret, a
	// flipped byte: all refused.
	_, p, _ := strings.Cut(tok, ".")
	p, mac, _ := strings.Cut(p, ".")
	swapped := version + "." + enc.EncodeToString([]byte("u-2\x00promo\x00email")) + "." + mac
	for name, bad := range map[string]string{
		"other user":   swapped,
		"other secret": other.Token(c),
	} {
		if _, err := s.Parse(bad); !errors.Is(err, ErrForged) {
			t.Errorf("%s: %v, want ErrForged", name, err)
		}
	}
	if _, err := s.Parse(tok[:len(tok)-2]); err == nil {
		t.Error("accepted a truncated token")
	}
	for _, bad := range []string{"", "u1", "u2." + p + "." + mac, "u1." + p, "u1." + p + ".!!", strings.Repeat("a", 10)} {
		if _, err := s.Parse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Error("accepted a short secret")
	}
}
