package herald

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// StatusCallbacks is an optional Provider capability: a provider whose
// service reports a message's fate later by calling Herald back (Twilio's
// status callbacks) verifies and decodes such a call. rawQuery is the
// request URL's query, form its POST parameters, signature the provider's
// signature header. A call the provider did not sign is EUNAUTHENTICATED.
type StatusCallbacks interface {
	VerifyStatusCallback(rawQuery string, form url.Values, signature string) (heraldtype.ProviderReport, error)
}

// RecordStatusCallback verifies a status callback of the named provider
// and records a final report (delivered, undelivered, failed) on its
// delivery's timeline, moving nothing: a sent delivery stays sent (issue 21
// item 4). A report of STOP (Twilio 21610) also suppresses the number for
// SMS, as the same refusal at send time does. It returns the report and
// whether it named a delivery Herald has; a report of another status, or
// of a message Herald does not know, is not an error (the provider would
// retry it) and records nothing. A provider that is not configured or
// takes no callbacks is ENOTFOUND.
func (c *Client) RecordStatusCallback(ctx context.Context, provider, rawQuery string, form url.Values, signature string) (heraldtype.ProviderReport, bool, error) {
	p, ok := c.cfg.Providers[provider].(StatusCallbacks)
	if !ok {
		return heraldtype.ProviderReport{}, false, heraldtype.Errorf(heraldtype.ENOTFOUND, "provider %q takes no status callbacks here", provider)
	}
	r, err := p.VerifyStatusCallback(rawQuery, form, signature)
	if err != nil {
		return r, false, err
	}
	id, ok := deliveryIDOfKey(r.DeliveryKey)
	if !ok {
		return r, false, nil
	}
	if !r.Final {
		return r, true, nil
	}
	rep := store.ProviderReport{DeliveryID: id, ProviderMessageID: r.ProviderMessageID, At: c.now(),
		Status: r.Status, Error: r.Error}
	if r.Suppress {
		rep.SuppressReason = r.ErrorCode
	}
	found, err := c.store.RecordProviderReport(ctx, rep)
	return r, found, err
}

// deliveryIDOfKey returns the delivery id of an idempotency key
// (heraldtype.DeliveryKey: notification id "." delivery id).
func deliveryIDOfKey(key string) (int64, bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(key[i+1:], 10, 64)
	return id, err == nil && id > 0
}
