package console

import (
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// cookieName is the session cookie; signInCookie carries the sign-in
// form's own CSRF token (double submit: there is no session yet to bind
// it to, and a per-process secret would not survive a load balancer).
const (
	cookieName   = "herald_console"
	signInCookie = "herald_console_signin"
)

// maxAPIKeyBytes bounds the key field; a Herald key is far shorter.
const maxAPIKeyBytes = 512

// signInData is the sign-in page's.
type signInData struct {
	Next, CSRF, Error string
}

// signInPage shows the sign-in form; in dev mode there is nothing to sign
// in to.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if c.dev {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.renderSignIn(w, r, http.StatusOK, next, "")
}

func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	token := randomToken()
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: token, Path: Prefix, HttpOnly: true,
		Secure: c.secureCookie(r), SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	// The page's csrf-token meta carries the sign-in form's token, as
	// every other page's carries its session's (no session ID: no
	// navigation or sign-out is shown).
	c.render(w, r, status, "sign-in", page{Title: "Sign in", Session: Session{CSRF: token},
		Data: signInData{Next: next, CSRF: token, Error: msg}})
}

// signIn turns an API key into a session: a cookie the browser sends
// back, never the key itself.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if c.dev {
		http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, Session{}, heraldtype.Errorf(heraldtype.EINVALID, "the form could not be read"))
		return
	}
	ck, err := r.Cookie(signInCookie)
	got := r.PostForm.Get(csrfField)
	if err != nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(ck.Value)) != 1 {
		c.fail(w, r, Session{}, errCSRF)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	key := strings.TrimSpace(r.PostForm.Get("api_key"))
	if key == "" || len(key) > maxAPIKeyBytes {
		c.renderSignIn(w, r, http.StatusUnauthorized, next, "Enter an API key of the admin or console scope.")
		return
	}
	_, token, err := c.sessions.Create(r.Context(), key)
	if err != nil {
		switch heraldtype.ErrorCode(err) {
		case heraldtype.EUNAUTHENTICATED:
			c.renderSignIn(w, r, http.StatusUnauthorized, next, "That API key was not accepted.")
		case heraldtype.EPERMISSIONDENIED:
			c.renderSignIn(w, r, http.StatusForbidden, next, "That API key has neither the admin nor the console scope.")
		case heraldtype.ERATELIMITED:
			c.renderSignIn(w, r, http.StatusTooManyRequests, next, "Too many attempts; wait a minute and try again.")
		default:
			c.log.LogAttrs(r.Context(), slog.LevelError, "console: sign-in failed", slog.String("err", err.Error()))
			c.renderSignIn(w, r, http.StatusServiceUnavailable, next, "Signing in is not possible right now; try again.")
		}
		return
	}
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Path: Prefix, MaxAge: -1, HttpOnly: true,
		Secure: c.secureCookie(r), SameSite: http.SameSiteStrictMode})
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: Prefix, HttpOnly: true,
		Secure: c.secureCookie(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signOut revokes the session and forgets its cookie.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	if c.dev {
		http.Redirect(w, r, "/console/overview", http.StatusSeeOther)
		return
	}
	s, ok := c.session(w, r)
	if !ok {
		return
	}
	if !c.csrfValid(r, s) {
		c.fail(w, r, s, errCSRF)
		return
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		if err := c.sessions.Revoke(r.Context(), ck.Value); err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	c.clearCookie(w, r)
	http.Redirect(w, r, "/console/sign-in", http.StatusSeeOther)
}

// secureCookie says whether a cookie set in answer to r is Secure.
func (c *Console) secureCookie(r *http.Request) bool { return c.secure || r.TLS != nil }

// clearCookie tells the browser to forget the session cookie.
func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: Prefix, MaxAge: -1, HttpOnly: true,
		Secure: c.secureCookie(r), SameSite: http.SameSiteStrictMode})
}
