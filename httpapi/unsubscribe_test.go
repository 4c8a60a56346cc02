package httpapi_test

import (
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/unsubscribe"
)

var unsubSecret = []byte("0123456789abcdef0123456789abcdef")

func unsubToken(t *testing.T, secret []byte, user string) string {
	t.Helper()
	s, err := unsubscribe.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s.Token(unsubscribe.Claims{UserID: user, Type: "promo", Channel: heraldtype.ChannelEmail})
}

// TestUnsubscribeRoutes: without credentials, GET shows a page with a
// form and changes nothing; POST (RFC 8058's one-click body) turns the
// type off on e-mail, idempotently; forged and malformed tokens get 404
// and 400 with stable codes.
func TestUnsubscribeRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{unsubscribe: herald.UnsubscribeConfig{Secret: unsubSecret, BaseURL: "https://herald.test"}})
	e.seedUser("u1")
	e.seedUser("u2")
	tok := unsubToken(t, unsubSecret, "u1")
	path := "/v1/unsubscribe/" + tok
	noAuth := []string{"Authorization", ""}

	r := e.do("GET", path, nil, noAuth...)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(r.body), `<form method="post">`) || r.header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("GET: %d %v %s", r.status, r.header, r.body)
	}
	prefs := func(u string) herald.Preferences {
		p, err := e.client.GetPreferences(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := prefs("u1"); len(p.Types) != 0 {
		t.Fatalf("GET changed the preferences: %+v", p)
	}
	for range 2 {
		r = e.do("POST", path, "List-Unsubscribe=One-Click", append(noAuth, "Content-Type", "application/x-www-form-urlencoded")...)
		if r.status != 200 || !strings.Contains(string(r.body), "no longer receive") {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
	}
	if tp := prefs("u1").Types["promo"]; tp.UnsubscribedAt == nil || len(tp.Channels) != 3 {
		t.Errorf("after POST: %+v", tp)
	}
	if p := prefs("u2"); len(p.Types) != 0 {
		t.Errorf("u2 changed: %+v", p)
	}

	_, rest, _ := strings.Cut(unsubToken(t, unsubSecret, "u2"), ".")
	u2Claims, _, _ := strings.Cut(rest, ".")
	parts := strings.Split(tok, ".")
	for bad, want := range map[string]string{
		parts[0] + "." + u2Claims + "." + parts[2]:           "not_found",
		unsubToken(t, []byte(strings.Repeat("q", 32)), "u2"): "not_found",
		"not-a-token": "invalid_argument",
	} {
		for _, m := range []string{"GET", "POST"} {
			r := e.do(m, "/v1/unsubscribe/"+bad, nil, noAuth...)
			if eb := r.errorBody(t); eb.Code != want {
				t.Errorf("%s %s: %d %s, want %s", m, bad, r.status, eb.Code, want)
			}
		}
	}
	if p := prefs("u2"); len(p.Types) != 0 {
		t.Errorf("a forged token changed u2: %+v", p)
	}

	// Without a secret the routes exist but know no token.
	off := newEnv(t, envOptions{})
	if eb := off.do("POST", path, nil, noAuth...).errorBody(t); eb.Code != "not_found" {
		t.Errorf("unconfigured: %s", eb.Code)
	}
}

// TestTypeTransactional: PUT /v1/types declares a type transactional and
// GET shows it.
func TestTypeTransactional(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	var got herald.NotificationType
	e.do("PUT", "/v1/types/receipt", map[string]any{"channels": []string{"email"}, "transactional": true}).expect(t, 200, &got)
	if !got.Transactional {
		t.Errorf("PUT answered %+v", got)
	}
	got = herald.NotificationType{}
	e.do("GET", "/v1/types/receipt", nil).expect(t, 200, &got)
	if !got.Transactional || got.Source != herald.TypeSourceAPI {
		t.Errorf("GET answered %+v", got)
	}
}
