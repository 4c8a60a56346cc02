// Package smtp sends e-mail notifications through an SMTP submission server
// (go-mail). Its emulator, for `herald emulate smtp` and tests, is
// emulator/smtp.
//
// The Client only classifies failures into *heraldtype.SendError; the
// dispatcher alone decides whether and when to retry (STYLE.md, errors in
// three layers).
package smtp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	mail "github.com/wneessen/go-mail"

	"github.com/heraldhq/herald/heraldtype"
)

// DataHTML is the notification data key that carries an e-mail's HTML
// body. A Notification has a plain-text Body only; when Data["html"] is set,
// the mail is multipart/alternative with the text first and the HTML
// second, so every client shows the richest part it can. No other data key
// is sent: a mail has no place for app data, and headers built from caller
// data would invite header injection. A Message's HTML, when set (e-mail
// tracking's rewritten copy), is sent in its place.
const DataHTML = heraldtype.DataHTML

// HeaderMessageKey carries the delivery's idempotency key (S0.5) on every
// mail, for the receiving side's own de-duplication and for support.
const HeaderMessageKey = "X-Herald-Message-Id"

// Client sends notifications as e-mail through one submission server. It is
// safe for concurrent use.
//
// Each Send dials its own connection (TCP, TLS, EHLO, AUTH, one mail, QUIT)
// rather than borrowing one from a pool. That keeps a failure confined to
// the one delivery it belongs to — a connection the server dropped while
// idle (they do, after a few minutes, or after N mails) can never fail the
// next delivery — at the cost of a handshake per mail: a few milliseconds
// on a LAN, ~3 round trips to a remote relay. Sends run concurrently on the
// dispatcher's workers, so throughput is bounded by the relay's
// connection limit, not by one connection; at notification volumes that is
// ample. A pool is the optimisation to add if a relay's handshake becomes
// the bottleneck.
type Client struct {
	cfg  *resolved
	mail *mail.Client
}

// New validates cfg and returns a Client. It does not connect.
func New(cfg Config) (*Client, error) {
	r, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	opts := []mail.Option{
		mail.WithTimeout(r.Timeout),
		mail.WithHELO(r.HeloName),
		mail.WithTLSConfig(r.tls),
	}
	switch r.TLS {
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSStartTLS:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	case TLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	// The port goes last: WithSSL would otherwise reset it to 465.
	opts = append(opts, mail.WithPort(r.Port))
	mc, err := mail.NewClient(r.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("smtp: %v", err)
	}
	return &Client{cfg: r, mail: mc}, nil
}

// ValidateNotification reports whether n can be sent as an e-mail (see
// CheckPayload). The root package finds it by type assertion and calls it
// when a notification is accepted.
func (c *Client) ValidateNotification(n *heraldtype.Notification) error {
	return CheckPayload(n)
}

// CheckPayload reports whether n can be sent as an e-mail: it has a text
// body or an HTML body (Data["html"]), and its title, which becomes the
// Subject, is one line. Errors are *heraldtype.Error with code EINVALID.
func CheckPayload(n *heraldtype.Notification) error {
	switch {
	case n == nil:
		return heraldtype.Errorf(heraldtype.EINVALID, "notification is missing")
	case strings.ContainsAny(n.Title, "\r\n"):
		return heraldtype.FieldErrorf("title", "an e-mail subject must be a single line")
	case n.Body == "" && n.Data[DataHTML] == "":
		return heraldtype.FieldErrorf("body", "an e-mail needs a body (or data.%s)", DataHTML)
	}
	return nil
}

// Send mails m's notification to m.Address and returns the Message-ID it
// gave the mail. A failure is a *heraldtype.SendError (see classify); Send
// never retries.
//
// The Message-ID is derived from m.Key, so every retry of a delivery
// carries the same one and a mail client or archive that sees two copies
// (a retry after a lost answer) can drop one.
func (c *Client) Send(ctx context.Context, m *heraldtype.Message) (string, error) {
	msg, id, err := c.build(m)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	conn, err := c.mail.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return "", classify(err)
	}
	// A failed QUIT after an accepted mail must not turn into a retry, so
	// its error is ignored; the connection is closed either way.
	defer c.mail.CloseWithSMTPClient(conn) //nolint:errcheck // see above.
	// go-mail is given no AUTH setting: it would pick one mechanism for
	// every connection, and fix the XOAUTH2 token at construction.
	// authenticate picks per connection from the server's EHLO reply,
	// with a token that is current.
	if c.cfg.Username != "" {
		if err := c.authenticate(conn); err != nil {
			return "", err
		}
	}
	// SMTPUTF8 only when an address needs it (issue 21 item 2): a server
	// that advertises it but mishandles it, or a relay that passes the
	// mail to one without it, then only ever sees the mails that cannot
	// do without.
	conn.SkipSMTPUTF8(!needsSMTPUTF8(c.cfg.from.Address, m.Address))
	if err := c.mail.SendWithSMTPClient(conn, msg); err != nil {
		return "", classify(err)
	}
	return id, nil
}

// build turns m into a go-mail message and returns it with its Message-ID.
func (c *Client) build(m *heraldtype.Message) (*mail.Msg, string, error) {
	invalid := func(msg string) (*mail.Msg, string, error) {
		return nil, "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: codeInvalidMessage, Message: msg}
	}
	switch {
	case m == nil:
		return invalid("message is nil")
	case m.Notification == nil:
		return invalid("message has no notification")
	case m.Key == "":
		return invalid("message has no idempotency key")
	case m.Address == "":
		return invalid("message has no e-mail address")
	}
	if err := CheckPayload(m.Notification); err != nil {
		return invalid(heraldtype.ErrorMessage(err))
	}
	n := m.Notification
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	var err error
	if c.cfg.from.Name != "" {
		err = msg.FromFormat(c.cfg.from.Name, c.cfg.from.Address)
	} else {
		err = msg.From(c.cfg.from.Address)
	}
	if err != nil {
		return invalid("the From address is refused: " + err.Error())
	}
	if err := msg.To(m.Address); err != nil {
		// The user's address is malformed: as permanent as a 5.1.3 from
		// the server, and Herald's own fault to have sent.
		return nil, "", &heraldtype.SendError{Class: heraldtype.ClassPermanent, Code: CodeBadAddress,
			Message: fmt.Sprintf("e-mail address %q is not valid", m.Address)}
	}
	id := messageID(m.Key, c.cfg.from.Address)
	msg.SetMessageIDWithValue(id)
	msg.SetGenHeader(HeaderMessageKey, m.Key)
	msg.SetDateWithValue(c.cfg.Now())
	msg.Subject(n.Title)
	if err := setListUnsubscribe(msg, m.ListUnsubscribe); err != nil {
		return invalid(err.Error())
	}
	msg.SetBodyString(mail.TypeTextPlain, n.Body)
	html := n.Data[DataHTML]
	if m.HTML != "" {
		html = m.HTML
	}
	if html != "" {
		msg.AddAlternativeString(mail.TypeTextHTML, html)
	}
	return msg, id, nil
}

// setListUnsubscribe writes the one-click unsubscribe headers (RFC 2369,
// RFC 8058) for targets: "List-Unsubscribe: <https://…>, <mailto:…>",
// and "List-Unsubscribe-Post: List-Unsubscribe=One-Click" when one target
// is an https URL — which is what Gmail and Yahoo ask of bulk senders for
// their own unsubscribe button.
func setListUnsubscribe(msg *mail.Msg, targets []string) error {
	if len(targets) == 0 {
		return nil
	}
	oneClick := false
	quoted := make([]string, len(targets))
	for i, t := range targets {
		if t == "" || strings.ContainsAny(t, "<>\r\n\t ,") || !strings.HasPrefix(t, "https://") && !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "mailto:") {
			return fmt.Errorf("List-Unsubscribe target %q is not an http(s) or mailto URI", t)
		}
		oneClick = oneClick || strings.HasPrefix(t, "https://") || strings.HasPrefix(t, "http://")
		quoted[i] = "<" + t + ">"
	}
	msg.SetGenHeader(mail.HeaderListUnsubscribe, strings.Join(quoted, ", "))
	if oneClick {
		msg.SetGenHeader(mail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	return nil
}

// messageID builds the Message-ID (without angle brackets) for a delivery
// key: "<key>@<sender's domain>", stable across retries and unique per
// delivery. A key that is not a dot-atom (RFC 5322 §3.6.4) is replaced by
// its SHA-256, which is as stable.
func messageID(key, from string) string {
	domain := "herald.invalid"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		domain = from[i+1:]
	}
	if !dotAtom(key) {
		sum := sha256.Sum256([]byte(key))
		key = hex.EncodeToString(sum[:16])
	}
	return key + "@" + domain
}

// dotAtom reports whether s is an RFC 5322 dot-atom-text.
func dotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-/=?^_`{|}~.", c) >= 0) {
			return false
		}
	}
	return true
}

// String describes the Client without its password.
func (c *Client) String() string {
	return fmt.Sprintf("smtp.Client{Host:%q Port:%d TLS:%q Username:%q From:%q}",
		c.cfg.Host, c.cfg.Port, c.cfg.TLS, c.cfg.Username, c.cfg.From)
}

// Format makes every fmt verb print String, so the password the Client
// holds never reaches a log.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// needsSMTPUTF8 reports whether an envelope address is not ASCII (an
// internationalised local part, RFC 6531), which only SMTPUTF8 carries.
func needsSMTPUTF8(addrs ...string) bool {
	for _, a := range addrs {
		for i := 0; i < len(a); i++ {
			if a[i] >= 0x80 {
				return true
			}
		}
	}
	return false
}
