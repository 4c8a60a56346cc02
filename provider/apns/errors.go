package apns

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// APNs' error reasons (the "reason" of its JSON error body), as found in
// heraldtype.SendError.Code. Apple documents them in "Handling notification
// responses from APNs".
const (
	// 400 Bad Request.
	ReasonBadCollapseID          = "BadCollapseId"
	ReasonBadDeviceToken         = "BadDeviceToken"
	ReasonBadExpirationDate      = "BadExpirationDate"
	ReasonBadMessageID           = "BadMessageId"
	ReasonBadPriority            = "BadPriority"
	ReasonBadTopic               = "BadTopic"
	ReasonDeviceTokenNotForTopic = "DeviceTokenNotForTopic"
	ReasonDuplicateHeaders       = "DuplicateHeaders"
	ReasonIdleTimeout            = "IdleTimeout"
	ReasonInvalidPushType        = "InvalidPushType"
	ReasonMissingDeviceToken     = "MissingDeviceToken"
	ReasonMissingTopic           = "MissingTopic"
	ReasonPayloadEmpty           = "PayloadEmpty"
	ReasonTopicDisallowed        = "TopicDisallowed"
	// 403 Forbidden.
	ReasonBadCertificate             = "BadCertificate"
	ReasonBadCertificateEnvironment  = "BadCertificateEnvironment"
	ReasonExpiredProviderToken       = "ExpiredProviderToken"
	ReasonForbidden                  = "Forbidden"
	ReasonInvalidProviderToken       = "InvalidProviderToken"
	ReasonMissingProviderToken       = "MissingProviderToken"
	ReasonUnrelatedKeyIDInToken      = "UnrelatedKeyIdInToken"
	ReasonBadEnvironmentKeyIDInToken = "BadEnvironmentKeyIdInToken"
	// 404, 405.
	ReasonBadPath          = "BadPath"
	ReasonMethodNotAllowed = "MethodNotAllowed"
	// 410 Gone: the device token is no longer valid.
	ReasonExpiredToken = "ExpiredToken"
	ReasonUnregistered = "Unregistered"
	// 413.
	ReasonPayloadTooLarge = "PayloadTooLarge"
	// 429.
	ReasonTooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
	ReasonTooManyRequests             = "TooManyRequests"
	// 500, 503.
	ReasonInternalServerError = "InternalServerError"
	ReasonServiceUnavailable  = "ServiceUnavailable"
	ReasonShutdown            = "Shutdown"
)

// Herald's own codes for failures APNs gave no reason for.
const (
	// codeNetwork: the request failed before an HTTP answer arrived.
	codeNetwork = "network"
	// codeInvalidMessage: Herald refused to build the request.
	codeInvalidMessage = "invalid_message"
	// codeProviderToken: signing the provider token failed.
	codeProviderToken = "provider_token"
)

// maxRetryAfter caps a Retry-After so the conversion cannot overflow.
const maxRetryAfter = 28 * 24 * time.Hour

// reasonStatus is the HTTP status APNs answers each reason with, and its
// description from Apple's table.
func reasonStatus(reason string) (status int, description string) {
	switch reason {
	case ReasonBadCollapseID:
		return 400, "The collapse identifier exceeds the maximum allowed size."
	case ReasonBadDeviceToken:
		return 400, "The specified device token is invalid (for a token of a development build sent to production, or the reverse, too)."
	case ReasonBadExpirationDate:
		return 400, "The apns-expiration value is invalid."
	case ReasonBadMessageID:
		return 400, "The apns-id value is invalid."
	case ReasonBadPriority:
		return 400, "The apns-priority value is invalid."
	case ReasonBadTopic:
		return 400, "The apns-topic value is invalid."
	case ReasonDeviceTokenNotForTopic:
		return 400, "The device token doesn't match the specified topic."
	case ReasonDuplicateHeaders:
		return 400, "One or more headers are repeated."
	case ReasonIdleTimeout:
		return 400, "Idle timeout."
	case ReasonInvalidPushType:
		return 400, "The apns-push-type value is invalid."
	case ReasonMissingDeviceToken:
		return 400, "The device token isn't specified in the request :path."
	case ReasonMissingTopic:
		return 400, "The apns-topic header of the request isn't specified and is required."
	case ReasonPayloadEmpty:
		return 400, "The message payload is empty."
	case ReasonTopicDisallowed:
		return 400, "Pushing to this topic is not allowed."
	case ReasonBadCertificate:
		return 403, "The certificate is invalid."
	case ReasonBadCertificateEnvironment:
		return 403, "The client certificate is for the wrong environment."
	case ReasonExpiredProviderToken:
		return 403, "The provider token is stale and a new token should be generated."
	case ReasonForbidden:
		return 403, "The specified action is not allowed."
	case ReasonInvalidProviderToken:
		return 403, "The provider token is not valid, or the token signature can't be verified."
	case ReasonMissingProviderToken:
		return 403, "No provider certificate was used to connect to APNs, and the authorization header is missing or no provider token is specified."
	case ReasonUnrelatedKeyIDInToken:
		return 403, "The key ID in the provider token isn't related to the key ID of the token used in the first push of this connection."
	case ReasonBadEnvironmentKeyIDInToken:
		return 403, "The key ID in the provider token is for the wrong environment."
	case ReasonBadPath:
		return 404, "The request contained an invalid :path value."
	case ReasonMethodNotAllowed:
		return 405, "The specified :method value isn't POST."
	case ReasonExpiredToken:
		return 410, "The device token has expired."
	case ReasonUnregistered:
		return 410, "The device token is inactive for the specified topic."
	case ReasonPayloadTooLarge:
		return 413, "The message payload is too large."
	case ReasonTooManyProviderTokenUpdates:
		return 429, "The provider's authentication token is being updated too often."
	case ReasonTooManyRequests:
		return 429, "Too many requests were made consecutively to the same device token."
	case ReasonInternalServerError:
		return 500, "An internal server error occurred."
	case ReasonServiceUnavailable:
		return 503, "The service is unavailable."
	case ReasonShutdown:
		return 503, "The APNs server is shutting down."
	}
	return 0, ""
}

// errorBody is APNs' JSON error answer.
type errorBody struct {
	Reason string `json:"reason"`
	// Timestamp (410 only) is when APNs learned the token became invalid,
	// in milliseconds since the epoch.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// classifyResponse turns an APNs error answer into a *heraldtype.SendError
// per PROTOCOLS.md. It only classifies; the Client reacts to the
// provider-token reasons, and the dispatcher decides on retries.
func classifyResponse(status int, h http.Header, body []byte, now time.Time) *heraldtype.SendError {
	var eb errorBody
	_ = json.Unmarshal(body, &eb) // a proxy's HTML page leaves eb empty: classified by status below
	retryAfter := parseRetryAfter(h.Get("Retry-After"), now)
	se := &heraldtype.SendError{Code: eb.Reason, RetryAfter: retryAfter}
	_, desc := reasonStatus(eb.Reason)
	se.Message = "APNs answered HTTP " + strconv.Itoa(status)
	if eb.Reason != "" {
		se.Message += " " + eb.Reason
	}
	if desc != "" {
		se.Message += ": " + desc
	}
	if eb.Timestamp > 0 {
		se.Message += " (token invalid since " + time.UnixMilli(eb.Timestamp).UTC().Format(time.RFC3339) + ")"
	}

	switch eb.Reason {
	case ReasonUnregistered, ReasonExpiredToken:
		// The app was uninstalled or the token replaced: never use it
		// again (S0.3).
		se.Class, se.TokenInvalid = heraldtype.ClassPermanent, true
		return se
	case ReasonBadDeviceToken:
		// Not TokenInvalid: the usual cause is an environment mismatch
		// (a development build's token sent to production, or the
		// reverse), which is the sender's configuration, not a dead
		// device (S0.3 note). The token may be fine for the other
		// environment.
		se.Class = heraldtype.ClassPermanent
		se.Message += " Check that the app's APNs environment (production or sandbox) matches the build that registered the token."
		return se
	case ReasonExpiredProviderToken, ReasonIdleTimeout,
		ReasonInternalServerError, ReasonServiceUnavailable, ReasonShutdown:
		// ExpiredProviderToken: the Client has dropped the JWT, so the
		// dispatcher's next attempt carries a new one ("new JWT, retry
		// once"). IdleTimeout: the Client closed its idle connections, so
		// the next attempt opens a new one.
		se.Class = heraldtype.ClassTemporary
		return se
	case ReasonTooManyProviderTokenUpdates:
		// The Client stops minting for 20 minutes and keeps its token.
		se.Class = heraldtype.ClassTemporary
		return se
	case ReasonTooManyRequests:
		se.Class = heraldtype.ClassThrottled
		return se
	}
	if desc != "" {
		// Every other documented reason is a request or configuration
		// error: DeviceTokenNotForTopic (the token belongs to another
		// app), the header and payload reasons, and the provider
		// credentials (InvalidProviderToken, Forbidden, BadCertificate…).
		// None blames the device.
		se.Class = heraldtype.ClassPermanent
		return se
	}

	// No (known) reason: fall back to the HTTP status.
	if se.Code == "" {
		se.Code = "http_" + strconv.Itoa(status)
	}
	switch {
	case status == http.StatusGone:
		se.Class, se.TokenInvalid = heraldtype.ClassPermanent, true
	case status == http.StatusTooManyRequests:
		se.Class = heraldtype.ClassThrottled
	case status == http.StatusRequestTimeout || status >= 500 || status < 400:
		se.Class = heraldtype.ClassTemporary
	default:
		se.Class = heraldtype.ClassPermanent
	}
	return se
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
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// Codes lists every code a send can fail with: APNs' documented reasons,
// http_<status> for an answer without one, and Herald's own. Herald's
// metrics label any other code "other".
func (c *Client) Codes() []string {
	out := []string{ReasonBadCollapseID, ReasonBadDeviceToken, ReasonBadExpirationDate, ReasonBadMessageID,
		ReasonBadPriority, ReasonBadTopic, ReasonDeviceTokenNotForTopic, ReasonDuplicateHeaders, ReasonIdleTimeout,
		ReasonInvalidPushType, ReasonMissingDeviceToken, ReasonMissingTopic, ReasonPayloadEmpty, ReasonTopicDisallowed,
		ReasonBadCertificate, ReasonBadCertificateEnvironment, ReasonExpiredProviderToken, ReasonForbidden,
		ReasonInvalidProviderToken, ReasonMissingProviderToken, ReasonUnrelatedKeyIDInToken,
		ReasonBadEnvironmentKeyIDInToken, ReasonBadPath, ReasonMethodNotAllowed, ReasonExpiredToken,
		ReasonUnregistered, ReasonPayloadTooLarge, ReasonTooManyProviderTokenUpdates, ReasonTooManyRequests,
		ReasonInternalServerError, ReasonServiceUnavailable, ReasonShutdown,
		codeNetwork, codeInvalidMessage, codeProviderToken}
	for s := 400; s < 600; s++ {
		if http.StatusText(s) != "" {
			out = append(out, "http_"+strconv.Itoa(s))
		}
	}
	return out
}
