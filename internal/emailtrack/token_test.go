package emailtrack

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	testSecret = []byte(strings.Repeat("k", 32))
	testNow    = time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
)

func testSigner(t *testing.T) *Signer {
	t.Helper()
	s, err := NewSigner(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSignerRefusesAShortSecret(t *testing.T) {
	t.Parallel()
	if _, err := NewSigner([]byte(strings.Repeat("k", 31))); err == nil {
		t.Fatal("a 31-byte secret was accepted")
	}
}

// TestTokenRefusals: a tampered, foreign, expired, wrong-kind or
// malformed token is refused with its error; nothing but the signed URL
// ever comes back out (issue 35 item 2: never an open redirect).
func TestTokenRefusals(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
	click := Claims{Kind: Click, MessageID: "n1.7", URL: "https://shop.example/p/42?utm=mail", Expires: testNow.Add(time.Hour)}
	tok := s.Token(click)
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	// The same MAC over a payload whose URL names another host.
	swapped := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), "shop.example", "evil.example", 1))) + "." + parts[2]
	// A payload signed with the right secret but carrying a URL Herald
	// never tracks (it would need the secret: the signer is ours here).
	badURL := s.Token(Claims{Kind: Click, MessageID: "n1.7", URL: "javascript:alert(1)", Expires: testNow.Add(time.Hour)})
	schemeless := s.Token(Claims{Kind: Click, MessageID: "n1.7", URL: "//evil.example/", Expires: testNow.Add(time.Hour)})
	flip := []byte(tok)
	flip[len(flip)-5] ^= 1
	for _, c := range []struct {
		name, token string
		kind        Kind
		want        error
	}{
		{"another host swapped in", swapped, Click, ErrForged},
		{"another secret", other.Token(click), Click, ErrForged},
		{"a bit flipped in the MAC", string(flip), Click, ErrMalformed},
		{"expired", s.Token(Claims{Kind: Click, MessageID: "n1.7", URL: click.URL, Expires: testNow}), Click, ErrExpired},
		{"an open token on the click route", s.Token(Claims{Kind: Open, MessageID: "n1.7", Expires: testNow.Add(time.Hour)}), Click, ErrMalformed},
		{"a click token on the open route", tok, Open, ErrMalformed},
		{"a javascript: URL", badURL, Click, ErrMalformed},
		{"a scheme-relative URL", schemeless, Click, ErrMalformed},
		{"empty", "", Click, ErrMalformed},
		{"another version", "t2." + parts[1] + "." + parts[2], Click, ErrMalformed},
		{"four parts", tok + ".x", Click, ErrMalformed},
		{"padding", tok + "=", Click, ErrMalformed},
		{"a line break", parts[0] + "." + parts[1][:4] + "\n" + parts[1][4:] + "." + parts[2], Click, ErrMalformed},
		{"a short MAC", parts[0] + "." + parts[1] + "." + parts[2][:20], Click, ErrMalformed},
		{"huge", "t1." + strings.Repeat("A", 100000) + "." + parts[2], Click, ErrMalformed},
	} {
		if c.name == "a bit flipped in the MAC" {
			// A flipped bit may land on a character that still decodes
			// (forged) or on trailing bits (malformed): either refuses.
			if _, err := s.Parse(c.token, c.kind, testNow); err == nil {
				t.Errorf("%s: accepted", c.name)
			}
			continue
		}
		got, err := s.Parse(c.token, c.kind, testNow)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if c.want != ErrExpired && got.URL != "" {
			t.Errorf("%s: a refused token gave the URL %q", c.name, got.URL)
		}
	}
}

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	exp := testNow.Add(90 * 24 * time.Hour)
	for _, c := range []Claims{
		{Kind: Click, MessageID: "01JD.12", URL: "https://shop.example/p/42?a=1&b=%20x#frag", Expires: exp},
		{Kind: Open, MessageID: "01JD.12", Expires: exp},
	} {
		got, err := s.Parse(s.Token(c), c.Kind, testNow)
		if err != nil || got != c {
			t.Errorf("Parse(Token(%+v)) = %+v, %v", c, got, err)
		}
	}
}

func TestTrackable(t *testing.T) {
	t.Parallel()
	for link, want := range map[string]bool{
		"https://shop.example/p":                      true,
		"HTTP://shop.example":                         true,
		"http://127.0.0.1:8080/x":                     true,
		"/relative":                                   false,
		"//shop.example/p":                            false,
		"mailto:a@example.com":                        false,
		"tel:+15005550006":                            false,
		"javascript:alert(1)":                         false,
		"https://user:pw@shop.example/":               false,
		"https:shop.example":                          false,
		"https://shop.example/a b":                    false,
		"https://shop.example/\x00":                   false,
		"{{.URL}}":                                    false,
		"https://" + strings.Repeat("a", MaxURLBytes): false,
	} {
		if got := Trackable(link); got != want {
			t.Errorf("Trackable(%q) = %v, want %v", link, got, want)
		}
	}
}
