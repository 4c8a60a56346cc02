package heraldtype

import (
	"errors"
	"fmt"
	"time"
)

// Error codes of Herald's stable error catalogue. They are part of the API:
// clients switch on them, so they never change meaning. httpapi maps each
// to one HTTP status.
const (
	EINVALID          = "invalid_argument"
	ENOTFOUND         = "not_found"
	ECONFLICT         = "conflict"
	ETOOLARGE         = "payload_too_large"
	EUNAUTHENTICATED  = "unauthenticated"
	EPERMISSIONDENIED = "permission_denied"
	ERATELIMITED      = "rate_limited"
	EUNAVAILABLE      = "unavailable"
	EINTERNAL         = "internal"
)

// Error is an application error with a stable code and a message safe to
// show to the caller. Anything that is not an *Error is reported as
// EINTERNAL with a generic message, so internals never leak.
type Error struct {
	Code    string
	Message string
	// Field names the request field at fault, when there is one.
	Field string
}

func (e *Error) Error() string {
	return e.Code + ": " + e.Message
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an EINVALID *Error naming the offending field.
func FieldErrorf(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error,
// EINTERNAL otherwise, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorClass is how a provider classifies a failed send. Providers classify;
// only the dispatcher decides whether and when to retry.
type ErrorClass string

const (
	// ClassTemporary: the provider or the network failed; retry with
	// exponential backoff (FCM UNAVAILABLE, INTERNAL; timeouts).
	ClassTemporary ErrorClass = "temporary"
	// ClassThrottled: the sender is over a quota; retry with a long backoff
	// and slow the whole sender down (FCM QUOTA_EXCEEDED).
	ClassThrottled ErrorClass = "throttled"
	// ClassPermanent: retrying cannot help (bad request, dead token,
	// configuration error).
	ClassPermanent ErrorClass = "permanent"
)

// SendError is a classified provider failure.
type SendError struct {
	Class ErrorClass
	// Code is the provider's own error code (e.g. "UNREGISTERED"), or a
	// Herald code such as "network" or "http_502" when the provider gave
	// none. It is what operators filter dead letters by.
	Code    string
	Message string
	// RetryAfter is the provider's Retry-After, zero if none. The
	// dispatcher never retries earlier.
	RetryAfter time.Duration
	// TokenInvalid is set when the device's token is dead (FCM
	// UNREGISTERED, or INVALID_ARGUMENT naming the token). Only then is
	// the device invalidated (S0.3 note).
	TokenInvalid bool
	// Suppress is set when the recipient's address asked the provider
	// not to be contacted on this channel any more (Twilio 21610, STOP):
	// the address is suppressed for the channel until it opts in again.
	Suppress bool
	// Err is the underlying error, if any.
	Err error
}

func (e *SendError) Error() string {
	msg := string(e.Class) + " " + e.Code
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

func (e *SendError) Unwrap() error { return e.Err }

// AsSendError classifies any error returned by a provider: a *SendError is
// returned as is; anything else is a temporary failure with code "network"
// (a timeout, a refused connection, an unreadable response).
func AsSendError(err error) *SendError {
	if err == nil {
		return nil
	}
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return &SendError{Class: ClassTemporary, Code: "network", Message: err.Error(), Err: err}
}
