package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"sort"
)

// Signature computes the X-Twilio-Signature of a request Twilio sends to
// callbackURL with the form params: HMAC-SHA1, keyed with the auth token, of the
// full URL (query included) followed by every POST parameter, sorted by
// name, as name then value with no separators; base64-encoded
// (twilio.com/docs/usage/webhooks/webhooks-security). A parameter given
// several values contributes each, in the order given.
func Signature(authToken, callbackURL string, params url.Values) string {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(callbackURL))
	for _, k := range names {
		for _, v := range params[k] {
			mac.Write([]byte(k))
			mac.Write([]byte(v))
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// ValidateSignature reports whether signature is the X-Twilio-Signature
// Twilio computes for a request to callbackURL with the form params (see
// Signature). callbackURL must be exactly the URL Twilio was given, scheme, port and
// query included. The comparison takes constant time.
func ValidateSignature(authToken, callbackURL string, params url.Values, signature string) bool {
	if authToken == "" || signature == "" {
		return false
	}
	return hmac.Equal([]byte(Signature(authToken, callbackURL, params)), []byte(signature))
}
