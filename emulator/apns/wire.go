package apns

import (
	"encoding/hex"
	"strings"
	"time"
)

// APNs' error reasons (the "reason" of its JSON error body), from Apple's
// "Handling notification responses from APNs". They are the wire
// protocol's own strings: the Client in provider/apns classifies the same
// ones, and the emulator keeps its copy so that it stays apart from what
// it imitates.
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

// reasons holds, for each reason, the HTTP status APNs answers it with and
// Apple's description of it.
var reasons = map[string]struct {
	status      int
	description string
}{
	ReasonBadCollapseID:               {400, "The collapse identifier exceeds the maximum allowed size."},
	ReasonBadDeviceToken:              {400, "The specified device token is invalid (for a token of a development build sent to production, or the reverse, too)."},
	ReasonBadExpirationDate:           {400, "The apns-expiration value is invalid."},
	ReasonBadMessageID:                {400, "The apns-id value is invalid."},
	ReasonBadPriority:                 {400, "The apns-priority value is invalid."},
	ReasonBadTopic:                    {400, "The apns-topic value is invalid."},
	ReasonDeviceTokenNotForTopic:      {400, "The device token doesn't match the specified topic."},
	ReasonDuplicateHeaders:            {400, "One or more headers are repeated."},
	ReasonIdleTimeout:                 {400, "Idle timeout."},
	ReasonInvalidPushType:             {400, "The apns-push-type value is invalid."},
	ReasonMissingDeviceToken:          {400, "The device token isn't specified in the request :path."},
	ReasonMissingTopic:                {400, "The apns-topic header of the request isn't specified and is required."},
	ReasonPayloadEmpty:                {400, "The message payload is empty."},
	ReasonTopicDisallowed:             {400, "Pushing to this topic is not allowed."},
	ReasonBadCertificate:              {403, "The certificate is invalid."},
	ReasonBadCertificateEnvironment:   {403, "The client certificate is for the wrong environment."},
	ReasonExpiredProviderToken:        {403, "The provider token is stale and a new token should be generated."},
	ReasonForbidden:                   {403, "The specified action is not allowed."},
	ReasonInvalidProviderToken:        {403, "The provider token is not valid, or the token signature can't be verified."},
	ReasonMissingProviderToken:        {403, "No provider certificate was used to connect to APNs, and the authorization header is missing or no provider token is specified."},
	ReasonUnrelatedKeyIDInToken:       {403, "The key ID in the provider token isn't related to the key ID of the token used in the first push of this connection."},
	ReasonBadEnvironmentKeyIDInToken:  {403, "The key ID in the provider token is for the wrong environment."},
	ReasonBadPath:                     {404, "The request contained an invalid :path value."},
	ReasonMethodNotAllowed:            {405, "The specified :method value isn't POST."},
	ReasonExpiredToken:                {410, "The device token has expired."},
	ReasonUnregistered:                {410, "The device token is inactive for the specified topic."},
	ReasonPayloadTooLarge:             {413, "The message payload is too large."},
	ReasonTooManyProviderTokenUpdates: {429, "The provider's authentication token is being updated too often."},
	ReasonTooManyRequests:             {429, "Too many requests were made consecutively to the same device token."},
	ReasonInternalServerError:         {500, "An internal server error occurred."},
	ReasonServiceUnavailable:          {503, "The service is unavailable."},
	ReasonShutdown:                    {503, "The APNs server is shutting down."},
}

// reasonStatus is the HTTP status and description of reason; 0 for a
// reason APNs does not have.
func reasonStatus(reason string) (int, string) {
	r := reasons[reason]
	return r.status, r.description
}

// MaxPayloadBytes is APNs' limit on a notification's JSON payload (VoIP
// pushes may carry 5120 bytes).
const MaxPayloadBytes = 4096

// keyAps is Apple's dictionary in a payload.
const keyAps = "aps"

// The push types whose payload rules the emulator checks.
const (
	pushTypeAlert      = "alert"
	pushTypeBackground = "background"
)

// tokenMinInterval is how often, at most, APNs lets a key present a new
// provider token (TooManyProviderTokenUpdates).
const tokenMinInterval = 20 * time.Minute

// errorBody is APNs' JSON error answer.
type errorBody struct {
	Reason string `json:"reason"`
	// Timestamp (410 only) is when APNs learned the token became invalid,
	// in milliseconds since the epoch.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// appleID reports whether s has the shape of an Apple team or key id: ten
// characters of A-Z and 0-9.
func appleID(s string) bool {
	return len(s) == 10 && strings.IndexFunc(s, func(c rune) bool { return !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') }) < 0
}

// validDeviceToken reports whether t has the shape of a device token: an
// even number of hex digits, 32 to 100 bytes.
func validDeviceToken(t string) bool {
	if len(t) < 64 || len(t) > 200 || len(t)%2 != 0 {
		return false
	}
	_, err := hex.DecodeString(t)
	return err == nil
}

// formatUUID formats 16 bytes as 8-4-4-4-12 upper-case hex digits, as APNs
// writes an apns-id.
func formatUUID(u []byte) string {
	s := strings.ToUpper(hex.EncodeToString(u))
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}
