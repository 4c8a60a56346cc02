package herald

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 35 item 4, end to end on the Client: an endpoint registered with
// CreateWebhook (its URL checked by the guard), a notification sent, and
// its delivery.finished event at the receiver emulator, which verifies
// the signature with the secret CreateWebhook returned; after a rotation
// the receiver holding only the new secret accepts too.
func TestWebhookDeliveryFinishedEndToEnd(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Callout.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	// Without the allow-list, a loopback URL is refused at registration.
	bare, err := NewClient(Config{Store: p.store, DisableWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.CreateWebhook(p.ctx, heraldtype.WebhookEndpointInput{URL: "http://127.0.0.1:9/hook"}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("a loopback URL without callout.allow: %v", err)
	}

	var recv *webhookemu.Emulator
	start := func(secret string) {
		var err error
		if recv, err = webhookemu.New(webhookemu.Config{Secrets: []string{secret}, Now: p.clock.Now}); err != nil {
			t.Fatal(err)
		}
		if _, err := recv.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { recv.Close() })
	}
	// The receiver needs the secret CreateWebhook returns, and the
	// endpoint the receiver's URL: register, then point it at the receiver.
	ep, err := p.client.CreateWebhook(p.ctx, heraldtype.WebhookEndpointInput{URL: "https://example.com/placeholder",
		Events: []string{heraldtype.WebhookDeliveryFinished}})
	if err != nil {
		t.Fatal(err)
	}
	start(ep.Secret)
	url := recv.URL() + "/hooks/crm"
	if _, err := p.client.UpdateWebhook(p.ctx, ep.ID, heraldtype.WebhookEndpointUpdate{URL: &url}); err != nil {
		t.Fatal(err)
	}

	p.device("u1", "d1", "tok-1")
	n := p.enqueue(Request{UserID: "u1"}).Notifications[0]
	p.work()
	if _, err := p.client.webhooks.RunOnce(p.ctx); err != nil {
		t.Fatal(err)
	}
	got := recv.Messages()
	if len(got) != 1 || !got[0].Verified || got[0].Type != heraldtype.WebhookDeliveryFinished || got[0].Status != 204 {
		t.Fatalf("received %+v", got)
	}
	var body struct {
		Data struct {
			NotificationID string `json:"notification_id"`
			State          string `json:"state"`
			UserID         string `json:"user_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil || body.Data.NotificationID != n.ID || body.Data.State != "sent" ||
		body.Data.UserID != "u1" {
		t.Fatalf("body %s: %+v, %v", got[0].Body, body, err)
	}
	if !strings.HasPrefix(got[0].ID, "evt_d") {
		t.Fatalf("event id %q", got[0].ID)
	}
	if v := counterValue(t, p.client.metrics.WebhookMessages.WithLabelValues(heraldtype.WebhookDeliveryFinished, "sent")); v != 1 {
		t.Fatalf("herald_webhook_messages_total{type=delivery.finished,outcome=sent} = %v, want 1", v)
	}

	// Rotated: a receiver holding only the new secret accepts the next one.
	rotated, err := p.client.RotateWebhookSecret(p.ctx, ep.ID)
	if err != nil || rotated.Secret == ep.Secret || rotated.PreviousSecretUntil == nil {
		t.Fatalf("RotateWebhookSecret = %+v, %v", rotated, err)
	}
	start(rotated.Secret)
	url = recv.URL() + "/hooks/crm"
	if _, err := p.client.UpdateWebhook(p.ctx, ep.ID, heraldtype.WebhookEndpointUpdate{URL: &url}); err != nil {
		t.Fatal(err)
	}
	p.enqueue(Request{UserID: "u1"})
	p.work()
	if _, err := p.client.webhooks.RunOnce(p.ctx); err != nil {
		t.Fatal(err)
	}
	if got := recv.Messages(); len(got) != 1 || !got[0].Verified {
		t.Fatalf("with the new secret only: %+v", got)
	}
}
