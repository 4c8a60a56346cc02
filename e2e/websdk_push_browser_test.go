package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/browsertest"
)

// stubPushManager replaces the browser's PushManager, which would contact
// a real push service, with one that subscribes at the Web Push emulator
// (through the app's origin) with the applicationServerKey it is given.
const stubPushManager = `(() => {
  let current = null;
  const b64url = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  PushManager.prototype.getSubscription = async function () { return current; };
  PushManager.prototype.subscribe = async function (opts) {
    const key = b64url(opts.applicationServerKey);
    const r = await fetch("/push-service/subscriptions", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({applicationServerKey: key})});
    const j = await r.json();
    window.__subscribedWith = key;
    current = {endpoint: j.endpoint, options: {userVisibleOnly: true, applicationServerKey: opts.applicationServerKey},
      toJSON: () => j, unsubscribe: async () => { current = null; return true; }};
    return current;
  };
  window.__dropSubscription = () => { current = null; };
  return true;
})()`

// TestWebSDKWebPush: registerWebPush subscribes with Herald's VAPID key and
// registers the subscription as the user's web device; a push Herald sends
// reaches the emulator; handed to the service worker it is shown once
// (tagged with its messageId, a repeat dropped), a click reports the
// opened receipt to Herald, and a subscription the browser replaced is
// registered again when the worker says so (issue 38 items 3 and 4).
func TestWebSDKWebPush(t *testing.T) {
	b := browsertest.Start(t)
	s := startSDKServer(t)
	ctx := t.Context()
	const user = "wes"
	if _, err := s.api.PutUser(ctx, user, heraldclient.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	p := b.NewPage(t)
	grantNotifications(t, p, s.app.URL)
	p.Navigate(t, s.app.URL+"/inbox?user="+user)
	waitInbox(t, p, "the page")
	browsertest.Eval[bool](t, p, stubPushManager)
	sdk, err := s.api.SDKIntegrity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	register := `(async () => {
  const m = await import(` + strconv.Quote(s.herald+sdk.Files[0].Path) + `);
  const d = await m.registerWebPush({serviceWorker: "/sw.js", server: ` + strconv.Quote(s.herald) + `,
    getToken: async () => { window.__pushTokens = (window.__pushTokens || 0) + 1; return (await fetch("/token?user=` + user + `")).text(); }});
  return d.device_id;
})()`
	deviceID := browsertest.Eval[string](t, p, register)

	// The subscription used Herald's key and is the user's web device.
	key, err := s.api.VAPIDPublicKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := browsertest.Eval[string](t, p, `window.__subscribedWith`); got != key {
		t.Fatalf("subscribed with %q, Herald's key is %q", got, key)
	}
	endpoint := webDevice(t, s, user, deviceID)

	// A push reaches the emulator, which decrypts it as the browser would.
	res, err := s.api.Trigger(ctx, heraldclient.TriggerRequest{UserID: user, Type: "order_shipped", Title: "Your order shipped",
		Body: "It arrives tomorrow", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	var payload json.RawMessage
	waitServer(t, "the push at the emulator", func() bool {
		if m := s.em.MessagesTo(endpoint); len(m) > 0 {
			payload = m[0].Payload
			return true
		}
		return false
	})
	var pl struct{ MessageID string }
	if err := json.Unmarshal(payload, &pl); err != nil || pl.MessageID == "" {
		t.Fatalf("the payload %s has no messageId: %v", payload, err)
	}

	// The worker shows it once, tagged with its messageId.
	// toWorker hands the worker a test message and waits until it did it.
	toWorker := func(msg string) {
		t.Helper()
		browsertest.Eval[bool](t, p, `navigator.serviceWorker.getRegistration("/").then((r) => new Promise((done) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => done(true);
  r.active.postMessage(`+msg+`, [ch.port2]);
}))`)
	}
	shown := `navigator.serviceWorker.getRegistration("/").then((r) => r.getNotifications()).then((ns) => ns.map((n) => n.tag + "|" + n.title))`
	toWorker(`{test: "push", payload: ` + string(payload) + `}`)
	p.WaitFor(t, "the notification shown", `(async () => { const s = await `+shown+`; return s.length === 1 && s[0] === `+
		strconv.Quote(pl.MessageID+"|Your order shipped")+`; })()`, sdkWithin)

	// A click reports opened to Herald and closes it; the same push again
	// (a push service may deliver twice) is not shown again.
	toWorker(`{test: "click", tag: ` + strconv.Quote(pl.MessageID) + `}`)
	waitServer(t, "the opened receipt", func() bool {
		n, err := s.api.GetNotification(ctx, res.Notifications[0].ID)
		if err != nil {
			return false
		}
		for _, d := range n.Deliveries {
			for _, r := range d.Receipts {
				if r.Event == heraldtype.ReceiptOpened {
					return true
				}
			}
		}
		return false
	})
	toWorker(`{test: "push", payload: ` + string(payload) + `}`)
	if got := browsertest.Eval[[]string](t, p, shown); len(got) != 0 {
		t.Fatalf("the repeated push was shown again: %v", got)
	}

	// The worker holds a token that expired: a click on a second push's
	// button is refused by Herald, the worker asks the page, the page's
	// callback gives a new token and the receipt, clicked with the
	// button's action, is recorded.
	res2, err := s.api.Trigger(ctx, heraldclient.TriggerRequest{UserID: user, Type: "order_shipped", Title: "Your order arrived",
		Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	waitServer(t, "the second push at the emulator", func() bool {
		if m := s.em.MessagesTo(endpoint); len(m) > 1 {
			payload = m[1].Payload
			return true
		}
		return false
	})
	if err := json.Unmarshal(payload, &pl); err != nil || pl.MessageID == "" {
		t.Fatalf("the payload %s has no messageId: %v", payload, err)
	}
	toWorker(`{test: "push", payload: ` + string(payload) + `}`)
	expired := s.token(t, user, -time.Minute)
	toWorker(`{test: "config", config: {server: ` + strconv.Quote(s.herald) + `, token: ` + strconv.Quote(expired) + `}}`)
	calls := browsertest.Eval[int](t, p, `window.__pushTokens`)
	toWorker(`{test: "click", tag: ` + strconv.Quote(pl.MessageID) + `, action: "track"}`)
	waitServer(t, "the clicked receipt after the token was refreshed", func() bool {
		n, err := s.api.GetNotification(ctx, res2.Notifications[0].ID)
		if err != nil {
			return false
		}
		for _, d := range n.Deliveries {
			for _, r := range d.Receipts {
				if r.Event == heraldtype.ReceiptClicked && r.Action == "track" {
					return true
				}
			}
		}
		return false
	})
	if got := browsertest.Eval[int](t, p, `window.__pushTokens`); got <= calls {
		t.Errorf("the page's callback was not asked for a new token (%d calls before, %d after)", calls, got)
	}

	// The browser replaces the subscription; the worker tells the page,
	// which registers the new one for the same device.
	browsertest.Eval[bool](t, p, `window.__dropSubscription() || true`)
	toWorker(`{test: "subscription-changed"}`)
	waitServer(t, "the new subscription registered", func() bool {
		devs, err := s.api.ListDevices(ctx, user)
		if err != nil {
			return false
		}
		for _, d := range devs {
			if d.ID == deviceID && d.Token != endpoint {
				return true
			}
		}
		return false
	})
}

// webDevice returns the endpoint of the user's web device deviceID.
func webDevice(t *testing.T, s *sdkServer, user, deviceID string) string {
	t.Helper()
	devs, err := s.api.ListDevices(t.Context(), user)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.ID == deviceID && d.Platform == heraldtype.PlatformWeb && d.Token != "" {
			return d.Token
		}
	}
	t.Fatalf("no web device %s among %+v", deviceID, devs)
	return ""
}

// grantNotifications lets origin show notifications in the page's browser
// context, as a person answering the permission prompt would.
func grantNotifications(t *testing.T, p *browsertest.Page, origin string) {
	t.Helper()
	c := chromedp.FromContext(p.Context())
	if _, err := cdp.Call(p.Context(), c.Browser, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted,
		Origin: origin, BrowserContextID: c.BrowserContextID}); err != nil {
		t.Fatalf("grant notifications: %v", err)
	}
}
