package twilio

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Twilio error codes Herald classifies by name (twilio.com/docs/api/errors).
const (
	ErrAuthenticate        = 20003 // 401: wrong AccountSid or AuthToken
	ErrNotFound            = 20404 // the resource (the account in the path) does not exist
	ErrTooManyRequests     = 20429 // 429: over the account's concurrency or rate limit
	ErrInternal            = 20500 // 500
	ErrServiceUnavailable  = 20503 // 503
	ErrInvalidTo           = 21211 // "To" is not a valid phone number
	ErrRegionNotEnabled    = 21408 // sending to the "To" region is not enabled for the account
	ErrBodyRequired        = 21602
	ErrFromRequired        = 21603 // neither From nor MessagingServiceSid
	ErrToRequired          = 21604
	ErrFromNotCapable      = 21606 // From is not a message-capable number of this account
	ErrUnverifiedTo        = 21608 // trial account: "To" is not a verified number
	ErrStatusCallback      = 21609 // StatusCallback is not a valid URL
	ErrUnsubscribed        = 21610 // the recipient replied STOP
	ErrUnreachable         = 21612 // "To" is not reachable by SMS (carrier or routing)
	ErrNotMobile           = 21614 // "To" is not a mobile number
	ErrBodyTooLong         = 21617 // the body exceeds 1600 characters
	ErrLandline            = 21635 // "To" is a landline
	ErrMessagingServiceSID = 21701 // the Messaging Service does not exist
)

// Herald's own codes for failures Twilio gave no code for.
const (
	// codeNetwork: the request failed before an HTTP answer arrived.
	codeNetwork = "network"
	// codeInvalidMessage: Herald refused to build the request.
	codeInvalidMessage = "invalid_message"
)

// Code returns the heraldtype.SendError code for a Twilio error code:
// "twilio_21610". Operators filter dead letters by it; the prefix keeps the
// bare number from being mistaken for another provider's.
func Code(twilioCode int) string { return "twilio_" + strconv.Itoa(twilioCode) }

// maxRetryAfter caps a Retry-After header so that a broken value cannot
// park a delivery for longer than a day.
const maxRetryAfter = 24 * time.Hour

// apiError is the JSON error body of Twilio's REST API.
type apiError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info,omitempty"`
	Status   int    `json:"status"`
	// Detail is sent with some authentication errors.
	Detail string `json:"detail,omitempty"`
}

// classifyResponse turns a non-2xx answer of Messages.json into a
// *heraldtype.SendError following PROTOCOLS.md (SMS). Twilio's error code
// decides when the body carries one; the HTTP status decides otherwise (a
// proxy's HTML page, a bare 502).
func classifyResponse(status int, header http.Header, body []byte, now time.Time) *heraldtype.SendError {
	var ae apiError
	parsed := json.Unmarshal(body, &ae) == nil && ae.Code != 0
	se := &heraldtype.SendError{Message: ae.Message}
	if parsed {
		se.Code = Code(ae.Code)
	} else {
		se.Code = "http_" + strconv.Itoa(status)
		se.Message = "HTTP " + strconv.Itoa(status) + " " + http.StatusText(status) + " without a Twilio error body"
	}
	retryAfter := parseRetryAfter(header.Get("Retry-After"), now)

	switch ae.Code {
	case ErrUnsubscribed:
		// The person texted STOP: Twilio refuses every message to this
		// number from this sender until they text START. Suppress tells
		// the dispatcher to stop sending SMS to the number (issue 5).
		se.Class, se.Suppress = heraldtype.ClassPermanent, true
		return se
	case ErrInvalidTo, ErrNotMobile, ErrUnreachable, ErrLandline:
		// The number cannot receive SMS. It is the user's phone field
		// that is wrong, not a device token, so TokenInvalid stays
		// false: there is no device to invalidate, and the same number
		// may work after the user corrects it.
		se.Class = heraldtype.ClassPermanent
		return se
	case ErrFromNotCapable, ErrUnverifiedTo, ErrRegionNotEnabled, ErrAuthenticate:
		// The account's configuration is at fault; retrying cannot fix it.
		se.Class = heraldtype.ClassPermanent
		return se
	case ErrTooManyRequests:
		se.Class, se.RetryAfter = heraldtype.ClassThrottled, retryAfter
		return se
	}
	switch {
	case status == http.StatusTooManyRequests:
		se.Class, se.RetryAfter = heraldtype.ClassThrottled, retryAfter
	case status >= 500 || status == http.StatusRequestTimeout || status < 400:
		// Twilio's create has no idempotency key: the message may have
		// been created before the 5xx (or a timeout). The dispatcher's
		// retry can then send it twice; an at_most_once delivery whose
		// outcome is lost becomes "unknown" instead (S1.3).
		se.Class, se.RetryAfter = heraldtype.ClassTemporary, retryAfter
	default:
		// Any other 4xx is a request Twilio will refuse again.
		se.Class = heraldtype.ClassPermanent
	}
	return se
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3). It returns zero for an absent, malformed or past value.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// Codes lists every code a send can fail with: the Twilio codes Herald
// classifies, http_<status> for an answer without a Twilio body, and
// Herald's own. Herald's metrics label any other code "other".
func (c *Client) Codes() []string {
	out := []string{codeNetwork, codeInvalidMessage}
	for _, n := range []int{ErrAuthenticate, ErrNotFound, ErrTooManyRequests, ErrInternal, ErrServiceUnavailable,
		ErrInvalidTo, ErrRegionNotEnabled, ErrBodyRequired, ErrFromRequired, ErrToRequired, ErrFromNotCapable,
		ErrUnverifiedTo, ErrStatusCallback, ErrUnsubscribed, ErrUnreachable, ErrNotMobile, ErrBodyTooLong,
		ErrLandline, ErrMessagingServiceSID} {
		out = append(out, Code(n))
	}
	for s := 400; s < 600; s++ {
		if http.StatusText(s) != "" {
			out = append(out, "http_"+strconv.Itoa(s))
		}
	}
	return out
}
