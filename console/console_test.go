package console_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestSignIn: a page without a session sends the browser to sign in and
// back; a refused key re-renders the form with the error; an accepted
// one sets the session cookie and lands on the page asked for.
func TestSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	r := e.get("/console/overview?x=1").expect(t, 303)
	if loc := r.header.Get("Location"); loc != "/console/sign-in?next="+url.QueryEscape("/console/overview?x=1") {
		t.Fatalf("redirected to %q", loc)
	}
	form := e.get("/console/sign-in").expect(t, 200)
	wellFormed(t, form.body)
	for _, want := range []string{`<form id="sign-in" method="post" action="/console/sign-in"`, `<input id="api-key" name="api_key" type="password"`, `id="sign-in-submit"`, `name="next"`} {
		if !strings.Contains(form.body, want) {
			t.Errorf("the sign-in page lacks %s", want)
		}
	}
	refused := e.post("/console/sign-in", url.Values{"api_key": {"hk_wrong"}, "csrf": {form.hidden(t, "csrf")}}).expect(t, 401)
	if !strings.Contains(refused.body, `<p id="sign-in-error" role="alert"`) {
		t.Fatalf("no #sign-in-error:\n%s", refused.body)
	}
	wellFormed(t, refused.body)
	noScope := e.signIn("key-users").expect(t, 403)
	if !strings.Contains(noScope.body, `id="sign-in-error"`) {
		t.Fatalf("a key without the console scope: no #sign-in-error")
	}
	// The sign-in form's own CSRF token is required too.
	e.post("/console/sign-in", url.Values{"api_key": {"key-admin"}}).expect(t, 403)

	ok := e.signIn("key-admin").expect(t, 303)
	if ok.header.Get("Location") != "/console/overview" {
		t.Fatalf("after sign-in: %q", ok.header.Get("Location"))
	}
	ck := ok.header.Values("Set-Cookie")
	var session string
	for _, c := range ck {
		if strings.HasPrefix(c, "herald_console=") {
			session = c
		}
	}
	for _, want := range []string{"Path=/console/", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(session, want) {
			t.Errorf("session cookie %q lacks %s", session, want)
		}
	}
	home := e.get("/console/overview").expect(t, 200)
	wellFormed(t, home.body)
	for _, want := range []string{`<main id="main"`, `<nav aria-label="Console">`, `<form id="sign-out" method="post" action="/console/sign-out">`, `<a class="skip" href="#main">`} {
		if !strings.Contains(home.body, want) {
			t.Errorf("the overview lacks %s", want)
		}
	}
	// An open redirect is not possible through next.
	form = e.get("/console/sign-in")
	r = e.post("/console/sign-in", url.Values{"api_key": {"key-admin"}, "next": {"//evil.example/"}, "csrf": {form.hidden(t, "csrf")}}).expect(t, 303)
	if r.header.Get("Location") != "/console/overview" {
		t.Fatalf("next=//evil.example/ redirected to %q", r.header.Get("Location"))
	}
}

// TestSecureCookies: over plain HTTP the cookies are not Secure, unless
// the console is told every browser connection is https (a proxy ends
// TLS: console.secure_cookie always).
func TestSecureCookies(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		e := newEnv(t, envOptions{secure: secure})
		r := e.get("/console/sign-in").expect(t, 200)
		cookies := r.header.Values("Set-Cookie")
		if len(cookies) == 0 {
			t.Fatal("the sign-in page set no cookie")
		}
		for _, c := range cookies {
			if got := strings.Contains(c, "; Secure"); got != secure {
				t.Errorf("secure %v: cookie %q", secure, c)
			}
		}
	}
}

// TestSignOutAndExpiry: signing out needs the CSRF token and ends the
// session; an expired session is sent to sign in again.
func TestSignOutAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.signIn("key-admin").expect(t, 303)
	home := e.get("/console/overview").expect(t, 200)
	r := e.post("/console/sign-out", url.Values{}).expect(t, 403)
	if !strings.Contains(r.body, `<p id="error" data-code="csrf_invalid"`) {
		t.Fatalf("sign-out without csrf:\n%s", r.body)
	}
	e.post("/console/sign-out", url.Values{"csrf": {home.csrf(t)}}).expect(t, 303)
	e.get("/console/overview").expect(t, 303)

	e.signIn("key-admin").expect(t, 303)
	e.get("/console/overview").expect(t, 200)
	e.sessions.expire()
	if loc := e.get("/console/overview").expect(t, 303).header.Get("Location"); !strings.HasPrefix(loc, "/console/sign-in?next=") {
		t.Fatalf("an expired session went to %q", loc)
	}
}

// TestSecurityHeaders: every answer, pages and errors, carries them.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	for _, path := range []string{"/console/overview", "/console/nope", "/console/sign-in"} {
		r := e.get(path)
		h := r.header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "script-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "same-origin" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, h)
		}
		if r.status == 200 && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, h.Get("Cache-Control"))
		}
	}
	if r := e.get("/console/nope").expect(t, 404); !strings.Contains(r.body, `data-code="not_found"`) {
		t.Errorf("404 page:\n%s", r.body)
	}
	// No inline script or style anywhere: the CSP would block it.
	body := e.get("/console/overview").body
	if strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, "<style") {
		t.Errorf("the overview has inline script or style")
	}
	for _, a := range []string{"console.css", "console.js"} {
		r := e.get("/console/assets/"+a).expect(t, 200)
		if r.header.Get("Content-Type") == "" || len(r.body) < 100 {
			t.Errorf("%s: %q, %d bytes", a, r.header.Get("Content-Type"), len(r.body))
		}
	}
	if r := e.get("/console/"); r.status != 303 || r.header.Get("Location") != "/console/overview" {
		t.Errorf("/console/: %d %q", r.status, r.header.Get("Location"))
	}
}

// TestDevCSRF: --dev has no sign-in but still refuses a state change
// without the token.
func TestDevCSRF(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	home := e.get("/console/overview").expect(t, 200)
	if home.csrf(t) == "" {
		t.Fatal("no token")
	}
	if r := e.get("/console/sign-in"); r.status != 303 {
		t.Fatalf("dev sign-in page: %d", r.status)
	}
}
