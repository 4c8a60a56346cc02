package herald

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/emailtrack"
	"github.com/heraldhq/herald/store"
)

// Receipts from e-mail (issue 35 item 2). A type that opts in
// (TypeConfig.EmailTracking) has the HTML part of its e-mails rewritten
// per delivery just before the send: an open pixel, and each http(s)
// link replaced by a signed, expiring link through Herald
// (internal/emailtrack). Following one records the delivery's receipt —
// the same record as an app's (receipts.go), once per delivery and event —
// and redirects to the URL the verified token carries, never to one a
// request names. The plain-text part is never rewritten: its reader sees
// the real address, and there is no pixel to put in text.

// DefaultEmailTrackingLinkTTL is how long a tracked link and an open
// pixel are honoured unless EmailTrackingConfig.LinkTTL says otherwise:
// long enough for an e-mail read weeks later, after which the link
// answers a page saying it expired rather than redirect.
const DefaultEmailTrackingLinkTTL = 90 * 24 * time.Hour

// EmailTrackingConfig configures e-mail tracking: the secret its links
// are signed with and Herald's public URL they point at. Which types are
// tracked is each type's choice (TypeConfig.EmailTracking).
type EmailTrackingConfig struct {
	// Secret signs the tracked links and pixels (HMAC-SHA256), at least
	// 32 bytes. Without it no e-mail is tracked, a type cannot turn
	// tracking on, and the tracking routes answer not_found. Changing it
	// breaks every tracked link already sent (they answer not_found).
	Secret []byte
	// BaseURL is Herald's public URL as a mail recipient's client reaches
	// it ("https://herald.example.com", a path prefix allowed). Required
	// with Secret.
	BaseURL string
	// LinkTTL is how long a tracked link and a pixel are honoured after
	// the send. Default DefaultEmailTrackingLinkTTL.
	LinkTTL time.Duration
}

// emailTracker holds the validated EmailTrackingConfig.
type emailTracker struct {
	signer *emailtrack.Signer
	base   string // BaseURL without a trailing slash
	ttl    time.Duration
}

func newEmailTracker(c EmailTrackingConfig) (*emailTracker, error) {
	if len(c.Secret) == 0 {
		return nil, nil
	}
	s, err := emailtrack.NewSigner(c.Secret)
	if err != nil {
		return nil, fmt.Errorf("herald: EmailTracking.Secret: %w", err)
	}
	u, err := url.Parse(c.BaseURL)
	if c.BaseURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("herald: EmailTracking.BaseURL %q must be Herald's public http(s) URL, without a query", c.BaseURL)
	}
	switch {
	case c.LinkTTL == 0:
		c.LinkTTL = DefaultEmailTrackingLinkTTL
	case c.LinkTTL < time.Minute:
		return nil, fmt.Errorf("herald: EmailTracking.LinkTTL %s is under a minute", c.LinkTTL)
	}
	return &emailTracker{signer: s, base: strings.TrimRight(c.BaseURL, "/"), ttl: c.LinkTTL}, nil
}

// checkEmailTracking refuses a type that turns tracking on where the
// Client has no tracking secret: its e-mails could not be tracked.
func (c *Client) checkEmailTracking(t heraldtype.NotificationType) error {
	if t.EmailTracking && c.track == nil {
		return heraldtype.FieldErrorf("email_tracking", "cannot be on: this server has no e-mail tracking secret configured")
	}
	return nil
}

// emailHTML gives an e-mail delivery its tracked HTML body, "" to send
// the notification's own: when tracking is configured, the type opts in
// and the e-mail has an HTML part. A type that cannot be read is sent
// untracked — tracking is opt-in, so in doubt it is left out.
func (c *Client) emailHTML(ctx context.Context, job *heraldtype.Job) string {
	n := job.Notification
	if c.track == nil || n == nil || n.Data[heraldtype.DataHTML] == "" {
		return ""
	}
	t, err := c.types.Type(ctx, n.Type)
	if err != nil {
		c.log.Warn("herald: e-mail sent untracked: its type could not be read", "type", n.Type, "delivery_id", job.Delivery.ID, "err", err)
		return ""
	}
	if !t.EmailTracking {
		return ""
	}
	key := heraldtype.DeliveryKey(job.Delivery.NotificationID, job.Delivery.ID)
	exp := c.now().Add(c.track.ttl)
	link := func(href string) string {
		return c.track.base + "/t/c/" + c.track.signer.Token(emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: href, Expires: exp})
	}
	pixel := c.track.base + "/t/o/" + c.track.signer.Token(emailtrack.Claims{Kind: emailtrack.Open, MessageID: key, Expires: exp})
	return emailtrack.Rewrite(n.Data[heraldtype.DataHTML], link, pixel)
}

// EmailOpened records the open an e-mail's pixel names (GET
// /t/o/{token}): the delivery's opened receipt, once. Its error is the
// token's only — invalid_argument for a token Herald does not make,
// not_found for one not signed with the secret, expired, or when
// tracking is not configured; a failure to record is logged, and the
// pixel is still served.
func (c *Client) EmailOpened(ctx context.Context, token string) error {
	cl, err := c.trackingClaims(token, emailtrack.Open)
	if err != nil {
		return err
	}
	c.recordEmailReceipts(ctx, cl, heraldtype.ReceiptOpened)
	return nil
}

// EmailClicked checks a tracked link's token (GET /t/c/{token}), records
// the delivery's clicked receipt with the link as its action — and its
// opened receipt, since an e-mail whose link was followed was opened,
// whether or not its images were loaded — and returns the link to
// redirect to: the original URL the token carries, and nothing else.
// Errors as EmailOpened's; a failure to record is logged and the link
// still returned, so the reader always gets where the link leads.
func (c *Client) EmailClicked(ctx context.Context, token string) (string, error) {
	cl, err := c.trackingClaims(token, emailtrack.Click)
	if err != nil {
		return "", err
	}
	c.recordEmailReceipts(ctx, cl, heraldtype.ReceiptOpened, heraldtype.ReceiptClicked)
	return cl.URL, nil
}

// trackingClaims checks a tracking token of kind k.
func (c *Client) trackingClaims(token string, k emailtrack.Kind) (emailtrack.Claims, error) {
	if c.track == nil {
		return emailtrack.Claims{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "e-mail tracking is not configured")
	}
	cl, err := c.track.signer.Parse(token, k, c.now())
	switch {
	case errors.Is(err, emailtrack.ErrMalformed):
		return cl, heraldtype.FieldErrorf("token", "is not a link Herald made")
	case errors.Is(err, emailtrack.ErrExpired):
		return cl, heraldtype.Errorf(heraldtype.ENOTFOUND, "this link has expired")
	case err != nil:
		return cl, heraldtype.Errorf(heraldtype.ENOTFOUND, "this link is not valid")
	}
	return cl, nil
}

// recordEmailReceipts writes the receipts of events for the delivery cl
// names, in one batch; each lands once (the stores' unique index), so a
// pixel fetched again or a link followed twice records nothing more.
// Counted in herald_receipts_total like an app's; a failure is logged,
// never returned.
func (c *Client) recordEmailReceipts(ctx context.Context, cl emailtrack.Claims, events ...heraldtype.ReceiptEvent) {
	nid, did, ok := parseMessageID(cl.MessageID)
	if !ok {
		c.log.Warn("herald: a tracking token names no message Herald sends", "message_id", cl.MessageID)
		return
	}
	now := c.now().UTC()
	rs := make([]store.Receipt, len(events))
	for i, e := range events {
		rs[i] = store.Receipt{DeliveryID: did, NotificationID: nid, Event: e, At: now}
		if e == heraldtype.ReceiptClicked {
			rs[i].Action = cl.URL
		}
	}
	results, err := c.store.RecordReceipts(ctx, rs)
	if err != nil {
		c.log.Warn("herald: recording an e-mail receipt failed", "message_id", cl.MessageID, "events", events, "err", err)
		return
	}
	for i, res := range results {
		c.metrics.Receipts.WithLabelValues(string(events[i]), string(res)).Inc()
	}
}
