package heraldclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 35 item 4: every webhook method against a real server, each
// exchange checked against the contract.
func TestWebhooks(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.CreateWebhook(ctx, heraldtype.WebhookEndpointInput{URL: "http://localhost/hook"}); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Fatalf("a localhost URL: %v", err)
	}
	ep, err := c.CreateWebhook(ctx, heraldtype.WebhookEndpointInput{URL: "https://example.com/hook", Description: "crm"})
	if err != nil || !strings.HasPrefix(ep.Secret, "whsec_") || !ep.Enabled {
		t.Fatalf("CreateWebhook: %+v, %v", ep, err)
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != ep.ID {
		t.Fatalf("ListWebhooks: %+v, %v", list, err)
	}
	off := false
	got, err := c.UpdateWebhook(ctx, ep.ID, heraldtype.WebhookEndpointUpdate{Enabled: &off})
	if err != nil || got.Enabled || got.Description != "crm" {
		t.Fatalf("UpdateWebhook: %+v, %v", got, err)
	}
	if got, err = c.GetWebhook(ctx, ep.ID); err != nil || got.Enabled {
		t.Fatalf("GetWebhook: %+v, %v", got, err)
	}
	rotated, err := c.RotateWebhookSecret(ctx, ep.ID)
	if err != nil || rotated.Secret == ep.Secret || rotated.PreviousSecretUntil == nil {
		t.Fatalf("RotateWebhookSecret: %+v, %v", rotated, err)
	}
	page, err := c.ListWebhookMessages(ctx, ep.ID, heraldtype.WebhookMessageFilter{State: heraldtype.WebhookDead})
	if err != nil || len(page.Messages) != 0 {
		t.Fatalf("ListWebhookMessages: %+v, %v", page, err)
	}
	for _, err := range c.WebhookMessages(ctx, ep.ID, heraldtype.WebhookMessageFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if r, err := c.ReplayWebhookMessages(ctx, ep.ID, nil); err != nil || r.Replayed != 0 {
		t.Fatalf("ReplayWebhookMessages: %+v, %v", r, err)
	}
	// The test probe of an endpoint that does not exist (httpapi's
	// TestWebhookTestRoute sends real ones).
	if _, err := c.TestWebhook(ctx, "wh_nope"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Fatalf("TestWebhook of no endpoint: %v", err)
	}
	if err := c.DeleteWebhook(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetWebhook(ctx, ep.ID); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Fatalf("GetWebhook after delete: %v", err)
	}
}
