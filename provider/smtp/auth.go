package smtp

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	gmsmtp "github.com/wneessen/go-mail/smtp"
	"golang.org/x/oauth2"

	"github.com/heraldhq/herald/heraldtype"
)

// Authentication modes of Config.Auth.
const (
	// AuthAuto picks the strongest mechanism the server offers in its
	// EHLO reply for which Herald has a credential (see mechanisms).
	AuthAuto = "auto"
	// AuthPlain is PLAIN (RFC 4616): the password, once, over TLS.
	AuthPlain = "plain"
	// AuthLogin is LOGIN, which Microsoft 365 and older servers offer
	// instead of PLAIN: the same secrets in two steps.
	AuthLogin = "login"
	// AuthCramMD5 is CRAM-MD5 (RFC 2195): an HMAC of the server's
	// challenge, so the password itself never crosses the wire.
	AuthCramMD5 = "cram-md5"
	// AuthXOAuth2 is XOAUTH2, the bearer-token mechanism of Gmail and
	// Microsoft 365 modern authentication: Config.OAuth2 or TokenSource
	// supplies the token.
	AuthXOAuth2 = "xoauth2"
)

// mechanism is one SASL mechanism Herald authenticates with.
type mechanism struct {
	name string // as the EHLO reply lists it
	// cleartext: the mechanism sends a reusable secret (a password, a
	// bearer token), so it is refused without TLS unless
	// AllowInsecureAuth.
	cleartext bool
	// oauth: it uses the token source rather than the password.
	oauth bool
}

// mechanisms are the mechanisms Herald speaks, strongest first — the
// order AuthAuto tries them in. XOAUTH2 leads: its token is short-lived
// and scoped to mail, not the account's password. CRAM-MD5 never sends
// the password, even to a server that is not who it claims to be. PLAIN
// before LOGIN: the same secret, in one round trip, on a standard.
var mechanisms = []mechanism{
	{name: "XOAUTH2", cleartext: true, oauth: true},
	{name: "CRAM-MD5"},
	{name: "PLAIN", cleartext: true},
	{name: "LOGIN", cleartext: true},
}

// mechanismOf returns the mechanism a Config.Auth value names.
func mechanismOf(auth string) (mechanism, bool) {
	for _, m := range mechanisms {
		if strings.EqualFold(m.name, auth) {
			return m, true
		}
	}
	return mechanism{}, false
}

// configErr is a failure only an operator can fix: the server lacks what
// the configuration requires.
func configErr(format string, args ...any) *heraldtype.SendError {
	return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeConfig, Message: fmt.Sprintf(format, args...)}
}

// pick chooses the mechanism for a server that offers the mechanisms in
// offered, over TLS or not.
func (r *resolved) pick(offered []string, overTLS bool) (mechanism, error) {
	usable := func(m mechanism) bool { return !m.cleartext || overTLS || r.AllowInsecureAuth }
	if r.Auth != AuthAuto {
		m, _ := mechanismOf(r.Auth)
		switch {
		case !slices.Contains(offered, m.name):
			return m, configErr("the server does not offer AUTH %s (Auth %q); it offers %s", m.name, r.Auth, offerList(offered))
		case !usable(m):
			return m, configErr("AUTH %s sends a reusable secret and the connection is not encrypted: refused unless AllowInsecureAuth", m.name)
		}
		return m, nil
	}
	for _, m := range mechanisms {
		has := r.Password != ""
		if m.oauth {
			has = r.tokens != nil
		}
		if has && usable(m) && slices.Contains(offered, m.name) {
			return m, nil
		}
	}
	why := ""
	if !overTLS && !r.AllowInsecureAuth {
		why = " (PLAIN, LOGIN and XOAUTH2 are refused without TLS unless AllowInsecureAuth)"
	}
	return mechanism{}, configErr("no AUTH mechanism the server offers (%s) can be used with the configured credentials%s", offerList(offered), why)
}

func offerList(offered []string) string {
	if len(offered) == 0 {
		return "none"
	}
	return strings.Join(offered, " ")
}

// authenticator is the go-mail smtp.Auth of one connection: it picks the
// mechanism when the server's EHLO is known, then lets go-mail's own
// implementation of that mechanism speak it. A new one per Send, since a
// mechanism keeps per-dialogue state.
type authenticator struct {
	r     *resolved
	mech  mechanism
	inner gmsmtp.Auth
	// cached: the XOAUTH2 token was the one an earlier send used.
	cached bool
}

var _ gmsmtp.Auth = (*authenticator)(nil)

func (a *authenticator) Start(info *gmsmtp.ServerInfo) (string, []byte, error) {
	m, err := a.r.pick(info.Auth, info.TLS)
	if err != nil {
		return "", nil, err
	}
	a.mech = m
	r := a.r
	switch m.name {
	case "XOAUTH2":
		tok, cached, err := r.tokens.token()
		if err != nil {
			return "", nil, tokenErr(err)
		}
		a.cached = cached
		a.inner = gmsmtp.XOAuth2Auth(r.Username, tok)
	case "CRAM-MD5":
		a.inner = gmsmtp.CRAMMD5Auth(r.Username, r.Password)
	case "PLAIN":
		// pick has decided about TLS; go-mail's own check would only
		// repeat it (and compare the host name, which is the one dialled).
		a.inner = gmsmtp.PlainAuth("", r.Username, r.Password, info.Name, true)
	default:
		a.inner = gmsmtp.LoginAuth(r.Username, r.Password, info.Name, true)
	}
	return a.inner.Start(info)
}

func (a *authenticator) Next(fromServer []byte, more bool) ([]byte, error) {
	return a.inner.Next(fromServer, more)
}

// authenticate runs AUTH on conn, which has said EHLO (and upgraded to
// TLS when configured). A failure is a *heraldtype.SendError.
func (c *Client) authenticate(conn *gmsmtp.Client) error {
	if ok, _ := conn.Extension("AUTH"); !ok {
		return configErr("the server does not offer SMTP AUTH, and Username is set")
	}
	a := &authenticator{r: c.cfg}
	err := conn.Auth(a)
	if err == nil {
		return nil
	}
	var se *heraldtype.SendError
	if errors.As(err, &se) {
		return se
	}
	se = classify(err)
	if a.mech.name != "" {
		se.Message = fmt.Sprintf("AUTH %s as %q refused: %s", a.mech.name, c.cfg.Username, se.Message)
	}
	if a.mech.oauth && se.Class == heraldtype.ClassPermanent {
		// The server refused a token the endpoint issued: revoked, or
		// expired early. Drop it, so the next send fetches a new one; if
		// this one came from the cache, the retry is worth it.
		c.cfg.tokens.drop()
		if a.cached {
			se.Class = heraldtype.ClassTemporary
			se.Message += " (a cached XOAUTH2 token; dropped, the retry fetches a new one)"
		}
	}
	return se
}

// tokenErr classifies a failure to get an XOAUTH2 token: the token
// endpoint refusing the client or its refresh token (a 4xx other than
// 429) only an operator can fix; anything else (5xx, 429, no answer) may
// pass.
func tokenErr(err error) *heraldtype.SendError {
	se := &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeOAuth2,
		Message: "getting the XOAUTH2 token: " + err.Error(), Err: err}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		if s := re.Response.StatusCode; s >= 400 && s < 500 && s != http.StatusTooManyRequests {
			se.Class = heraldtype.ClassPermanent
		}
	}
	return se
}
