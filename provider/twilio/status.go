package twilio

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// deliveryParam is the query parameter of the StatusCallback URL that
// names the delivery a message belongs to. Twilio signs the URL with its
// query, so the delivery a callback names cannot be changed in transit.
const deliveryParam = "delivery"

// statusCallbackURL is the StatusCallback of the message with delivery
// key: Config.StatusCallback with the key added to its query.
func (c *Client) statusCallbackURL(key string) string {
	sep := "?"
	if strings.Contains(c.cfg.StatusCallback, "?") {
		sep = "&"
	}
	return c.cfg.StatusCallback + sep + deliveryParam + "=" + url.QueryEscape(key)
}

// The final statuses of a message (twilio.com/docs/messaging/guides/
// outbound-message-status-in-status-callbacks): its fate, which Herald
// records. queued, accepted, sending and sent are steps on the way.
const (
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
	StatusFailed      = "failed"
)

// VerifyStatusCallback checks a status callback Twilio POSTed to Herald —
// rawQuery is the request URL's query, form its POST parameters and
// signature its X-Twilio-Signature — and decodes it. The signature must be
// Twilio's HMAC-SHA1, keyed with the auth token, of exactly the
// StatusCallback URL the message was sent with (Config.StatusCallback and
// the delivery parameter: the public URL is configured, never taken from
// the request, which a proxy may have rewritten) and the parameters. An
// unsigned or forged callback is EUNAUTHENTICATED; one without a delivery
// or MessageSid is EINVALID; with no StatusCallback configured the Client
// takes none (ENOTFOUND). The root package finds the method by type
// assertion (herald.StatusCallbacks).
func (c *Client) VerifyStatusCallback(rawQuery string, form url.Values, signature string) (heraldtype.ProviderReport, error) {
	var r heraldtype.ProviderReport
	if c.cfg.StatusCallback == "" {
		return r, heraldtype.Errorf(heraldtype.ENOTFOUND, "twilio status callbacks are off: set twilio.status_callback_url")
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil || len(q[deliveryParam]) != 1 || q.Get(deliveryParam) == "" {
		return r, heraldtype.FieldErrorf(deliveryParam, "the callback URL names no delivery")
	}
	r.DeliveryKey = q.Get(deliveryParam)
	if !ValidateSignature(c.cfg.AuthToken, c.statusCallbackURL(r.DeliveryKey), form, signature) {
		return r, heraldtype.Errorf(heraldtype.EUNAUTHENTICATED,
			"X-Twilio-Signature does not match: not signed with twilio.auth_token for twilio.status_callback_url")
	}
	r.ProviderMessageID = form.Get("MessageSid")
	if r.ProviderMessageID == "" {
		r.ProviderMessageID = form.Get("SmsSid")
	}
	r.Status = form.Get("MessageStatus")
	if r.Status == "" {
		r.Status = form.Get("SmsStatus")
	}
	switch {
	case r.ProviderMessageID == "":
		return r, heraldtype.FieldErrorf("MessageSid", "is required")
	case r.Status == "":
		return r, heraldtype.FieldErrorf("MessageStatus", "is required")
	}
	switch r.Status {
	case StatusDelivered, StatusUndelivered, StatusFailed:
		r.Final = true
	}
	if code, err := strconv.Atoi(form.Get("ErrorCode")); err == nil && code != 0 {
		r.ErrorCode = Code(code)
		r.Error = r.ErrorCode
		if msg := form.Get("ErrorMessage"); msg != "" {
			r.Error += ": " + msg
		}
		// A recipient who replied STOP is suppressed for SMS, as when
		// the send itself is refused with 21610 (issue 5).
		r.Suppress = code == ErrUnsubscribed && r.Status != StatusDelivered
	}
	return r, nil
}
