package console_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/websdk"
)

// seeded is what seed wrote: a user with a device, a push notification
// the failing provider refused (dead), and an in-app one in the inbox.
type seeded struct {
	user, device, dead, inApp string
}

// seed writes real records through the Client, with the workers running
// so the push delivery is attempted and refused.
func seed(t *testing.T, e *env) seeded {
	t.Helper()
	ctx := context.Background()
	s := seeded{user: "u-1", device: "dev-1"}
	// The type counts toward the daily cap, so the user page's cap use
	// shows the push notification (a dead delivery passed the policy).
	counts := true
	if _, err := e.client.PutType(ctx, "order_shipped", herald.TypeConfig{CountsTowardCap: &counts}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PutUser(ctx, s.user, herald.UserInput{Timezone: "Europe/Paris", Email: "u1@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.RegisterDevice(ctx, s.user, herald.DeviceInput{DeviceID: s.device, Token: strings.Repeat("t", 40), Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	res, err := e.client.Enqueue(ctx, herald.Request{UserID: s.user, Type: "order_shipped", Title: "Shipped", Body: "Your order is on its way", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	s.dead = res.Notifications[0].ID
	res, err = e.client.Enqueue(ctx, herald.Request{UserID: s.user, Type: "news", Title: "Hello inbox", Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
	if err != nil {
		t.Fatal(err)
	}
	s.inApp = res.Notifications[0].ID
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := e.client.GetNotification(ctx, s.dead)
		if err != nil {
			t.Fatal(err)
		}
		if n.Status == heraldtype.HistoryStatus("FAILED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the push notification is still %s", n.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// has fails unless the page contains every string.
func (p page) has(t *testing.T, want ...string) page {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("the page lacks %s:\n%s", w, p.body)
		}
	}
	return p
}

// lacks fails if the page contains any of the strings.
func (p page) lacks(t *testing.T, unwanted ...string) page {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(p.body, w) {
			t.Errorf("the page has %s", w)
		}
	}
	return p
}

// TestNotificationPage: the timeline shows the trigger, the enqueue and
// the attempt with the provider's answer, device and latency; the
// history lists it and filters by the query string.
func TestNotificationPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	s := seed(t, e)
	// The app's receipt is on the timeline too (issue 35 item 1).
	n, err := e.client.GetNotification(context.Background(), s.dead)
	if err != nil || len(n.Deliveries) != 1 {
		t.Fatalf("GetNotification: %+v, %v", n, err)
	}
	key := heraldtype.DeliveryKey(s.dead, n.Deliveries[0].ID)
	if res, err := e.client.RecordReceipts(context.Background(), []heraldtype.Receipt{{MessageID: key, Event: heraldtype.ReceiptClicked, Action: "track"}}); err != nil || res.Recorded != 1 {
		t.Fatalf("RecordReceipts: %+v, %v", res, err)
	}
	p := e.get("/console/notifications/"+s.dead).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `<ol id="timeline"`, `data-kind="trigger"`, `data-kind="enqueued"`, `data-kind="attempt"`,
		`<code class="provider-code">BAD_TOKEN</code>`, `data-device-id="`+s.device+`"`, `class="latency"`, `data-status="FAILED"`,
		`data-kind="receipt"`, `<code class="receipt-event">clicked</code> · action <code>track</code>`)
	list := e.get("/console/notifications?user="+s.user+"&status=FAILED").expect(t, 200)
	wellFormed(t, list.body)
	list.has(t, `data-notification-id="`+s.dead+`"`).lacks(t, `data-notification-id="`+s.inApp+`"`)
	bad := e.get("/console/notifications?status=LOST").expect(t, 400)
	bad.has(t, `id="form-error"`, `data-code="invalid_argument"`)
	if r := e.get("/console/notifications?id="+s.dead).expect(t, 303); r.header.Get("Location") != "/console/notifications/"+s.dead {
		t.Fatalf("lookup went to %q", r.header.Get("Location"))
	}
	e.get("/console/notifications/nope").expect(t, 404).has(t, `data-code="not_found"`)
}

// TestNotificationsStatusScan: a status filter's page examines at most
// Limits.HistoryScan notifications (issue 34 item 3). A page the bound
// stopped says how many it examined and that older ones may match, with
// the link to them — not "no notification matches" — and the links reach
// every match.
func TestNotificationsStatusScan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, historyScan: 4})
	ctx := context.Background()
	for _, u := range []string{"no-device", "inbox"} {
		if _, err := e.client.PutUser(ctx, u, herald.UserInput{Timezone: "UTC"}); err != nil {
			t.Fatal(err)
		}
	}
	enqueue := func(user string, ch heraldtype.Channel) string {
		t.Helper()
		res, err := e.client.Enqueue(ctx, herald.Request{UserID: user, Type: "news", Title: "Hi", Channels: []heraldtype.Channel{ch}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // one created_at each, in order
		return res.Notifications[0].ID
	}
	var failed []string // oldest first: a push to a user without a device fails at once
	for range 3 {
		failed = append(failed, enqueue("no-device", heraldtype.ChannelPush))
	}
	for range 6 {
		enqueue("inbox", heraldtype.ChannelInApp) // sent at once
	}
	next := func(p page) string {
		t.Helper()
		m := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(p.body)
		if m == nil {
			return ""
		}
		return strings.ReplaceAll(m[1], "&amp;", "&")
	}
	// The four newest are in-app: nothing FAILED among them.
	first := e.get("/console/notifications?status=failed").expect(t, 200)
	wellFormed(t, first.body)
	first.has(t, `No FAILED notification among the 4 most recent notifications.`, `<p id="history-scan" data-scanned="4">`,
		`none of them is FAILED. Older notifications may match: <a href="/console/notifications?cursor=`).
		lacks(t, `No notification matches.`, `data-notification-id=`)
	// The next four: two in-app, then the two newest failed ones.
	second := e.get(next(first)).expect(t, 200)
	second.has(t, `data-notification-id="`+failed[2]+`"`, `data-notification-id="`+failed[1]+`"`,
		`2 of the next older 4 are FAILED.`).lacks(t, `data-notification-id="`+failed[0]+`"`)
	// The last: the oldest failed one, and no more pages.
	last := e.get(next(second)).expect(t, 200)
	last.has(t, `data-notification-id="`+failed[0]+`"`).lacks(t, `id="history-scan"`, `rel="next"`, `data-notification-id="`+failed[1]+`"`)
	// Without a status nothing is examined past the page: no such note.
	e.get("/console/notifications").expect(t, 200).lacks(t, `id="history-scan"`)
	// A status nothing has, within the bound: the usual answer.
	e.get("/console/notifications?status=SENT&user=no-device").expect(t, 200).has(t, `No notification matches.`)
}

// TestWhyPage: the answer's verdict, sentence and reasons, with links to
// the notification and device; a question without a type names the
// field.
func TestWhyPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	s := seed(t, e)
	e.get("/console/why").expect(t, 200).has(t, `<form id="why-form" method="get"`).lacks(t, `id="why-answer"`)
	p := e.get("/console/why?user="+s.user+"&type=order_shipped").expect(t, 200)
	wellFormed(t, p.body)
	wellFormed(t, e.get("/console/why?user="+s.user+"&rule=nope&run=r1").expect(t, 404).body)
	e.get("/console/why?user="+s.user+"&rule=nope").expect(t, 400).has(t, `<p class="field-error" id="error-rule_run">`)
	p.has(t, `<section id="why-answer" data-code="provider_failure"`, `id="why-reasons"`, `href="/console/notifications/`+s.dead+`"`, `BAD_TOKEN`)
	p = e.get("/console/why?user="+s.user+"&notification="+s.dead).expect(t, 200)
	p.has(t, `data-code="provider_failure"`)
	bad := e.get("/console/why?user="+s.user).expect(t, 400)
	wellFormed(t, bad.body)
	bad.has(t, `<p class="field-error" id="error-type">`, `data-code="invalid_argument"`)
}

// TestUserPage: devices, preferences, cap usage, reminders, inbox and the
// last notifications from real records; the preferences save with
// POST-redirect-GET and a refused value is named beside its field.
func TestUserPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	s := seed(t, e)
	if r := e.get("/console/users?id="+s.user).expect(t, 303); r.header.Get("Location") != "/console/users/"+s.user {
		t.Fatalf("search went to %q", r.header.Get("Location"))
	}
	wellFormed(t, e.get("/console/users").expect(t, 200).body)
	// The inbox item clicked: seen, read and clicked, not archived (issue
	// 35 item 1's read-state, shown in full).
	inbox, err := e.client.ListInbox(context.Background(), s.user, herald.InboxFilter{Limit: 10})
	if err != nil || len(inbox.Items) != 1 {
		t.Fatalf("inbox = %+v, %v", inbox, err)
	}
	if err := e.client.ClickInboxItem(context.Background(), s.user, inbox.Items[0].ID, "open"); err != nil {
		t.Fatal(err)
	}
	p := e.get("/console/users/"+s.user).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `<td data-state="archived">–</td>`).lacks(t, `<td data-state="seen">not seen</td>`, `<td data-state="read">unread</td>`, `<td data-state="clicked">–</td>`)
	p.has(t, `<table id="devices">`, `data-device-id="`+s.device+`"`, `<form id="preferences-form" method="post"`,
		`<p id="cap-usage" data-used="1" data-limit="10">`, `<a href="/console/notifications/`+s.dead+`">`, `<table id="upcoming-reminders">`, `<table id="inbox">`, `Hello inbox`,
		`<table id="recent-notifications">`, `data-notification-id="`+s.dead+`"`, `id="preferences-save"`,
		`<input type="hidden" name="type" value="order_shipped">`)
	// The web SDK's snippet for this user, pinned with the integrity hash
	// the server publishes (issue 38).
	js := websdk.Files()[0]
	p.has(t, `<pre tabindex="0" aria-labelledby="embed-heading" id="embed-snippet">`, js.Path, strings.ReplaceAll(js.Integrity, "+", "&#43;"),
		`user=&#34;`+s.user+`&#34;&gt;&lt;/herald-inbox&gt;`)
	e.get("/console/users/nobody").expect(t, 404)

	form := url.Values{"csrf": {p.csrf(t)}, "daily_cap": {"7"}, "quiet_start": {"22:00"}, "quiet_end": {"07:00"},
		"opted_out": {"sms"}, "new_type": {"promo"}, "new_off": {"1"}}
	r := e.post("/console/users/"+s.user+"/preferences", form).expect(t, 303)
	if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "/console/users/"+s.user+"?saved=preferences") {
		t.Fatalf("after saving: %q", loc)
	}
	got, err := e.client.GetPreferences(context.Background(), s.user)
	if err != nil {
		t.Fatal(err)
	}
	if got.DailyCap != 7 || got.QuietHours == nil || got.QuietHours.Start != "22:00" || !got.Types["promo"].Disabled || len(got.OptedOutChannels) != 1 {
		t.Fatalf("saved %+v", got)
	}
	after := e.get("/console/users/"+s.user+"?saved=preferences").expect(t, 200)
	after.has(t, `id="preferences-saved"`, `value="7"`, `name="off.promo" value="1" checked`, `value="sms" checked`)
	// A declared type's row turns it off; a row left on and open turns
	// the type back on.
	form = url.Values{"csrf": {p.csrf(t)}, "type": {"order_shipped", "promo"}, "off.order_shipped": {"1"}}
	e.post("/console/users/"+s.user+"/preferences", form).expect(t, 303)
	if got, err = e.client.GetPreferences(context.Background(), s.user); err != nil || !got.Types["order_shipped"].Disabled || got.Types["promo"].Disabled {
		t.Fatalf("saved %+v, %v", got, err)
	}
	// A type's digest schedule (issue 36 item 2) is shown and edited in
	// its row.
	form = url.Values{"csrf": {p.csrf(t)}, "type": {"order_shipped"}, "digest.order_shipped": {"weekly Monday 09:00"}}
	e.post("/console/users/"+s.user+"/preferences", form).expect(t, 303)
	if got, err = e.client.GetPreferences(context.Background(), s.user); err != nil || got.Types["order_shipped"].Digest == nil ||
		*got.Types["order_shipped"].Digest != (heraldtype.DigestSchedule{Every: "week", On: "monday", At: "09:00"}) {
		t.Fatalf("saved %+v, %v", got, err)
	}
	e.get("/console/users/"+s.user).expect(t, 200).has(t, `name="digest.order_shipped" type="text" placeholder="daily 18:00" value="weekly monday 09:00"`)

	for field, v := range map[string]url.Values{
		"types":       {"type": {"order_shipped"}, "digest.order_shipped": {"daily 24:00"}},
		"daily_cap":   {"daily_cap": {"999999"}},
		"quiet_hours": {"quiet_start": {"25:00"}, "quiet_end": {"07:00"}},
		"type":        {"new_type": {"Not A Type!"}, "new_off": {"1"}},
	} {
		v.Set("csrf", p.csrf(t))
		bad := e.post("/console/users/"+s.user+"/preferences", v).expect(t, 400)
		wellFormed(t, bad.body)
		bad.has(t, `<p class="field-error" id="error-`+field+`">`, `data-code="invalid_argument"`)
	}
	bad := e.post("/console/users/"+s.user+"/preferences", url.Values{"csrf": {p.csrf(t)}, "daily_cap": {"lots"}}).expect(t, 400)
	bad.has(t, `id="error-daily_cap"`, `value="lots"`)
	// Without the token: refused before anything else.
	e.post("/console/users/"+s.user+"/preferences", url.Values{"daily_cap": {"3"}}).expect(t, 403).has(t, `data-code="csrf_invalid"`)
}

// TestNotificationFromRule: a notification a rule produced shows the
// event and the rule's run on its timeline, and the run on the rule's
// page.
func TestNotificationFromRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	seedCatalog(t, e)
	ctx := context.Background()
	_, _, err := e.client.PutRule(ctx, herald.Rule{Name: "order-placed", When: heraldtype.RuleWhen{Event: "ORDER_PLACED"},
		Audience: heraldtype.RuleAudience{EventUser: true}, Notify: heraldtype.RuleNotify{Type: "digest", Title: "Thanks for your order"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Track(ctx, herald.Event{ID: "ev-1", Name: "ORDER_PLACED", UserID: "u-1"}); err != nil {
		t.Fatal(err)
	}
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
		h, err := e.client.ListHistory(ctx, herald.HistoryFilter{UserID: "u-1", Type: "digest"})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Notifications) > 0 {
			id = h.Notifications[0].NotificationID
		}
		if time.Now().After(deadline) {
			t.Fatal("the rule produced no notification")
		}
	}
	p := e.get("/console/notifications/"+id).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-kind="event"`, `data-kind="rule_run"`, `ORDER_PLACED`, `href="/console/rules/order-placed#runs-heading"`).lacks(t, `data-kind="trigger"`)
	rp := e.get("/console/rules/order-placed").expect(t, 200).has(t, `data-event-id="ev-1"`)
	run := regexp.MustCompile(`data-run-id="([^"]+)" data-event-id="ev-1"`).FindStringSubmatch(rp.body)
	if run == nil {
		t.Fatal("no run id on the rule's page")
	}
	why := e.get("/console/why?user=u-1&rule=order-placed&run="+url.QueryEscape(run[1])).expect(t, 200)
	wellFormed(t, why.body)
	why.has(t, `<section id="why-answer" data-code="`, `href="/console/rules/order-placed#runs-heading"`, `href="/console/notifications/`+id+`"`)
}

// TestNotificationPolicyDecision: a delivery the user's preferences
// refused shows the policy's decision on the timeline, not a provider's
// answer.
func TestNotificationPolicyDecision(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "u-2", herald.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.RegisterDevice(ctx, "u-2", herald.DeviceInput{DeviceID: "dev-2", Token: strings.Repeat("s", 40), Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PutPreferences(ctx, "u-2", herald.Preferences{OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.client.Enqueue(ctx, herald.Request{UserID: "u-2", Type: "promo", Title: "Sale", Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Notifications[0].ID
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := e.client.GetNotification(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n.Status == heraldtype.HistoryStatus("USER_OPTED_OUT") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notification is still %s", n.Status)
		}
	}
	p := e.get("/console/notifications/"+id).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-kind="policy"`, `<code class="policy-code">channel_opted_out</code>`).lacks(t, `class="provider-code"`)
}

// TestNotificationCancelled: a cancelled notification shows its status
// CANCELLED, its cancellation key, and the cancel on the timeline as a
// decision with its reason; the history filters by it (issue 36 item 5).
func TestNotificationCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true})
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "u-3", herald.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.RegisterDevice(ctx, "u-3", herald.DeviceInput{DeviceID: "dev-3", Token: strings.Repeat("c", 40), Platform: heraldtype.PlatformAndroid}); err != nil {
		t.Fatal(err)
	}
	res, err := e.client.Enqueue(ctx, herald.Request{UserID: "u-3", Type: "cart", Title: "Your cart", CancellationKey: "order-9",
		Channels: []heraldtype.Channel{heraldtype.ChannelPush}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Notifications[0].ID
	if _, err := e.client.Cancel(ctx, herald.CancelRequest{CancellationKey: "order-9", By: "the shop"}); err != nil {
		t.Fatal(err)
	}
	p := e.get("/console/notifications/"+id).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-status="CANCELLED"`, `<dd id="cancellation-key">order-9</dd>`, `data-kind="cancel"`,
		`<code class="policy-code">cancelled</code> cancelled by the shop with cancellation key &#34;order-9&#34;`).
		lacks(t, `class="provider-code"`)
	h := e.get("/console/notifications?status=CANCELLED").expect(t, 200)
	wellFormed(t, h.body)
	h.has(t, `data-notification-id="`+id+`"`, `<option value="CANCELLED" selected>`)
}
