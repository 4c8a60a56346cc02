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
// a token never expires between being read and reaching FCM. A token that
// lives less than twice as long (an emulator's short-lived one) is renewed
// at half its life instead, so it is still reused.
const tokenRefreshMargin = time.Minute

// accessToken is one access token and when the Client renews it, on the
// Client's clock.
type accessToken struct {
	token string
	renew time.Time
}

// tokenCache holds the current OAuth2 access token. Unlike
// oauth2.ReuseTokenSource it can drop a token FCM refused (401), so the next
// Send fetches a fresh one, and it judges expiry by the Client's clock
// (Config.Now), so a test can carry a token past its expiry without
// sleeping. The fast path is one atomic load.
type tokenCache struct {
	current atomic.Pointer[accessToken]

	mu   sync.Mutex // serialises fetches: one exchange, many waiters
	conf *jwt.Config
	ctx  context.Context // carries the HTTP client for the exchange
	now  func() time.Time
}

func newTokenCache(conf *jwt.Config, hc *http.Client, now func() time.Time) *tokenCache {
	return &tokenCache{conf: conf, ctx: context.WithValue(context.Background(), oauth2.HTTPClient, hc), now: now}
}

// usable reports whether t can still be sent at now.
func usable(t *accessToken, now time.Time) bool {
	return t != nil && (t.renew.IsZero() || now.Before(t.renew))
}

// wallNow is the clock without its monotonic reading: expiry is wall-clock
// time at Google (and a suspended process's monotonic clock stands still).
func (tc *tokenCache) wallNow() time.Time { return tc.now().Round(0) }

// token returns a valid access token, fetching one if needed.
func (tc *tokenCache) token() (string, error) {
	if t := tc.current.Load(); usable(t, tc.wallNow()) {
		return t.token, nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if t := tc.current.Load(); usable(t, tc.wallNow()) {
		return t.token, nil // another goroutine fetched it meanwhile
	}
	t, err := tc.conf.TokenSource(tc.ctx).Token()
	if err != nil {
		return "", err
	}
	if t.AccessToken == "" {
		return "", errors.New("token endpoint returned no access_token")
	}
	at := &accessToken{token: t.AccessToken}
	if !t.Expiry.IsZero() {
		// x/oauth2 dates Expiry on the wall clock at receipt (expires_in
		// from time.Now); what is left of it is carried onto the Client's
		// clock.
		life := time.Until(t.Expiry)
		at.renew = tc.wallNow().Add(life - min(tokenRefreshMargin, life/2))
	}
	tc.current.Store(at)
	return at.token, nil
}

// invalidate drops the cached token if it is still the refused one; a token
// another goroutine already replaced stays, so a burst of 401s on one stale
// token causes one refresh, not one per failed send.
func (tc *tokenCache) invalidate(refused string) {
	if t := tc.current.Load(); t != nil && t.token == refused {
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
