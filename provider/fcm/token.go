package fcm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"

	"github.com/heraldhq/herald/heraldtype"
)

// tokenRefreshMargin renews an access token this long before it expires, so
// a token never expires between being read and reaching FCM.
const tokenRefreshMargin = time.Minute

// tokenCache holds the current OAuth2 access token. Unlike
// oauth2.ReuseTokenSource it can drop a token FCM refused (401), so the next
// Send fetches a fresh one. The fast path is one atomic load.
type tokenCache struct {
	current atomic.Pointer[oauth2.Token]

	mu   sync.Mutex // serialises fetches: one exchange, many waiters
	conf *jwt.Config
	ctx  context.Context // carries the HTTP client for the exchange
}

func newTokenCache(conf *jwt.Config, hc *http.Client) *tokenCache {
	return &tokenCache{conf: conf, ctx: context.WithValue(context.Background(), oauth2.HTTPClient, hc)}
}

// usable reports whether t can still be sent. Expiry is set by x/oauth2 from
// the wall clock, so it is compared with the wall clock.
func usable(t *oauth2.Token) bool {
	return t != nil && (t.Expiry.IsZero() || time.Until(t.Expiry) > tokenRefreshMargin)
}

// token returns a valid access token, fetching one if needed.
func (tc *tokenCache) token() (string, error) {
	if t := tc.current.Load(); usable(t) {
		return t.AccessToken, nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if t := tc.current.Load(); usable(t) {
		return t.AccessToken, nil // another goroutine fetched it meanwhile
	}
	t, err := tc.conf.TokenSource(tc.ctx).Token()
	if err != nil {
		return "", err
	}
	if t.AccessToken == "" {
		return "", errors.New("token endpoint returned no access_token")
	}
	tc.current.Store(t)
	return t.AccessToken, nil
}

// invalidate drops the cached token if it is still the refused one; a token
// another goroutine already replaced stays, so a burst of 401s on one stale
// token causes one refresh, not one per failed send.
func (tc *tokenCache) invalidate(refused string) {
	if t := tc.current.Load(); t != nil && t.AccessToken == refused {
		tc.current.CompareAndSwap(t, nil)
	}
}

// oauthError is RFC 6749's error answer.
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// classifyTokenError classifies a failed token exchange. The token endpoint
// refusing the credentials themselves is a configuration error no retry
// fixes; anything else (network, 5xx) is temporary. The message is built
// from the OAuth error fields only, never from the raw answer.
func classifyTokenError(err error, now time.Time) *heraldtype.SendError {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeAuthToken,
			Message: "fetching an OAuth2 access token: " + err.Error(), Err: err}
	}
	oe := oauthError{Error: re.ErrorCode, Description: re.ErrorDescription}
	if oe.Error == "" {
		_ = json.Unmarshal(re.Body, &oe) // x/oauth2's JWT source leaves parsing to us
	}
	status := 0
	var retryAfter time.Duration
	if re.Response != nil {
		status = re.Response.StatusCode
		retryAfter = parseRetryAfter(re.Response.Header.Get("Retry-After"), now)
	}
	msg := fmt.Sprintf("token endpoint answered HTTP %d", status)
	if oe.Error != "" {
		msg += ": " + oe.Error
		if oe.Description != "" {
			msg += " (" + oe.Description + ")"
		}
	}
	// The cause is a plain error, not re: RetrieveError's Error() quotes
	// the raw answer, which Herald does not want in dead letters.
	cause := errors.New(msg)
	switch oe.Error {
	case "invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope":
		return &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeAuthConfig,
			Message: msg + "; check the service-account credentials", Err: cause}
	}
	return &heraldtype.SendError{Class: heraldtype.ClassTemporary, Code: codeAuthToken,
		Message: msg, RetryAfter: retryAfter, Err: cause}
}
