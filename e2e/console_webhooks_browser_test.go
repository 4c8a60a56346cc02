package e2e

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/browsertest"
)

// TestConsoleWebhooksInABrowser drives the console's webhook views in
// headless Chromium against a real `herald serve` (issue 35 item 4): an
// endpoint that fails until its messages die shows them on its dead
// letter list; the operator heals it, sends it a test event, replays the
// dead letter (sent, with its event id), rotates its secret (shown once)
// and disables it; a read-only session sees none of the buttons. Both
// views pass axe-core, the keyboard walk and 390 px.
func TestConsoleWebhooksInABrowser(t *testing.T) {
	b := browsertest.Start(t)
	// The receiver answers status; a message fails for a second and is
	// dead.
	var status atomic.Int32
	status.Store(http.StatusInternalServerError)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
	}))
	defer recv.Close()
	s := startConsoleServer(t, "HERALD_CALLOUT__ALLOW=127.0.0.0/8", "HERALD_WEBHOOKS__RETRY_BASE=100ms",
		"HERALD_WEBHOOKS__RETRY_MAX_DELAY=200ms", "HERALD_WEBHOOKS__RETRY_FOR=1s", "HERALD_WEBHOOKS__POLL_INTERVAL=100ms")
	ctx := t.Context()
	base := s.in.api + "/console"

	ep, err := s.api.CreateWebhook(ctx, heraldtype.WebhookEndpointInput{URL: recv.URL + "/hooks", Description: "CRM"})
	if err != nil {
		t.Fatal(err)
	}
	const typ = "order_shipped"
	if _, err := s.api.PutType(ctx, typ, heraldclient.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.api.PutUser(ctx, "ana", heraldclient.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.api.RegisterDevice(ctx, "ana", heraldclient.DeviceInput{DeviceID: "phone", Token: "tok-ana", Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.api.Trigger(ctx, heraldclient.TriggerRequest{UserID: "ana", Type: typ, Title: "Shipped"}); err != nil {
		t.Fatal(err)
	}
	dead := waitWebhookMessage(t, s, ep.ID, heraldtype.WebhookDead)

	admin := b.NewPage(t)
	admin.Navigate(t, base+"/webhooks")
	signIn(t, admin, s.adminKey)
	admin.WaitFor(t, "the webhooks list after signing in", `location.pathname === "/console/webhooks"`, 10*time.Second)
	view(t, admin, "webhooks", base+"/webhooks", func(t *testing.T) {
		admin.WaitFor(t, "the endpoint's row", `document.querySelector('#webhooks tr[data-endpoint="`+ep.ID+`"] a')`, 10*time.Second)
		admin.Load(t, "open the endpoint", chromedp.Click(chromedp.CSS(`#webhooks tr[data-endpoint="`+ep.ID+`"] a`)))
		admin.WaitFor(t, "the dead letter on the endpoint's page",
			`document.querySelector('#dead-messages tr[data-seq="`+strconv.FormatInt(dead.Seq, 10)+`"]')`, 10*time.Second)
		admin.Navigate(t, base+"/webhooks")
	})

	page := base + "/webhooks/" + ep.ID
	var replayForm postedForm
	view(t, admin, "webhook", page, func(t *testing.T) {
		replayForm = readForm(t, admin, `#dead-messages tr[data-seq="`+strconv.FormatInt(dead.Seq, 10)+`"] form.replay`)
		// Healed, the endpoint answers the test event.
		status.Store(http.StatusNoContent)
		admin.Load(t, "send a test event", chromedp.Click(chromedp.ID("test-endpoint")))
		admin.WaitFor(t, "the test's answer", `document.querySelector('#test-result[data-ok="true"][data-status="204"]')`, 20*time.Second)
		// Replay the dead letter: it is sent with its event id.
		admin.Load(t, "replay the dead letter", submitOf(`#dead-messages tr[data-seq="`+strconv.FormatInt(dead.Seq, 10)+`"] form.replay`))
		admin.WaitFor(t, "the replay's result", `document.querySelector('#replay-result[data-replayed="1"]')`, 10*time.Second)
		sent := waitWebhookMessage(t, s, ep.ID, heraldtype.WebhookSent)
		if sent.EventID != dead.EventID {
			t.Errorf("the replay sent %s, want the dead letter's %s", sent.EventID, dead.EventID)
		}
		// Rotation shows the new secret once.
		admin.Load(t, "rotate the secret", chromedp.Click(chromedp.ID("rotate-secret")))
		admin.WaitFor(t, "the new secret", `document.querySelector("#secret-value")?.textContent.startsWith("whsec_")`, 10*time.Second)
		admin.Navigate(t, page)
		if browsertest.Eval[bool](t, admin, `document.body.innerText.includes("whsec_")`) {
			t.Error("the endpoint's page shows a secret after the rotation's answer")
		}
		// Disable it: the page says so and offers to enable it.
		admin.Load(t, "disable the endpoint", chromedp.Click(chromedp.ID("toggle-endpoint")))
		admin.WaitFor(t, "the endpoint disabled", `document.querySelector('#endpoint[data-enabled="false"]') &&
			document.querySelector("#toggle-endpoint").textContent === "Enable"`, 10*time.Second)
	})
	if got, err := s.api.GetWebhook(ctx, ep.ID); err != nil || got.Enabled {
		t.Fatalf("after disabling in the console: %+v, %v", got, err)
	}

	t.Run("read-only session", func(t *testing.T) {
		if s.noConsoleKey != "" {
			t.Skipf("no console-scope key: %s", s.noConsoleKey)
		}
		reader := b.NewPage(t)
		reader.Navigate(t, page)
		signIn(t, reader, s.consoleKey)
		reader.WaitFor(t, "the endpoint's page after signing in", `location.pathname === "/console/webhooks/`+ep.ID+`"`, 10*time.Second)
		if browsertest.Eval[bool](t, reader, `!!document.querySelector("#test-endpoint, #toggle-endpoint, #rotate-secret, #replay-all, form.replay")`) {
			t.Error("a console-scope session is shown webhook actions")
		}
		if replayForm.Action == "" {
			t.Skip("no replay form was seen to post")
		}
		if got := postForm(t, reader, replayForm, true); got.Status != 403 || got.Code != "permission_denied" {
			t.Errorf("a console-scope session's replay: %d %q, want 403 permission_denied", got.Status, got.Code)
		}
	})
}

// waitWebhookMessage waits for a message of the endpoint in state.
func waitWebhookMessage(t *testing.T, s *consoleServer, endpoint string, state heraldtype.WebhookMessageState) heraldtype.WebhookMessage {
	t.Helper()
	deadline := time.Now().Add(liveWithin)
	for {
		page, err := s.api.ListWebhookMessages(t.Context(), endpoint, heraldtype.WebhookMessageFilter{State: state})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Messages) > 0 {
			return page.Messages[0]
		}
		if time.Now().After(deadline) {
			all, _ := s.api.ListWebhookMessages(t.Context(), endpoint, heraldtype.WebhookMessageFilter{})
			t.Fatalf("no %s message of %s within %v: %+v", state, endpoint, liveWithin, all.Messages)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
