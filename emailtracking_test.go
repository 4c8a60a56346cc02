package herald

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	smtpemu "github.com/heraldhq/herald/emulator/smtp"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/emailtrack"
	"github.com/heraldhq/herald/provider/smtp"
	"github.com/heraldhq/herald/store"
)

// E-mail tracking (issue 35 item 2): the pipeline to the SMTP emulator,
// the tokens' refusals, once per delivery and event, and nothing at all
// for a type that does not opt in.

var testTrackingSecret = []byte("tracking-secret-0123456789abcdef")

const trackedHTML = `<html><body><p>Your order shipped.</p>
<a href="https://shop.example/orders/42?utm=mail&amp;x=1">Track it</a>
<a href="mailto:help@shop.example">Help</a> <a href="/relative">rel</a>
</body></html>`

// newTrackingPipeline is a pipeline whose e-mail goes to an SMTP emulator
// with e-mail tracking configured and two e-mail types: news (tracked)
// and receipt (transactional, not tracked).
func newTrackingPipeline(t *testing.T, mod func(*Config)) (*pipeline, *smtpemu.Emulator) {
	t.Helper()
	se, err := smtpemu.New(smtpemu.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := se.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { se.Close() })
	host, port := se.HostPort()
	mail, err := smtp.New(smtp.Config{Host: host, Port: port, TLS: smtp.TLSNone, From: "Shop <noreply@shop.example>"})
	if err != nil {
		t.Fatal(err)
	}
	email := []heraldtype.Channel{heraldtype.ChannelEmail}
	p := newPipeline(t, func(c *Config) {
		c.Providers["smtp"] = mail
		c.Types = map[string]TypeConfig{"news": {Channels: email, EmailTracking: true},
			"receipt": {Channels: email, Transactional: true}}
		c.EmailTracking = EmailTrackingConfig{Secret: testTrackingSecret, BaseURL: "https://herald.test/", LinkTTL: time.Hour}
		if mod != nil {
			mod(c)
		}
	})
	if _, err := p.client.PutUser(p.ctx, "u1", UserInput{Email: "u1@example.test"}); err != nil {
		t.Fatal(err)
	}
	return p, se
}

// trackedMail sends one e-mail of type typ with trackedHTML and returns
// what the emulator received and the delivery.
func trackedMail(p *pipeline, se *smtpemu.Emulator, typ string) (smtpemu.Received, heraldtype.Delivery) {
	p.t.Helper()
	before := len(se.MessagesTo("u1@example.test"))
	id := p.enqueue(Request{UserID: "u1", Type: typ, Title: "Shipped", Body: "Track it: https://shop.example/orders/42",
		Data: map[string]string{"html": trackedHTML}}).Notifications[0].ID
	p.work()
	got := se.MessagesTo("u1@example.test")
	if len(got) != before+1 {
		p.t.Fatalf("%s: %d mails received, want %d", typ, len(got), before+1)
	}
	return got[len(got)-1], p.only(id)
}

var (
	clickLink = regexp.MustCompile(`href="https://herald\.test/t/c/([A-Za-z0-9_.-]+)"`)
	openPixel = regexp.MustCompile(`<img src="https://herald\.test/t/o/([A-Za-z0-9_.-]+)"`)
)

// TestEmailTrackingRewritesTheSentHTML: the SMTP emulator receives the
// tracked type's HTML with its http(s) link through Herald and a pixel,
// the other links and the text part as written; the untracked type's
// mail is exactly as triggered.
func TestEmailTrackingRewritesTheSentHTML(t *testing.T) {
	t.Parallel()
	p, se := newTrackingPipeline(t, nil)
	m, d := trackedMail(p, se, "news")
	if d.State != heraldtype.StateSent {
		t.Fatalf("delivery %s", d.State)
	}
	links := clickLink.FindAllStringSubmatch(m.HTML, -1)
	if len(links) != 1 || len(openPixel.FindAllString(m.HTML, -1)) != 1 {
		t.Fatalf("%d tracked links, want 1, and one pixel, in\n%s", len(links), m.HTML)
	}
	for _, kept := range []string{`<a href="mailto:help@shop.example">Help</a>`, `<a href="/relative">rel</a>`, "<p>Your order shipped.</p>"} {
		if !strings.Contains(m.HTML, kept) {
			t.Errorf("%q not kept in\n%s", kept, m.HTML)
		}
	}
	if strings.Contains(m.HTML, "shop.example/orders") {
		t.Errorf("the original link is still in the HTML:\n%s", m.HTML)
	}
	if !strings.Contains(m.Text, "Track it: https://shop.example/orders/42") || strings.Contains(m.Text, "/t/c/") {
		t.Errorf("the text part was changed: %q", m.Text)
	}
	// The stored notification is untouched: the copy is the delivery's.
	if n, err := p.client.GetNotification(p.ctx, d.NotificationID); err != nil || n.Data["html"] != trackedHTML {
		t.Errorf("the notification's html changed: %v", err)
	}

	plain, pd := trackedMail(p, se, "receipt")
	if strings.TrimSpace(plain.HTML) != strings.TrimSpace(trackedHTML) {
		t.Errorf("the untracked type's HTML was rewritten:\n%s", plain.HTML)
	}
	if len(pd.Receipts) != 0 {
		t.Errorf("untracked receipts: %+v", pd.Receipts)
	}
}

// TestEmailClickRecordedThenRedirected: a link's token gives back exactly
// the original link, records clicked (the link its action) and opened;
// following it again, or fetching the pixel again, records nothing more.
func TestEmailClickRecordedThenRedirected(t *testing.T) {
	t.Parallel()
	p, se := newTrackingPipeline(t, nil)
	m, d := trackedMail(p, se, "news")
	click := clickLink.FindStringSubmatch(m.HTML)[1]
	open := openPixel.FindStringSubmatch(m.HTML)[1]
	const original = "https://shop.example/orders/42?utm=mail&x=1"
	for range 2 {
		link, err := p.client.EmailClicked(p.ctx, click)
		if err != nil || link != original {
			t.Fatalf("EmailClicked = %q, %v; want %q", link, err, original)
		}
		if err := p.client.EmailOpened(p.ctx, open); err != nil {
			t.Fatalf("EmailOpened: %v", err)
		}
	}
	d = p.only(d.NotificationID)
	var events []string
	for _, r := range d.Receipts {
		events = append(events, string(r.Event)+" "+r.Action)
	}
	if want := []string{"opened ", "clicked " + original}; !slices.Equal(events, want) {
		t.Errorf("receipts %q, want %q", events, want)
	}
	for event, want := range map[string][2]float64{"opened": {1, 3}, "clicked": {1, 1}} {
		rec := counterValue(t, p.client.metrics.Receipts.WithLabelValues(event, "recorded"))
		dup := counterValue(t, p.client.metrics.Receipts.WithLabelValues(event, "duplicate"))
		if rec != want[0] || dup != want[1] {
			t.Errorf("%s: recorded %v, duplicate %v; want %v", event, rec, dup, want)
		}
	}
}

// TestEmailOpenCountedOnce: the pixel fetched five times (image proxies,
// re-reads) is one opened receipt.
func TestEmailOpenCountedOnce(t *testing.T) {
	t.Parallel()
	p, se := newTrackingPipeline(t, nil)
	m, d := trackedMail(p, se, "news")
	open := openPixel.FindStringSubmatch(m.HTML)[1]
	for range 5 {
		p.clock.Advance(time.Minute)
		if err := p.client.EmailOpened(p.ctx, open); err != nil {
			t.Fatal(err)
		}
	}
	d = p.only(d.NotificationID)
	if len(d.Receipts) != 1 || d.Receipts[0].Event != heraldtype.ReceiptOpened {
		t.Fatalf("receipts %+v, want one opened", d.Receipts)
	}
}

// TestEmailTrackingTokenRefusals: a tampered, foreign, wrong-kind or
// expired token records nothing and gives no link; what a request could
// add (another host) has no way in.
func TestEmailTrackingTokenRefusals(t *testing.T) {
	t.Parallel()
	p, se := newTrackingPipeline(t, nil)
	m, d := trackedMail(p, se, "news")
	click := clickLink.FindStringSubmatch(m.HTML)[1]
	open := openPixel.FindStringSubmatch(m.HTML)[1]
	foreign, _ := emailtrack.NewSigner([]byte(strings.Repeat("f", 32)))
	exp := p.clock.Now().Add(time.Hour)
	key := heraldtype.DeliveryKey(d.NotificationID, d.ID)
	tampered := []byte(click)
	tampered[10] = map[bool]byte{true: 'B', false: 'A'}[tampered[10] == 'A'] // a payload character changed
	for _, c := range []struct {
		name, token string
		code        string
	}{
		{"tampered", string(tampered), heraldtype.ENOTFOUND},
		{"another secret, another host", foreign.Token(emailtrack.Claims{Kind: emailtrack.Click, MessageID: key, URL: "https://evil.example/", Expires: exp}), heraldtype.ENOTFOUND},
		{"the pixel's token as a link", open, heraldtype.EINVALID},
		{"a query appended", click + "?url=https://evil.example", heraldtype.EINVALID},
		{"a path appended", click + "/https://evil.example", heraldtype.EINVALID},
		{"empty", "", heraldtype.EINVALID},
	} {
		link, err := p.client.EmailClicked(p.ctx, c.token)
		if heraldtype.ErrorCode(err) != c.code || link != "" {
			t.Errorf("%s: %q, %v; want %s and no link", c.name, link, err, c.code)
		}
	}
	if err := p.client.EmailOpened(p.ctx, click); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("the link's token as a pixel: %v", err)
	}
	p.clock.Advance(time.Hour) // LinkTTL
	link, err := p.client.EmailClicked(p.ctx, click)
	if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND || !strings.Contains(heraldtype.ErrorMessage(err), "expired") || link != "" {
		t.Errorf("expired link: %q, %v", link, err)
	}
	if err := p.client.EmailOpened(p.ctx, open); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Errorf("expired pixel: %v", err)
	}
	if d = p.only(d.NotificationID); len(d.Receipts) != 0 {
		t.Errorf("refused tokens recorded %+v", d.Receipts)
	}
}

// TestEmailTrackingOffWritesNothing: without a secret nothing is
// rewritten, a type cannot turn tracking on (API or configuration), and
// the routes' calls are not_found.
func TestEmailTrackingOffWritesNothing(t *testing.T) {
	t.Parallel()
	p, se := newMailPipeline(t)
	if _, err := p.client.PutType(p.ctx, "news", TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelEmail}, EmailTracking: true}); heraldtype.ErrorCode(err) != heraldtype.EINVALID ||
		!strings.Contains(err.Error(), "tracking") {
		t.Fatalf("PutType with tracking and no secret: %v", err)
	}
	if _, err := NewClient(Config{Store: p.store, Types: map[string]TypeConfig{"news": {EmailTracking: true}}}); err == nil ||
		!strings.Contains(err.Error(), "email_tracking") {
		t.Fatalf("a configured type with tracking and no secret: %v", err)
	}
	id := p.enqueue(Request{UserID: "u1", Type: "promo", Title: "Hi", Body: "b", Data: map[string]string{"html": trackedHTML}}).Notifications[0].ID
	p.work()
	got := se.MessagesTo("u1@example.test")
	if len(got) != 1 || strings.Contains(got[0].HTML, "/t/") {
		t.Fatalf("mails %+v", got)
	}
	if d := p.only(id); len(d.Receipts) != 0 {
		t.Fatalf("receipts %+v", d.Receipts)
	}
	if _, err := p.client.EmailClicked(p.ctx, "t1.a.b"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Errorf("EmailClicked without tracking: %v", err)
	}
}

// failingReceipts is a store whose receipts cannot be written.
type failingReceipts struct{ store.Store }

func (failingReceipts) RecordReceipts(context.Context, []store.Receipt) ([]heraldtype.ReceiptResult, error) {
	return nil, errors.New("the database is gone")
}

// TestEmailClickRedirectsWhenRecordingFails: a good token still gives its
// link (and the pixel no error) when the receipt cannot be written.
func TestEmailClickRedirectsWhenRecordingFails(t *testing.T) {
	t.Parallel()
	p, _ := newTrackingPipeline(t, nil)
	c, err := NewClient(Config{Store: failingReceipts{p.store}, DisableWorkers: true,
		EmailTracking: EmailTrackingConfig{Secret: testTrackingSecret, BaseURL: "https://herald.test"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := emailtrack.NewSigner(testTrackingSecret)
	exp := time.Now().Add(time.Hour)
	link, err := c.EmailClicked(p.ctx, s.Token(emailtrack.Claims{Kind: emailtrack.Click, MessageID: "n1.1", URL: "https://shop.example/x", Expires: exp}))
	if err != nil || link != "https://shop.example/x" {
		t.Fatalf("EmailClicked = %q, %v", link, err)
	}
	if err := c.EmailOpened(p.ctx, s.Token(emailtrack.Claims{Kind: emailtrack.Open, MessageID: "n1.1", Expires: exp})); err != nil {
		t.Fatalf("EmailOpened = %v", err)
	}
}

func TestEmailTrackingConfigRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []EmailTrackingConfig{
		{Secret: []byte("short"), BaseURL: "https://h.example"},
		{Secret: testTrackingSecret},
		{Secret: testTrackingSecret, BaseURL: "ftp://h.example"},
		{Secret: testTrackingSecret, BaseURL: "https://h.example?x=1"},
		{Secret: testTrackingSecret, BaseURL: "https://h.example", LinkTTL: time.Second},
	} {
		if _, err := newEmailTracker(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
