package heraldclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// The stable error codes of the API's error body. A program switches on
// them (Error.Code, IsCode), never on messages, which may change.
const (
	// CodeInvalidArgument: the request is wrong; Error.Field names the
	// field at fault when there is one. 400.
	CodeInvalidArgument = "invalid_argument"
	// CodePayloadTooLarge: the message is larger than its channel's
	// provider accepts. 400.
	CodePayloadTooLarge = "payload_too_large"
	// CodeUnauthenticated: no credential, or one the server does not
	// know. 401.
	CodeUnauthenticated = "unauthenticated"
	// CodePermissionDenied: the credential may not make this call (a
	// scope it lacks, another user's resource). 403.
	CodePermissionDenied = "permission_denied"
	// CodeNotFound: no such resource, or no such endpoint. 404.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed: the path exists with other methods. 405.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeRequestTimeout: the request body arrived too slowly. 408.
	CodeRequestTimeout = "request_timeout"
	// CodeConflict: the request conflicts with the resource's state (an
	// Idempotency-Key reused with another request, a replay of a delivery
	// that is not dead). 409.
	CodeConflict = "conflict"
	// CodeRequestTooLarge: the request body is over the server's limit. 413.
	CodeRequestTooLarge = "request_too_large"
	// CodeUnsupportedMediaType: the body is not JSON. 415.
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeRateLimited: too many requests; Error.RetryAfter says when to
	// try again. 429.
	CodeRateLimited = "rate_limited"
	// CodeInternal: the server failed; its log has the details under
	// Error.RequestID. 500.
	CodeInternal = "internal"
	// CodeUnavailable: the server or its store cannot answer now (it is
	// not ready, the store timed out); try again later. 503.
	CodeUnavailable = "unavailable"
)

// Error is an answer of the API with a status of 300 or more: its stable
// Code, the Message (safe to show), the request Field at fault, the
// server's X-Request-Id (give it to the operator: the server's log has
// it), and Retry-After when the server gave one. Use errors.As to read it:
//
//	var herr *heraldclient.Error
//	if errors.As(err, &herr) && herr.Code == heraldclient.CodeNotFound { … }
//
// An answer whose body is not the API's JSON error (a proxy's HTML page, a
// cut body) is still an *Error: its Code is derived from the status (502,
// 503, 504: unavailable; 404: not_found; …) and its Message is the start
// of the body or the status text.
type Error struct {
	StatusCode int
	Code       string
	Message    string
	Field      string
	RequestID  string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "herald: %s (HTTP %d)", e.Code, e.StatusCode)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	return b.String()
}

// IsCode reports whether err is (or wraps) an *Error with the code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// errorBody is the API's error body.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

// maxForeignMessage bounds the part of a non-JSON error body kept as the
// message.
const maxForeignMessage = 512

// errorFrom reads an answer of status >= 300 into an *Error.
func errorFrom(resp *http.Response, raw []byte) *Error {
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var b errorBody
	if json.Unmarshal(raw, &b) == nil && b.Code != "" {
		e.Code, e.Message, e.Field = b.Code, b.Message, b.Field
		return e
	}
	e.Code = codeForStatus(resp.StatusCode)
	msg := strings.TrimSpace(string(raw))
	if len(msg) > maxForeignMessage {
		msg = msg[:maxForeignMessage]
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
		msg += "…"
	}
	if msg == "" || !utf8.ValidString(msg) {
		msg = http.StatusText(resp.StatusCode)
	}
	e.Message = msg
	return e
}

// codeForStatus is the code an error answer without the API's body stands
// for: the inverse of the server's code→status map, where it has one.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalidArgument
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusRequestTimeout:
		return CodeRequestTimeout
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeRequestTooLarge
	case http.StatusUnsupportedMediaType:
		return CodeUnsupportedMediaType
	case http.StatusTooManyRequests:
		return CodeRateLimited
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return CodeUnavailable
	}
	return CodeInternal
}
