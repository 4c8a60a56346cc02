package herald

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/unsubscribe"
	"github.com/heraldhq/herald/store"
)

// UnsubscribeConfig configures one-click unsubscribe (RFC 8058, issue 21
// item 3): every e-mail of a type that is not transactional carries
// "List-Unsubscribe: <BaseURL/v1/unsubscribe/{token}>" and
// "List-Unsubscribe-Post: List-Unsubscribe=One-Click", and a POST to that
// URL turns the user's preference for the type off on e-mail. The token
// is signed with Secret and names the user, the type and the channel.
type UnsubscribeConfig struct {
	// Secret signs the links (HMAC-SHA256), at least 32 bytes. Without
	// it, e-mails carry no List-Unsubscribe header and the unsubscribe
	// routes answer not_found. Changing it invalidates every link sent.
	Secret []byte
	// BaseURL is Herald's public URL as a mail recipient's client reaches
	// it ("https://herald.example.com", a path prefix allowed). Required
	// with Secret.
	BaseURL string
	// Mailto, if set, is an address added as a second target,
	// "mailto:<Mailto>?subject=unsubscribe%20<token>", for clients that
	// only mail. Herald does not read that mailbox: whatever does can
	// POST the token.
	Mailto string
}

// Unsubscription is what an unsubscribe link names and whether it is in
// effect: the answer of CheckUnsubscribe and Unsubscribe.
type Unsubscription struct {
	UserID  string             `json:"user_id"`
	Type    string             `json:"type"`
	Channel heraldtype.Channel `json:"channel"`
	// Unsubscribed: the user's preferences keep the type off on the
	// channel.
	Unsubscribed bool `json:"unsubscribed"`
}

// unsubscriber holds the validated UnsubscribeConfig.
type unsubscriber struct {
	signer *unsubscribe.Signer
	base   string // BaseURL without a trailing slash
	mailto string
}

func newUnsubscriber(c UnsubscribeConfig) (*unsubscriber, error) {
	if len(c.Secret) == 0 {
		return nil, nil
	}
	s, err := unsubscribe.NewSigner(c.Secret)
	if err != nil {
		return nil, fmt.Errorf("herald: Unsubscribe.Secret: %w", err)
	}
	u, err := url.Parse(c.BaseURL)
	if c.BaseURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("herald: Unsubscribe.BaseURL %q must be Herald's public http(s) URL, without a query", c.BaseURL)
	}
	if c.Mailto != "" {
		if a, err := mail.ParseAddress(c.Mailto); err != nil || a.Name != "" || a.Address != c.Mailto {
			return nil, fmt.Errorf("herald: Unsubscribe.Mailto %q is not a bare e-mail address", c.Mailto)
		}
	}
	return &unsubscriber{signer: s, base: strings.TrimRight(c.BaseURL, "/"), mailto: c.Mailto}, nil
}

// listUnsubscribe gives an e-mail delivery its unsubscribe targets; none
// for a transactional or a critical type (a critical type bypasses
// opt-outs, so a link would promise what it cannot keep). If the type
// cannot be read, the link is added: one too many costs nothing, one
// missing breaks the mailbox providers' bulk-sender rules.
func (c *Client) listUnsubscribe(ctx context.Context, job *heraldtype.Job) []string {
	n := job.Notification
	if n == nil || c.unsub == nil {
		return nil
	}
	if t, err := c.types.Type(ctx, n.Type); err == nil && (t.Transactional || t.Critical) {
		return nil
	}
	// Issued at the next millisecond: a re-subscription recorded in the
	// same millisecond as the send is then not taken for a later one.
	issued := c.now().UTC().Truncate(time.Millisecond).Add(time.Millisecond)
	tok := c.unsub.signer.Token(unsubscribe.Claims{UserID: n.UserID, Type: n.Type, Channel: heraldtype.ChannelEmail,
		DeliveryID: job.Delivery.ID, IssuedAt: issued})
	out := []string{c.unsub.base + "/v1/unsubscribe/" + tok}
	if c.unsub.mailto != "" {
		out = append(out, "mailto:"+c.unsub.mailto+"?subject=unsubscribe%20"+tok)
	}
	return out
}

// claims checks an unsubscribe token: invalid_argument if it is not one
// Herald makes, not_found if it is not signed with the secret (or
// unsubscribe is not configured).
func (c *Client) claims(token string) (unsubscribe.Claims, error) {
	if c.unsub == nil {
		return unsubscribe.Claims{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "one-click unsubscribe is not configured")
	}
	cl, err := c.unsub.signer.Parse(token)
	switch {
	case errors.Is(err, unsubscribe.ErrMalformed):
		return cl, heraldtype.FieldErrorf("token", "is not an unsubscribe link's token")
	case err != nil:
		return cl, heraldtype.Errorf(heraldtype.ENOTFOUND, "this unsubscribe link is not valid")
	}
	return cl, nil
}

// CheckUnsubscribe reports what an unsubscribe token names and whether it
// is already in effect, changing nothing (GET /v1/unsubscribe/{token}).
func (c *Client) CheckUnsubscribe(ctx context.Context, token string) (Unsubscription, error) {
	cl, err := c.claims(token)
	if err != nil {
		return Unsubscription{}, err
	}
	p, err := c.store.GetPreferences(ctx, cl.UserID)
	if err != nil {
		return Unsubscription{}, err
	}
	if err := retired(p, cl); err != nil {
		return Unsubscription{}, err
	}
	return Unsubscription{UserID: cl.UserID, Type: cl.Type, Channel: cl.Channel, Unsubscribed: !channelOn(p, cl.Type, cl.Channel)}, nil
}

// retired refuses a link the user's later choice overrides: they turned
// its type back on for its channel after the link was sent (issue 31
// item 6). A link from before links carried their issue time counts as
// sent before any re-subscription.
func retired(p Preferences, cl unsubscribe.Claims) error {
	if resubscribedAfter(p, cl.Type, cl.Channel, cl.IssuedAt) {
		return heraldtype.Errorf(heraldtype.ENOTFOUND,
			"this unsubscribe link no longer applies: %q was turned back on for %s after it was sent; change it where you turned it on", cl.Type, cl.Channel)
	}
	return nil
}

// Unsubscribe turns the preference a token names off: the user's type on
// the token's channel, through the same store write as PutPreferences;
// the type's preference records when (unsubscribed_at), and later
// deliveries of it on that channel end opted out (type_disabled or
// channel_disabled) in the history. Idempotent: a token already in
// effect changes nothing.
//
// The read and the write are not one transaction: a preferences PUT
// landing between them is overwritten with its own content plus this
// change, or loses this change if it lands after — a link clicked twice
// is then honoured by the second click.
func (c *Client) Unsubscribe(ctx context.Context, token string) (Unsubscription, error) {
	cl, err := c.claims(token)
	if err != nil {
		return Unsubscription{}, err
	}
	res := Unsubscription{UserID: cl.UserID, Type: cl.Type, Channel: cl.Channel, Unsubscribed: true}
	// Read, turn the channel off, write back guarded by what was read: a
	// preferences write that lands in between is read again, never
	// overwritten, and the unsubscribe is never lost to it.
	for try := 1; ; try++ {
		p, err := c.store.GetPreferences(ctx, cl.UserID)
		if err != nil {
			return Unsubscription{}, err
		}
		if err := retired(p, cl); err != nil {
			return Unsubscription{}, err
		}
		if !channelOn(p, cl.Type, cl.Channel) {
			// Already off (this link's earlier POST, or the user's own
			// preferences): the timeline entry is still made once.
			return res, c.unsubscribedOnTimeline(ctx, cl)
		}
		was := p.UpdatedAt
		turnOff(&p, cl.Type, cl.Channel, c.now().UTC())
		if err := policy.ValidatePreferences(&p); err != nil {
			return Unsubscription{}, err
		}
		// The store's write, not PutPreferences: an unsubscribe must land
		// even for a user already at max_preference_types.
		_, swapped, err := c.store.SwapPreferences(ctx, p, was, c.now().UTC())
		if err != nil {
			return Unsubscription{}, err
		}
		if swapped {
			break
		}
		if try == maxRecordTries {
			return Unsubscription{}, heraldtype.Errorf(heraldtype.EUNAVAILABLE,
				"the preferences of user %q kept changing under %d tries; send the unsubscribe again", cl.UserID, maxRecordTries)
		}
		if err := decideAgain(ctx, try); err != nil {
			return Unsubscription{}, err
		}
	}
	c.log.Info("herald: one-click unsubscribe", "user_id", cl.UserID, "type", cl.Type, "channel", cl.Channel)
	return res, c.unsubscribedOnTimeline(ctx, cl)
}

// unsubscribedOnTimeline shows a one-click unsubscribe on the timeline of
// the delivery whose e-mail carried the link: an attempt row of outcome
// provider_report, status "unsubscribed" — the recipient's mailbox
// provider posts RFC 8058's one-click request on their behalf — written
// once however often the link is posted. A link that names no delivery,
// or a delivery since pruned or not the token's user's, adds nothing.
func (c *Client) unsubscribedOnTimeline(ctx context.Context, cl unsubscribe.Claims) error {
	if cl.DeliveryID <= 0 {
		return nil
	}
	d, err := c.store.GetDelivery(ctx, cl.DeliveryID)
	switch {
	case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND:
		return nil
	case err != nil:
		return err
	case d.UserID != cl.UserID || d.Channel != cl.Channel || d.ProviderMessageID == "":
		return nil
	}
	_, err = c.store.RecordProviderReport(ctx, store.ProviderReport{DeliveryID: d.ID, ProviderMessageID: d.ProviderMessageID,
		At: c.now().UTC(), Status: UnsubscribedStatus,
		Error: fmt.Sprintf("one-click unsubscribe: %s by %s turned off", cl.Type, cl.Channel)})
	return err
}

// UnsubscribedStatus is the status of the timeline entry a one-click
// unsubscribe adds to the delivery that carried the link.
const UnsubscribedStatus = "unsubscribed"

// preferenceChannels are the channels a type preference can list, in the order
// an unsubscribe writes them.
var preferenceChannels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp}

// channelOn reports whether p lets typ use ch.
func channelOn(p Preferences, typ string, ch heraldtype.Channel) bool {
	return !slices.Contains(p.OptedOutChannels, ch) && typeOn(p, typ, ch)
}

// turnOff removes ch from typ's channels in p ("no channels listed" means
// all of them, so it lists the others; none left turns the type off).
func turnOff(p *Preferences, typ string, ch heraldtype.Channel, now time.Time) {
	tp := p.Types[typ]
	keep := tp.Channels
	if len(keep) == 0 {
		keep = preferenceChannels
	}
	tp.Channels = slices.DeleteFunc(slices.Clone(keep), func(c heraldtype.Channel) bool { return c == ch })
	if len(tp.Channels) == 0 {
		tp.Channels, tp.Disabled = nil, true
	}
	tp.UnsubscribedAt = &now
	if p.Types == nil {
		p.Types = map[string]TypePreference{}
	}
	p.Types[typ] = tp
}
