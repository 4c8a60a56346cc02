package unsubscribe

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/signedtoken"
)

func TestTokenRoundTripAndForgery(t *testing.T) {
	t.Parallel()
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	c := Claims{UserID: "u-1", Type: "promo", Channel: heraldtype.ChannelEmail, DeliveryID: 7,
		IssuedAt: time.Date(2026, 11, 27, 9, 0, 0, 123_000_000, time.UTC)}
	tok := s.Token(c)
	if got, err := s.Parse(tok); err != nil || got != c {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	// Another user's claims under the same signature, another secret, a
	// flipped byte: all refused.
	_, p, _ := strings.Cut(tok, ".")
	p, mac, _ := strings.Cut(p, ".")
	swapped := version + "." + base64.RawURLEncoding.EncodeToString([]byte("u-2\x00promo\x00email\x007\x001700000000000")) + "." + mac
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
	for _, bad := range []string{"", "u1", "u3." + p + "." + mac, "u2." + p, "u2." + p + ".!!", strings.Repeat("a", 10)} {
		if _, err := s.Parse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", bad, err)
		}
	}
	// A "u1" link, made before links carried their issue time, still
	// works, as issued at the beginning of time.
	v1 := signedtoken.Seal(s.secret, versionV1, "u-1\x00promo\x00email\x009")
	if got, err := s.Parse(v1); err != nil || got.UserID != "u-1" || got.DeliveryID != 9 || !got.IssuedAt.IsZero() {
		t.Errorf("u1: %+v %v", got, err)
	}
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Error("accepted a short secret")
	}
}

// Issue 31 item 6: a token decodes strictly — one spelling per link, so
// nothing but what Token wrote is accepted.
func TestTokenStrict(t *testing.T) {
	t.Parallel()
	s, _ := NewSigner([]byte(strings.Repeat("k", 32)))
	tok := s.Token(Claims{UserID: "u-1", Type: "promo", Channel: heraldtype.ChannelEmail, IssuedAt: time.UnixMilli(1_700_000_000_000)})
	sign := func(payload string) string { return signedtoken.Seal(s.secret, version, payload) }
	last := tok[len(tok)-1]
	flipped := byte('A')
	if last == 'A' {
		flipped = 'B'
	}
	for name, bad := range map[string]string{
		"trailing part":     tok + ".x",
		"trailing dot":      tok + ".",
		"line break":        tok[:10] + "\n" + tok[10:],
		"padding":           tok + "=",
		"plus sign":         tok[:len(tok)-5] + "+" + tok[len(tok)-4:],
		"short MAC":         tok[:len(tok)-2],
		"trailing MAC bits": tok[:len(tok)-1] + string(flipped),
		"four fields":       sign("u-1\x00promo\x00email\x000"),
		"six fields":        sign("u-1\x00promo\x00email\x000\x001\x00x"),
		"signed delivery":   sign("u-1\x00promo\x00email\x00+5\x000"),
		"leading zero":      sign("u-1\x00promo\x00email\x0007\x000"),
		"negative time":     sign("u-1\x00promo\x00email\x000\x00-1"),
		"empty user":        sign("\x00promo\x00email\x000\x000"),
		"empty payload":     version + ".." + strings.Split(tok, ".")[2],
	} {
		if got, err := s.Parse(bad); err == nil {
			t.Errorf("%s: %q accepted as %+v", name, bad, got)
		}
	}
	if _, err := s.Parse(tok); err != nil {
		t.Fatal(err)
	}
}
