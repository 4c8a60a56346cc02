package smtp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
)

const testToken = "ya29.test-token"

// TestAuthEachMechanism: Herald's client authenticates with each
// mechanism the emulator verifies, and a wrong secret is a permanent 535
// whose message names the mechanism and the user.
func TestAuthEachMechanism(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		auth, mech string
		wrong      func(*Config)
	}{
		{AuthPlain, "PLAIN", func(c *Config) { c.Password = "wrong" }},
		{AuthLogin, "LOGIN", func(c *Config) { c.Password = "wrong" }},
		{AuthCramMD5, "CRAM-MD5", func(c *Config) { c.Password = "wrong" }},
		{AuthXOAuth2, "XOAUTH2", func(c *Config) { c.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "forged"}) }},
	} {
		t.Run(tc.auth, func(t *testing.T) {
			t.Parallel()
			e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, Password: testPass, OAuth2Token: testToken})
			cfg := func(c *Config) {
				c.Auth = tc.auth
				c.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testToken})
			}
			if _, err := newTestClient(t, e, cfg).Send(context.Background(), message(testTo)); err != nil {
				t.Fatal(err)
			}
			if r := e.Messages()[0]; r.Mechanism != tc.mech || r.User != testUser || !r.TLS {
				t.Errorf("mechanism %q user %q tls %v", r.Mechanism, r.User, r.TLS)
			}
			se := sendErr(t, newTestClient(t, e, func(c *Config) { cfg(c); tc.wrong(c) }), message(testTo))
			want := fmt.Sprintf("AUTH %s as %q refused: ", tc.mech, testUser)
			if se.Class != heraldtype.ClassPermanent || se.Code != "smtp_535" || !strings.HasPrefix(se.Message, want) {
				t.Errorf("wrong credentials: %+v, want a permanent smtp_535 starting %q", se, want)
			}
		})
	}
}

// TestAuthAutoPicksStrongest: auto takes the strongest mechanism the
// server offers for which the client has a credential.
func TestAuthAutoPicksStrongest(t *testing.T) {
	t.Parallel()
	all := []string{"PLAIN", "LOGIN", "CRAM-MD5", "XOAUTH2"}
	for _, tc := range []struct {
		offered []string
		token   bool
		want    string
	}{
		{all, true, "XOAUTH2"},
		{all, false, "CRAM-MD5"},
		{[]string{"LOGIN", "PLAIN"}, true, "PLAIN"},
		{[]string{"LOGIN", "XOAUTH2"}, false, "LOGIN"}, // Microsoft 365's list
		{[]string{"LOGIN"}, false, "LOGIN"},
	} {
		t.Run(fmt.Sprintf("%v/token=%v", tc.offered, tc.token), func(t *testing.T) {
			t.Parallel()
			e := startEmulator(t, smtpemu.Config{TLS: TLSImplicit, Username: testUser, Password: testPass,
				OAuth2Token: testToken, Mechanisms: tc.offered})
			c := newTestClient(t, e, func(c *Config) {
				if tc.token {
					c.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testToken})
				}
			})
			if _, err := c.Send(context.Background(), message(testTo)); err != nil {
				t.Fatal(err)
			}
			if got := e.Messages()[0].Mechanism; got != tc.want {
				t.Errorf("auto picked %s, want %s", got, tc.want)
			}
		})
	}
	// A named mechanism the server does not offer is a configuration
	// error, not a silent fallback.
	e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, Password: testPass, Mechanisms: []string{"LOGIN"}})
	se := sendErr(t, newTestClient(t, e, func(c *Config) { c.Auth = AuthPlain }), message(testTo))
	if se.Class != heraldtype.ClassPermanent || se.Code != codeConfig || !strings.Contains(se.Message, "offers LOGIN") {
		t.Errorf("PLAIN not offered: %+v", se)
	}
}

// TestAuthRefusedWithoutTLS: without TLS, auto never sends a password or a
// token in the clear, a named cleartext mechanism is refused when the
// client is built, and only AllowInsecureAuth permits it.
func TestAuthRefusedWithoutTLS(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{Username: testUser, Password: testPass, OAuth2Token: testToken,
		Mechanisms: []string{"PLAIN", "LOGIN", "XOAUTH2"}})
	withToken := func(c *Config) { c.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testToken}) }
	se := sendErr(t, newTestClient(t, e, withToken), message(testTo))
	if se.Class != heraldtype.ClassPermanent || se.Code != codeConfig || !strings.Contains(se.Message, "AllowInsecureAuth") {
		t.Errorf("auto without TLS: %+v", se)
	}
	if st := e.Stats(); len(e.Messages()) != 0 || st.Rejected[535] != 0 {
		t.Errorf("the server saw an AUTH attempt: %+v", st)
	}
	for _, auth := range []string{AuthPlain, AuthLogin, AuthXOAuth2} {
		host, port := e.HostPort()
		_, err := New(Config{Host: host, Port: port, TLS: TLSNone, Username: testUser, Password: testPass, Auth: auth,
			TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testToken}), From: "noreply@acme.example"})
		if err == nil || !strings.Contains(err.Error(), "AllowInsecureAuth") {
			t.Errorf("Auth %s with TLS none: %v", auth, err)
		}
	}
	ok := newTestClient(t, e, func(c *Config) { c.Auth, c.AllowInsecureAuth = AuthLogin, true })
	if _, err := ok.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	// CRAM-MD5 never sends the password, so auto may use it in the clear.
	cram := startEmulator(t, smtpemu.Config{Username: testUser, Password: testPass, Mechanisms: []string{"PLAIN", "CRAM-MD5"}})
	if _, err := newTestClient(t, cram, nil).Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	if m := cram.Messages()[0].Mechanism; m != "CRAM-MD5" {
		t.Errorf("picked %s", m)
	}
}

// tokenEndpoint is an OAuth 2.0 token endpoint (httptest) that issues
// tok-1, tok-2, … and rotates the refresh token with each; only the
// latest access token is valid, as the emulator's VerifyToken.
type tokenEndpoint struct {
	*httptest.Server
	mu        sync.Mutex
	expiresIn int
	status    int // answer this status with an OAuth error, if set
	issued    int
	requests  []map[string]string
	current   string
}

func newTokenEndpoint(t *testing.T, expiresIn int) *tokenEndpoint {
	te := &tokenEndpoint{expiresIn: expiresIn}
	te.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		id, secret, _ := r.BasicAuth()
		te.mu.Lock()
		defer te.mu.Unlock()
		te.requests = append(te.requests, map[string]string{"grant_type": r.PostForm.Get("grant_type"),
			"refresh_token": r.PostForm.Get("refresh_token"), "client": id + ":" + secret + r.PostForm.Get("client_id"),
			"scope": r.PostForm.Get("scope")})
		w.Header().Set("Content-Type", "application/json")
		if te.status != 0 {
			w.WriteHeader(te.status)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
			return
		}
		te.issued++
		te.current = fmt.Sprintf("tok-%d", te.issued)
		json.NewEncoder(w).Encode(map[string]any{"access_token": te.current, "token_type": "Bearer",
			"expires_in": te.expiresIn, "refresh_token": fmt.Sprintf("rt-%d", te.issued+1)})
	}))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) valid(user, token string) bool {
	te.mu.Lock()
	defer te.mu.Unlock()
	return user == testUser && token == te.current
}

func (te *tokenEndpoint) revoke() {
	te.mu.Lock()
	defer te.mu.Unlock()
	te.current = ""
}

func (te *tokenEndpoint) log() []map[string]string {
	te.mu.Lock()
	defer te.mu.Unlock()
	return append([]map[string]string(nil), te.requests...)
}

// TestXOAuth2RefreshesExpiredToken: a token that has expired is refreshed
// with the (rotated) refresh token before the next send; the server only
// accepts the current one.
func TestXOAuth2RefreshesExpiredToken(t *testing.T) {
	t.Parallel()
	// expires_in 1 is inside x/oauth2's 10 s early-expiry margin: each
	// token is expired by the next send, without the test sleeping.
	te := newTokenEndpoint(t, 1)
	e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, VerifyToken: te.valid})
	c := newTestClient(t, e, func(c *Config) {
		c.Password, c.Auth = "", AuthXOAuth2
		c.OAuth2 = OAuth2{TokenURL: te.URL + "/token", ClientID: "herald-app", ClientSecret: "s3cret", RefreshToken: "rt-1",
			Scopes: []string{"https://mail.google.com/"}}
	})
	for range 2 {
		if _, err := c.Send(context.Background(), message(testTo)); err != nil {
			t.Fatal(err)
		}
	}
	reqs := te.log()
	if len(reqs) != 2 || reqs[0]["refresh_token"] != "rt-1" || reqs[1]["refresh_token"] != "rt-2" ||
		reqs[1]["grant_type"] != "refresh_token" || reqs[0]["client"] != "herald-app:s3cret" {
		t.Errorf("token requests %v", reqs)
	}
	if n := len(e.Messages()); n != 2 {
		t.Errorf("%d mails", n)
	}
	if s := fmt.Sprint(c.cfg.Config); strings.Contains(s, "s3cret") || strings.Contains(s, "rt-1") {
		t.Errorf("Config prints a secret: %s", s)
	}
}

// TestXOAuth2CachedTokenRevoked: a long-lived token is reused; when the
// server refuses it, the send fails temporarily and the next one fetches
// a new token. A token endpoint that refuses the refresh token is a
// permanent smtp_oauth2 error.
func TestXOAuth2CachedTokenRevoked(t *testing.T) {
	t.Parallel()
	te := newTokenEndpoint(t, 3600)
	e := startEmulator(t, smtpemu.Config{TLS: TLSStartTLS, Username: testUser, VerifyToken: te.valid})
	c := newTestClient(t, e, func(c *Config) {
		// No refresh token: the client-credentials grant (Microsoft 365
		// app-only).
		c.Password = ""
		c.OAuth2 = OAuth2{TokenURL: te.URL, ClientID: "herald-app", ClientSecret: "s3cret"}
	})
	for range 2 {
		if _, err := c.Send(context.Background(), message(testTo)); err != nil {
			t.Fatal(err)
		}
	}
	if reqs := te.log(); len(reqs) != 1 || reqs[0]["grant_type"] != "client_credentials" {
		t.Fatalf("token requests %v, want one client_credentials grant", reqs)
	}
	te.revoke()
	if se := sendErr(t, c, message(testTo)); se.Class != heraldtype.ClassTemporary || se.Code != "smtp_535" {
		t.Errorf("revoked cached token: %+v", se)
	}
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatalf("after dropping the refused token: %v", err)
	}

	te.mu.Lock()
	te.status = http.StatusBadRequest
	te.mu.Unlock()
	te.revoke()
	c.cfg.tokens.drop()
	if se := sendErr(t, c, message(testTo)); se.Class != heraldtype.ClassPermanent || se.Code != codeOAuth2 ||
		!strings.Contains(se.Message, "invalid_grant") {
		t.Errorf("refused refresh: %+v", se)
	}
}

// TestHeloName: the configured EHLO name reaches the server; a bad one is
// refused when the client is built.
func TestHeloName(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, func(c *Config) { c.Username, c.Password, c.HeloName = "", "", "mta1.acme.example" })
	if _, err := c.Send(context.Background(), message(testTo)); err != nil {
		t.Fatal(err)
	}
	if h := e.Messages()[0].Helo; h != "mta1.acme.example" {
		t.Errorf("EHLO %q", h)
	}
	for _, bad := range []string{"mta 1", "mta1.acme.example\r\nRSET", "-bad.example", "[not-an-ip]"} {
		if _, err := New(Config{Host: "127.0.0.1", From: "a@b.example", HeloName: bad}); err == nil || !strings.Contains(err.Error(), "HeloName") {
			t.Errorf("HeloName %q: %v", bad, err)
		}
	}
	if _, err := New(Config{Host: "127.0.0.1", From: "a@b.example", HeloName: "[IPv6:2001:db8::1]"}); err != nil {
		t.Error(err)
	}
}

// TestAuthConfigErrors: each bad combination is refused naming its field.
func TestAuthConfigErrors(t *testing.T) {
	t.Parallel()
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Auth = "ntlm" }, `Auth "ntlm"`},
		{func(c *Config) { c.Username = "" }, "Username is empty"},
		{func(c *Config) { c.Password = "" }, "without a Password, OAuth2 or TokenSource"},
		{func(c *Config) { c.Auth = AuthXOAuth2 }, "needs OAuth2"},
		{func(c *Config) { c.Password, c.TokenSource, c.Auth = "", ts, AuthLogin }, "needs a Password"},
		{func(c *Config) { c.TokenSource, c.OAuth2 = ts, OAuth2{TokenURL: "https://t.example", ClientID: "x"} }, "not both"},
		{func(c *Config) { c.OAuth2 = OAuth2{ClientID: "x"} }, "OAuth2.TokenURL is required"},
		{func(c *Config) { c.OAuth2 = OAuth2{TokenURL: "http://t.example/token", ClientID: "x"} }, "must be https"},
		{func(c *Config) { c.OAuth2 = OAuth2{TokenURL: "https://t.example/token"} }, "OAuth2.ClientID"},
	} {
		cfg := Config{Host: "smtp.example", Username: testUser, Password: testPass, From: "a@b.example"}
		tc.mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", cfg, err, tc.want)
		}
	}
}

// TestListUnsubscribeHeaders: the targets become RFC 8058's two headers;
// a target that could inject a header is refused before anything is sent.
func TestListUnsubscribeHeaders(t *testing.T) {
	t.Parallel()
	e := startEmulator(t, smtpemu.Config{})
	c := newTestClient(t, e, func(c *Config) { c.Username, c.Password = "", "" })
	m := message(testTo)
	m.ListUnsubscribe = []string{"https://herald.example/v1/unsubscribe/u1.abc.def", "mailto:unsub@acme.example?subject=unsubscribe%20u1.abc.def"}
	if _, err := c.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	h := e.Messages()[0].Headers
	if got := h["List-Unsubscribe"]; len(got) != 1 || got[0] != "<"+m.ListUnsubscribe[0]+">, <"+m.ListUnsubscribe[1]+">" {
		t.Errorf("List-Unsubscribe %q", got)
	}
	if got := h["List-Unsubscribe-Post"]; len(got) != 1 || got[0] != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
	m.ListUnsubscribe = []string{"https://x.example/a>\r\nBcc: victim@example.com"}
	if se := sendErr(t, c, m); se.Class != heraldtype.ClassPermanent || se.Code != codeInvalidMessage {
		t.Errorf("injected target: %+v", se)
	}
}
