package webpush

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/heraldtype"
)

// Codes found in heraldtype.SendError.Code for Web Push failures. Push
// services have no shared error vocabulary, so Herald names the HTTP
// outcomes of RFC 8030 itself; other statuses are "http_<status>".
const (
	// CodeNotFound: 404, the subscription does not exist (expired or
	// never valid). The device is invalidated.
	CodeNotFound = "subscription_not_found"
	// CodeGone: 410, the subscription was removed (the user revoked
	// permission or the browser unsubscribed). The device is invalidated.
	CodeGone = "subscription_gone"
	// CodeInvalidSubscription: Herald refused the device's endpoint or
	// keys before sending. The device is invalidated.
	CodeInvalidSubscription = "invalid_subscription"
	// CodePayloadTooLarge: 413, or a payload over MaxPlaintextBytes.
	CodePayloadTooLarge = "payload_too_large"
	// CodeVAPIDRejected: 401/403, the push service refused the VAPID
	// credentials (wrong key for the subscription, bad Subject, clock
	// skew). A configuration problem, never the device's fault.
	CodeVAPIDRejected = "vapid_rejected"
	// CodeBadRequest: 400, the push service refused the request.
	CodeBadRequest = "bad_request"
	// CodeRateLimited: 429, the push service throttles the sender.
	CodeRateLimited = "rate_limited"
	// CodeEndpointForbidden: the endpoint resolved to a non-public
	// address and AllowPrivateEndpoints is off.
	CodeEndpointForbidden = "endpoint_forbidden"
)

// Herald-internal codes.
const (
	codeNetwork        = "network"
	codeInvalidMessage = "invalid_message"
	codeEncrypt        = "encrypt"
	codeVAPIDSign      = "vapid_sign"
)

// maxErrorText bounds how much of a push service's error text is kept in
// SendError.Message.
const maxErrorText = 200

// classifyResponse turns a non-2xx answer into a *heraldtype.SendError
// (PROTOCOLS.md, Web Push): 404/410 → permanent and the device invalidated;
// 413, 400, 401/403 → permanent; 429 → throttled; 408 and 5xx →
// temporary; Retry-After honoured wherever it is given.
func classifyResponse(status int, header http.Header, body []byte, now time.Time) *heraldtype.SendError {
	se := &heraldtype.SendError{
		Message:    errorText(status, body),
		RetryAfter: parseRetryAfter(header.Get("Retry-After"), now),
	}
	switch {
	case status == http.StatusNotFound:
		se.Class, se.Code, se.TokenInvalid = heraldtype.ClassPermanent, CodeNotFound, true
	case status == http.StatusGone:
		se.Class, se.Code, se.TokenInvalid = heraldtype.ClassPermanent, CodeGone, true
	case status == http.StatusRequestEntityTooLarge:
		se.Class, se.Code = heraldtype.ClassPermanent, CodePayloadTooLarge
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		se.Class, se.Code = heraldtype.ClassPermanent, CodeVAPIDRejected
	case status == http.StatusBadRequest:
		se.Class, se.Code = heraldtype.ClassPermanent, CodeBadRequest
	case status == http.StatusTooManyRequests:
		se.Class, se.Code = heraldtype.ClassThrottled, CodeRateLimited
	case status == http.StatusRequestTimeout || status >= 500:
		se.Class, se.Code = heraldtype.ClassTemporary, "http_"+strconv.Itoa(status)
	default:
		// Other 4xx, and 1xx/3xx (redirects are not followed): retrying
		// the same request cannot change the answer.
		se.Class, se.Code = heraldtype.ClassPermanent, "http_"+strconv.Itoa(status)
	}
	if se.Class == heraldtype.ClassPermanent {
		se.RetryAfter = 0
	}
	return se
}

// errorText summarises a push service's error answer. Mozilla's autopush
// answers JSON {code, errno, error, message}; Apple {reason}; FCM and
// others plain text. Only a bounded, single-line excerpt is kept.
func errorText(status int, body []byte) string {
	prefix := "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status)
	var j struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
		Errno   int    `json:"errno"`
	}
	text := ""
	if json.Unmarshal(body, &j) == nil && (j.Message != "" || j.Reason != "") {
		text = j.Message
		if j.Reason != "" {
			text = j.Reason
		}
		if j.Errno != 0 {
			text += " (errno " + strconv.Itoa(j.Errno) + ")"
		}
	} else {
		text = string(body)
	}
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	if text == "" || strings.HasPrefix(text, "<") {
		return prefix // empty, or an HTML error page
	}
	return prefix + ": " + text
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

// Codes lists every code a send can fail with: the RFC 8030 outcomes,
// http_<status> for other statuses, and Herald's own. Herald's metrics
// label any other code "other".
func (c *Client) Codes() []string {
	out := []string{CodeNotFound, CodeGone, CodeInvalidSubscription, CodePayloadTooLarge, CodeVAPIDRejected,
		CodeBadRequest, CodeRateLimited, CodeEndpointForbidden, codeNetwork, codeInvalidMessage, codeEncrypt,
		codeVAPIDSign}
	for s := 400; s < 600; s++ {
		if http.StatusText(s) != "" {
			out = append(out, "http_"+strconv.Itoa(s))
		}
	}
	return out
}
