package cli

import (
	"context"
	"io"
	"log/slog"
	"time"

	webhookemu "github.com/heraldhq/herald/emulator/webhook"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/store"
)

// devWebhookID is the endpoint serve --dev registers for its webhook
// receiver emulator (issue 35 item 6).
const devWebhookID = "wh_dev"

// devWebhookPath is the emulator path the dev endpoint posts to.
const devWebhookPath = "/hooks/dev"

// startDevWebhook starts the webhook receiver emulator on dev.webhook_addr
// with a fresh secret, and points the endpoint wh_dev at it, subscribed to
// every event type and enabled, signing with that secret: a newcomer sees
// each event arrive, its signature checked, at the emulator's
// /emulator/messages. The endpoint is kept across restarts of a dev
// database; each start gives it the new secret with no overlap.
func (c *Config) startDevWebhook(ctx context.Context, st store.Store, log *slog.Logger) (io.Closer, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return nil, err
	}
	em, err := webhookemu.New(webhookemu.Config{Secrets: []string{secret}, Logger: emulatorLog(log, "webhook")})
	if err != nil {
		return nil, err
	}
	if _, err := em.Start(c.Dev.WebhookAddr); err != nil {
		return nil, listenError("the webhook receiver emulator", c.Dev.WebhookAddr, "dev.webhook_addr", "", err)
	}
	url := em.URL() + devWebhookPath
	now := time.Now().UTC()
	_, err = st.GetWebhookEndpoint(ctx, devWebhookID)
	switch heraldtype.ErrorCode(err) {
	case "":
		on, all := true, []string{}
		if _, err = st.UpdateWebhookEndpoint(ctx, devWebhookID, store.WebhookEndpointUpdate{URL: &url, Events: &all, Enabled: &on}, now); err == nil {
			_, err = st.RotateWebhookSecret(ctx, devWebhookID, secret, now, now)
		}
	case heraldtype.ENOTFOUND:
		err = st.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{WebhookEndpoint: heraldtype.WebhookEndpoint{ID: devWebhookID,
			URL: url, Description: "serve --dev's webhook receiver emulator", Events: []string{}, Enabled: true,
			CreatedAt: now, UpdatedAt: now}, Secret: secret})
	}
	if err != nil {
		em.Close()
		return nil, err
	}
	announceEmulator(log, "webhook", em.URL(), em.URL(), "endpoint", devWebhookID, "endpoint_url", url)
	return em, nil
}
