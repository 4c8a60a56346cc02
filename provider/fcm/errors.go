package fcm

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// FCM's error codes (google.firebase.fcm.v1.FcmError.errorCode), as found in
// heraldtype.SendError.Code.
const (
	CodeInvalidArgument     = "INVALID_ARGUMENT"
	CodeUnregistered        = "UNREGISTERED"
	CodeSenderIDMismatch    = "SENDER_ID_MISMATCH"
	CodeQuotaExceeded       = "QUOTA_EXCEEDED"
	CodeUnavailable         = "UNAVAILABLE"
	CodeInternal            = "INTERNAL"
	CodeThirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
	// CodeAPNSAuthError is the older name of THIRD_PARTY_AUTH_ERROR, still
	// recognised by the official SDKs.
	CodeAPNSAuthError = "APNS_AUTH_ERROR"
	// CodeUnauthenticated is a Google status, not an FcmError: the OAuth
	// access token was refused.
	CodeUnauthenticated = "UNAUTHENTICATED"
)

// Herald's own codes for failures FCM gave no code for.
const (
	// codeNetwork: the request failed before an HTTP answer arrived.
	codeNetwork = "network"
	// codeAuthToken: the OAuth token endpoint failed; retry.
	codeAuthToken = "auth_token"
	// codeAuthConfig: the token endpoint refused the credentials.
	codeAuthConfig = "auth_config"
	// codeInvalidMessage: Herald refused to build the request.
	codeInvalidMessage = "invalid_message"
)

// quotaMinRetry is the default least delay after QUOTA_EXCEEDED: FCM asks
// senders over their project quota to back off "with a minimum initial
// delay of 1 minute" (PROTOCOLS.md). Config.QuotaMinRetryAfter overrides.
const quotaMinRetry = time.Minute

// fcmErrorType is the @type of the detail carrying FCM's errorCode.
const fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

// googleError is the JSON error body of Google APIs (google.rpc.Status).
type googleError struct {
	Error googleStatus `json:"error"`
}

type googleStatus struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Status  string        `json:"status"`
	Details []errorDetail `json:"details,omitempty"`
}

// errorDetail is the union of the detail types FCM sends: FcmError,
// google.rpc.BadRequest, google.rpc.QuotaFailure and google.rpc.ErrorInfo.
type errorDetail struct {
	Type            string            `json:"@type"`
	ErrorCode       string            `json:"errorCode,omitempty"`
	FieldViolations []fieldViolation  `json:"fieldViolations,omitempty"`
	Violations      []quotaViolation  `json:"violations,omitempty"`
	Reason          string            `json:"reason,omitempty"`
	Domain          string            `json:"domain,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
}

type fieldViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
}

type quotaViolation struct {
	Subject     string `json:"subject,omitempty"`
	Description string `json:"description"`
}

// classifyResponse turns a non-2xx answer of messages:send into a
// *heraldtype.SendError following the table in PROTOCOLS.md. FCM's
// errorCode decides when present; otherwise the HTTP status does, because
// Google omits FcmError on some errors (an oversized payload, a project
// quota answered with google.rpc.ErrorInfo only, an HTML page from a proxy).
func classifyResponse(status int, header http.Header, body []byte, now time.Time, quotaMin time.Duration) *heraldtype.SendError {
	var ge googleError
	parsed := json.Unmarshal(body, &ge) == nil && ge.Error.Code != 0
	se := &heraldtype.SendError{Message: ge.Error.Message}
	if !parsed {
		se.Message = "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status) + " without a Google error body"
	}
	code := ""
	for _, d := range ge.Error.Details {
		if d.Type == fcmErrorType && d.ErrorCode != "" {
			code = d.ErrorCode
			break
		}
	}
	retryAfter := parseRetryAfter(header.Get("Retry-After"), now)

	switch code {
	case CodeUnregistered:
		se.Class, se.Code, se.TokenInvalid = heraldtype.ClassPermanent, code, true
		return se
	case CodeInvalidArgument:
		se.Class, se.Code = heraldtype.ClassPermanent, code
		se.TokenInvalid = namesBadToken(&ge.Error)
		return se
	case CodeSenderIDMismatch, CodeThirdPartyAuthError, CodeAPNSAuthError:
		// The sender's configuration is at fault, not the device (S0.3
		// note): never invalidate the token for these.
		se.Class, se.Code = heraldtype.ClassPermanent, code
		return se
	case CodeQuotaExceeded:
		se.Class, se.Code, se.RetryAfter = heraldtype.ClassThrottled, code, max(retryAfter, quotaMin)
		return se
	case CodeUnavailable, CodeInternal:
		se.Class, se.Code, se.RetryAfter = heraldtype.ClassTemporary, code, retryAfter
		return se
	}

	// No (known) FcmError: fall back to the HTTP status and Google's status.
	se.Code = ge.Error.Status
	if se.Code == "" {
		se.Code = "http_" + strconv.Itoa(status)
	}
	switch {
	case status == http.StatusTooManyRequests:
		// A project over its send quota gets RESOURCE_EXHAUSTED with only
		// google.rpc.ErrorInfo (firebase/firebase-admin-go#719); it is
		// the same condition as QUOTA_EXCEEDED.
		se.Class, se.Code, se.RetryAfter = heraldtype.ClassThrottled, CodeQuotaExceeded, max(retryAfter, quotaMin)
	case status == http.StatusUnauthorized:
		se.Class, se.Code, se.RetryAfter = heraldtype.ClassTemporary, CodeUnauthenticated, retryAfter
	case status == http.StatusRequestTimeout || status >= 500 || status < 400:
		se.Class, se.RetryAfter = heraldtype.ClassTemporary, retryAfter
	default:
		se.Class = heraldtype.ClassPermanent
		if status == http.StatusBadRequest {
			se.TokenInvalid = namesBadToken(&ge.Error)
		}
	}
	return se
}

// namesBadToken reports whether an INVALID_ARGUMENT blames the registration
// token itself ("The registration token is not a valid FCM registration
// token", or a field violation on message.token) rather than the payload.
func namesBadToken(s *googleStatus) bool {
	if strings.Contains(strings.ToLower(s.Message), "not a valid fcm registration token") {
		return true
	}
	for _, d := range s.Details {
		for _, v := range d.FieldViolations {
			if v.Field == "message.token" {
				return true
			}
		}
	}
	return false
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3). It returns zero for an absent, malformed or past value.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		// Cap absurd values so the conversion cannot overflow.
		return time.Duration(min(secs, int64(MaxTTL/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// googleStatuses are the canonical google.rpc.Code names, the code of an
// answer without an FcmError.
var googleStatuses = []string{"CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// Codes lists every code a send can fail with: FCM's error codes, Google's
// statuses and http_<status> for an answer without either, and Herald's
// own. Herald's metrics label any other code "other".
func (c *Client) Codes() []string {
	out := []string{CodeInvalidArgument, CodeUnregistered, CodeSenderIDMismatch, CodeQuotaExceeded, CodeUnavailable,
		CodeInternal, CodeThirdPartyAuthError, CodeAPNSAuthError, CodeUnauthenticated,
		codeNetwork, codeAuthToken, codeAuthConfig, codeInvalidMessage}
	out = append(out, googleStatuses...)
	for s := 400; s < 600; s++ {
		if http.StatusText(s) != "" {
			out = append(out, "http_"+strconv.Itoa(s))
		}
	}
	return out
}
