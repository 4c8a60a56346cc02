package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"maps"
	"net/url"
	"slices"
	"unicode/utf16"
)

// Twilio's error codes (twilio.com/docs/api/errors/<code>) the emulator
// answers. They are the wire protocol's own numbers: the Client in
// provider/twilio classifies the same ones, and the emulator keeps its copy
// so that it stays apart from what it imitates.
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

// MaxBodyChars is Twilio's limit on a message body, in UTF-16 code units.
const MaxBodyChars = 1600

// apiError is Twilio's JSON error body.
type apiError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info,omitempty"`
	Status   int    `json:"status"`
}

// validE164 reports whether s is an E.164 number: "+", a country code not
// starting with 0, at most 15 digits in all.
func validE164(s string) bool {
	if len(s) < 3 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	return !slices.ContainsFunc([]byte(s[1:]), func(c byte) bool { return c < '0' || c > '9' })
}

// bodyLen is the length Twilio counts a body in: UTF-16 code units.
func bodyLen(s string) int {
	return len(utf16.Encode([]rune(s)))
}

// httpURL reports whether s is an absolute http(s) URL.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// signature is the X-Twilio-Signature Twilio puts on a callback to
// callbackURL with params: base64 of the HMAC-SHA1, keyed by the auth
// token, of the URL followed by each parameter's name and value, sorted
// by name.
func signature(authToken, callbackURL string, params url.Values) string {
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(callbackURL))
	for _, k := range slices.Sorted(maps.Keys(params)) {
		for _, v := range params[k] {
			mac.Write([]byte(k + v))
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
