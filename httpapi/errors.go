package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
)

// Error codes that only the HTTP transport produces. The domain codes
// (invalid_argument, not_found, …) are defined in heraldtype; these
// describe the HTTP request itself, not what it asks for.
const (
	// ERequestTooLarge: the request body exceeds Config.MaxBodyBytes. It is
	// distinct from heraldtype.ETOOLARGE (payload_too_large), which is a
	// notification a provider can never carry (FCM's 4096-byte payload)
	// and therefore a 400 like any other invalid argument.
	ERequestTooLarge = "request_too_large"
	// EUnsupportedMediaType: the body is declared as something other than
	// JSON.
	EUnsupportedMediaType = "unsupported_media_type"
	// EMethodNotAllowed: the path exists, the method does not; the Allow
	// header lists the methods that do.
	EMethodNotAllowed = "method_not_allowed"
	// ERequestTimeout: the request body did not arrive within
	// Config.ReadTimeout.
	ERequestTimeout = "request_timeout"
)

// statusByCode is the one map from an error code to its HTTP status. Every
// error response goes through writeError, which consults only this table.
// The README's error catalogue is a copy of it:
//
//	code                    status  meaning
//	invalid_argument        400     a field or parameter is wrong; "field" names it
//	payload_too_large       400     the notification exceeds a provider's payload limit
//	unauthenticated         401     missing or bad credentials
//	permission_denied       403     the credentials may not do this
//	not_found               404     no such user, device, notification, delivery or route
//	method_not_allowed      405     the route exists with other methods (see Allow)
//	request_timeout         408     the request body did not arrive within the read timeout
//	conflict                409     idempotency key reused with another request; state forbids it
//	request_too_large       413     the request body exceeds the server's limit
//	unsupported_media_type  415     the body is not JSON
//	rate_limited            429     too many requests
//	internal                500     a bug or an unexpected failure; details are only logged
//	unavailable             503     the database or a dependency does not answer
var statusByCode = map[string]int{
	heraldtype.EINVALID:          http.StatusBadRequest,
	heraldtype.ETOOLARGE:         http.StatusBadRequest,
	heraldtype.EUNAUTHENTICATED:  http.StatusUnauthorized,
	heraldtype.EPERMISSIONDENIED: http.StatusForbidden,
	heraldtype.ENOTFOUND:         http.StatusNotFound,
	EMethodNotAllowed:            http.StatusMethodNotAllowed,
	ERequestTimeout:              http.StatusRequestTimeout,
	heraldtype.ECONFLICT:         http.StatusConflict,
	ERequestTooLarge:             http.StatusRequestEntityTooLarge,
	EUnsupportedMediaType:        http.StatusUnsupportedMediaType,
	heraldtype.ERATELIMITED:      http.StatusTooManyRequests,
	heraldtype.EINTERNAL:         http.StatusInternalServerError,
	heraldtype.EUNAVAILABLE:      http.StatusServiceUnavailable,
}

// StatusForCode returns the HTTP status of an error code, and 500 for a
// code outside the catalogue.
func StatusForCode(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// internalMessage is all a caller learns about an unexpected failure.
const internalMessage = "internal error; the server logged the details"

// errorBody turns err into the body a caller may see and decides whether
// the real error must be logged. Only a *heraldtype.Error with a catalogued
// code reaches the caller as is; anything else becomes internal (or
// unavailable when the request's own context ended), so driver messages,
// file paths and the like never leak.
func errorBody(ctx context.Context, err error) (body ErrorBody, logLevel slog.Level, logIt bool) {
	var he *heraldtype.Error
	if errors.As(err, &he) {
		if _, known := statusByCode[he.Code]; known && he.Code != heraldtype.EINTERNAL {
			return ErrorBody{Code: he.Code, Message: he.Message, Field: he.Field}, 0, false
		}
	}
	if storeTimedOut(ctx) {
		// Whatever the store's driver made of its cancelled call, the
		// cause is a database that did not answer in time: never a 500
		// (issue 24 item 1).
		return ErrorBody{Code: heraldtype.EUNAVAILABLE, Message: storeTimeoutMessage(ctx)}, slog.LevelWarn, true
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The caller went away or the request timed out: not a bug.
		return ErrorBody{Code: heraldtype.EUNAVAILABLE, Message: "the request was canceled or timed out"}, slog.LevelInfo, true
	}
	return ErrorBody{Code: heraldtype.EINTERNAL, Message: internalMessage}, slog.LevelError, true
}

// writeError is the one error writer: it maps err to its status through
// statusByCode, logs what the caller must not see, and writes the JSON
// error body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	body, level, logIt := errorBody(r.Context(), err)
	if storeTimedOut(r.Context()) && body.Code == heraldtype.EUNAVAILABLE {
		retryAfterStore(w)
	}
	if logIt {
		s.log.LogAttrs(r.Context(), level, "http request failed",
			slog.String("request_id", requestIDFrom(r.Context())),
			slog.String("method", r.Method),
			slog.String("pattern", r.Pattern),
			slog.String("err", err.Error()))
	}
	status := StatusForCode(body.Code)
	traceError(r, body.Code, status)
	writeJSON(w, status, body)
}
