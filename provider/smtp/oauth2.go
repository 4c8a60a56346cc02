package smtp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// OAuth2 is where XOAUTH2 gets its bearer tokens: an OAuth 2.0 token
// endpoint, asked with one of the two grants real deployments use.
//
//   - With RefreshToken: the refresh-token grant, for a mailbox whose
//     owner consented once (Gmail: TokenURL
//     https://oauth2.googleapis.com/token, scope https://mail.google.com/;
//     Microsoft 365 delegated: TokenURL
//     https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token, scopes
//     https://outlook.office.com/SMTP.Send offline_access). A refresh
//     token the endpoint rotates is kept for the next refresh (in memory).
//   - Without: the client-credentials grant, for an application allowed to
//     send as the mailbox (Microsoft 365 app-only: scope
//     https://outlook.office365.com/.default).
//
// Tokens are cached until shortly before they expire (golang.org/x/oauth2
// refreshes 10 s early), and a token the server refuses is dropped.
type OAuth2 struct {
	// TokenURL is the token endpoint: https, or http to a loopback
	// address (a test endpoint).
	TokenURL     string
	ClientID     string
	ClientSecret string
	// RefreshToken selects the refresh-token grant; a secret, never
	// printed.
	RefreshToken string
	// Scopes are requested with every token.
	Scopes []string
}

func (o OAuth2) set() bool {
	return o.TokenURL != "" || o.ClientID != "" || o.ClientSecret != "" || o.RefreshToken != ""
}

// validate checks o; the errors name the field.
func (o OAuth2) validate() error {
	u, err := url.Parse(o.TokenURL)
	switch {
	case o.TokenURL == "":
		return fmt.Errorf("smtp: OAuth2.TokenURL is required")
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Errorf("smtp: OAuth2.TokenURL %q is not an http(s) URL", o.TokenURL)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("smtp: OAuth2.TokenURL %q must be https: it carries the client secret", o.TokenURL)
	case o.ClientID == "":
		return fmt.Errorf("smtp: OAuth2.ClientID is required")
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenCache hands out XOAUTH2 access tokens from a token source, and
// can drop the one it holds (a server refused it).
type tokenCache struct {
	// build makes a fresh source from the latest refresh token (nil for
	// a TokenSource an embedder passed: its caching is its own).
	build func(refresh string) oauth2.TokenSource

	mu      sync.Mutex
	src     oauth2.TokenSource
	refresh string // the latest refresh token (the endpoint may rotate it)
	last    string // the access token last handed out
}

// newTokenCache returns the cache for ts, or for a source of o's when ts
// is nil; nil when neither is configured. timeout bounds each request to
// the token endpoint.
func newTokenCache(o OAuth2, ts oauth2.TokenSource, timeout time.Duration) *tokenCache {
	if ts != nil {
		return &tokenCache{src: ts}
	}
	if !o.set() {
		return nil
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: timeout})
	t := &tokenCache{refresh: o.RefreshToken}
	if o.RefreshToken != "" {
		cfg := &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
			Endpoint: oauth2.Endpoint{TokenURL: o.TokenURL}}
		t.build = func(refresh string) oauth2.TokenSource {
			return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refresh})
		}
	} else {
		cfg := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, TokenURL: o.TokenURL}
		t.build = func(string) oauth2.TokenSource { return cfg.TokenSource(ctx) }
	}
	t.src = t.build(t.refresh)
	return t
}

// token returns a valid access token, and whether it is the one handed
// out before (cached rather than just fetched).
func (t *tokenCache) token() (string, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, err := t.src.Token()
	if err != nil {
		return "", false, err
	}
	if tok.RefreshToken != "" {
		t.refresh = tok.RefreshToken
	}
	cached := tok.AccessToken == t.last
	t.last = tok.AccessToken
	return tok.AccessToken, cached, nil
}

// drop forgets the cached access token, so the next token call asks the
// endpoint again.
func (t *tokenCache) drop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.build != nil {
		t.src = t.build(t.refresh)
	}
	t.last = ""
}
