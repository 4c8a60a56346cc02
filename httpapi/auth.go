package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// AuthConfig says how the Server authenticates callers. Every route
// declares who may call it when it is registered (see access); there is no
// route without a rule.
type AuthConfig struct {
	// Keys checks server API keys (Authorization: Bearer hk_…). Required
	// unless Disabled.
	Keys *auth.Keys
	// UserTokens verifies user tokens (Authorization: Bearer <JWT>) for
	// the app-facing routes. Nil refuses user tokens.
	UserTokens *auth.UserTokens
	// Disabled is for `serve --dev` on loopback only: a request without
	// credentials acts with every scope. Credentials that are sent are
	// still checked, so an app can be developed against real tokens.
	Disabled bool
	// OpenMetrics serves /metrics without credentials; otherwise it needs
	// a key with metrics:read (Prometheus: authorization.credentials_file).
	OpenMetrics bool
}

// access is a route's rule: who may call it.
type access struct {
	// open routes take no credentials at all (health probes).
	open bool
	// perAddress limits an open route's requests per client address
	// (RateLimitConfig.PublicLinks): the links in e-mails, which anyone
	// holding the mail follows without a credential.
	perAddress bool
	// scope is what a server API key needs; "" when keys may not call the
	// route (user-only routes).
	scope auth.Scope
	// self lets a user token in whose sub equals the path's {id}.
	self bool
	// user lets any user token in, speaking for its sub (the app's
	// receipts: the route has no {id}, and the Client holds a user's
	// requests to that user's own records).
	user bool
	// userOnly routes are the app's own (the user is the token's sub); a
	// server key is refused with a pointer to the server route.
	userOnly bool
	// queryToken also accepts a user token as ?access_token=, for
	// browsers' EventSource and WebSocket, which cannot send headers (RFC
	// 6750 §2.3).
	// Only a user token: it is short-lived (MaxLifetime) and speaks for
	// one user, while a URL is copied into proxy logs, browser history
	// and Referer headers. A server API key there is refused. The access
	// log never records the query string.
	queryToken bool
	// console is the operator console's mount (console.go): not an API
	// operation, and authenticated by the console's own sessions.
	console bool
}

// The rules, one per kind of route. Registering a route takes one:
//
//	s.handle("GET /v1/users/{id}/inbox", userOrScope(auth.ScopeInboxRead), s.listInbox)
//	s.handle("PUT /v1/users/{id}/preferences", userOrScope(auth.ScopePreferencesWrite), s.putPreferences)
//	s.handle("POST /v1/notifications", needScope(auth.ScopeNotificationsWrite), s.trigger)
//	s.handle("POST /v1/receipts", userTokenOrScope(auth.ScopeReceiptsWrite), s.recordReceipts)
func openAccess() access                   { return access{open: true} }
func publicLinkAccess() access             { return access{open: true, perAddress: true} }
func needScope(s auth.Scope) access        { return access{scope: s} }
func userOrScope(s auth.Scope) access      { return access{scope: s, self: true} }
func userOnlyAccess() access               { return access{userOnly: true} }
func userTokenOrScope(s auth.Scope) access { return access{scope: s, user: true} }
func (a access) withQueryToken() access    { a.queryToken = true; return a }
func (a access) valid() bool               { return a.open || a.scope.Valid() || a.userOnly || a.console }

// principal is who is calling.
type principal struct {
	// keyID is the API key's id ("dev" without credentials in dev mode);
	// empty for a user.
	keyID  string
	scopes []auth.Scope
	// userID is a user token's sub.
	userID string
	// expires is a user token's exp (zero for a key), and recheck checks
	// an API key again (nil for a user): a long-lived inbox stream ends
	// when its credential does.
	expires time.Time
	recheck func(context.Context) error
}

// limitKey names the principal's rate-limit bucket.
func (p *principal) limitKey() string {
	if p.userID != "" {
		return "user:" + p.userID
	}
	return "key:" + p.keyID
}

type principalKey struct{}

// principalFrom returns the caller of an authenticated request.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// errUnauthenticated is an unauthenticated error with the standard
// challenge; invalid tells a client that its token was looked at and
// refused (RFC 6750 §3.1).
type authError struct {
	err     error
	invalid bool
}

func (e *authError) Error() string { return e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

func unauthenticated(invalid bool, format string, args ...any) error {
	return &authError{err: heraldtype.Errorf(heraldtype.EUNAUTHENTICATED, format, args...), invalid: invalid}
}

// authenticate finds the caller of r.
func (s *Server) authenticate(r *http.Request, a access) (*principal, error) {
	token, inQuery, err := bearer(r, a.queryToken)
	if err != nil {
		return nil, err
	}
	if token == "" {
		if s.auth.Disabled {
			return &principal{keyID: "dev", scopes: []auth.Scope{auth.ScopeAdmin}}, nil
		}
		return nil, unauthenticated(false, "credentials are required: send Authorization: Bearer <API key or user token>")
	}
	if strings.Contains(token, ".") { // a JWT; API keys never contain a dot
		if s.auth.UserTokens == nil {
			return nil, unauthenticated(true, "user tokens are not enabled on this server (configure auth.user_tokens)")
		}
		c, err := s.auth.UserTokens.Verify(token)
		if err != nil {
			return nil, &authError{err: err, invalid: true}
		}
		return &principal{userID: c.Subject, expires: c.ExpiresAt}, nil
	}
	if inQuery {
		// Refused before any lookup, so a URL never tells whether a key
		// is valid; the key is already exposed and should be rotated.
		return nil, unauthenticated(true, "server API keys must be sent in the Authorization header, never in the URL; only a user token may be given as access_token")
	}
	if s.auth.Keys == nil {
		return nil, unauthenticated(true, "API keys are not configured on this server")
	}
	k, err := s.auth.Keys.Authenticate(r.Context(), token)
	if err != nil {
		var he *heraldtype.Error
		if errors.As(err, &he) && he.Code == heraldtype.EUNAUTHENTICATED {
			return nil, &authError{err: err, invalid: true}
		}
		return nil, err // the database: logged as internal, never the caller's fault
	}
	recheck := func(ctx context.Context) error {
		_, err := s.auth.Keys.Authenticate(ctx, token)
		return err
	}
	return &principal{keyID: k.ID, scopes: k.Scopes, recheck: recheck}, nil
}

// bearer extracts the bearer credential; "" when none was sent. inQuery
// says it came from ?access_token= rather than the header.
func bearer(r *http.Request, query bool) (token string, inQuery bool, err error) {
	hs := r.Header.Values("Authorization")
	if len(hs) > 1 {
		return "", false, unauthenticated(false, "send one Authorization header, not %d", len(hs))
	}
	if len(hs) == 1 {
		scheme, token, ok := strings.Cut(strings.TrimSpace(hs[0]), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", false, unauthenticated(false, "the Authorization header must be: Bearer <API key or user token>")
		}
		token = strings.TrimSpace(token)
		if token == "" {
			return "", false, unauthenticated(false, "the Authorization header has no token after Bearer")
		}
		return token, false, nil
	}
	if query {
		if vs := r.URL.Query()["access_token"]; len(vs) > 0 {
			if len(vs) > 1 || vs[0] == "" {
				return "", false, unauthenticated(false, "give access_token once, not empty")
			}
			return vs[0], true, nil
		}
	}
	return "", false, nil
}

// authorize decides whether p may call the route matched for r.
func authorize(r *http.Request, a access, p *principal) error {
	if p.userID != "" {
		switch {
		case a.userOnly, a.user:
			return nil
		case a.self && r.PathValue("id") == p.userID:
			return nil
		case a.self:
			return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "a user token may only access its own user (its sub)")
		}
		return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "this endpoint needs a server API key with scope %s; user tokens may only call the app endpoints", a.scope)
	}
	if a.userOnly {
		return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "this endpoint is the app's and takes a user token (the user is its sub); a server registers devices with POST /v1/users/{id}/devices")
	}
	if !auth.Grants(p.scopes, a.scope) {
		return heraldtype.Errorf(heraldtype.EPERMISSIONDENIED, "the API key lacks scope %s", a.scope)
	}
	return nil
}

// guard runs a route's rule before its handler: refuse an address with
// too many failed authentications, authenticate, rate-limit the
// principal, authorize. A rate limit counts every authenticated
// request, allowed or not, so a key cannot probe for free.
func (s *Server) guard(w http.ResponseWriter, r *http.Request, a access) (*http.Request, error) {
	if a.perAddress {
		if ok, wait := s.limits.allowAddr(clientAddr(r)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
			return r, heraldtype.Errorf(heraldtype.ERATELIMITED, "too many requests from this address; retry after %d s", retryAfterSeconds(wait))
		}
	}
	if a.open || a.console {
		return r, nil
	}
	addr := clientAddr(r)
	if blocked, wait := s.limits.failed.blocked(addr); blocked {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		return r, heraldtype.Errorf(heraldtype.ERATELIMITED, "too many failed authentications from this address; retry after %d s", retryAfterSeconds(wait))
	}
	p, err := s.authenticate(r, a)
	if err != nil {
		// A refused credential is challenged (401); a lookup that failed
		// for another reason — the store did not answer — is the server's
		// error (503, 500), never a challenge to the caller.
		var ae *authError
		if errors.As(err, &ae) {
			s.limits.failed.fail(addr)
			challenge := `Bearer realm="herald"`
			if ae.invalid {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
		}
		return r, err
	}
	if ok, wait := s.limits.allow(p); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		return r, heraldtype.Errorf(heraldtype.ERATELIMITED, "too many requests; retry after %d s", retryAfterSeconds(wait))
	}
	if err := authorize(r, a, p); err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), nil
}
