package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// testWebhookReports checks the event types written with the change they
// report beside delivery.finished (issue 35 item 4): receipt.recorded,
// device.invalidated, rule_run.finished and dead_letter.created for a
// dead intake event. Each is written once per subscribed, enabled
// endpoint, only when its change happens (a repeated receipt, an outcome
// the lease guard refuses, a stale run batch and a record dead-lettered
// again write none), with a stable event id, in the transaction of the
// change (a change rolled back leaves no message), and none without an
// endpoint.
func testWebhookReports(t *testing.T, newStore NewStore) {
	t.Run("ReceiptRecorded", func(t *testing.T) { testReceiptRecorded(t, newStore) })
	t.Run("InboxReceiptRecorded", func(t *testing.T) { testInboxReceiptRecorded(t, newStore) })
	t.Run("DeviceInvalidated", func(t *testing.T) { testDeviceInvalidated(t, newStore) })
	t.Run("RuleRunFinished", func(t *testing.T) { testRuleRunFinished(t, newStore) })
	t.Run("DeadLetterCreated", func(t *testing.T) { testDeadLetterCreated(t, newStore) })
}

// reportEndpoints makes the endpoints every case writes to: "all" (every
// type), "one" (only eventType), "other" (only delivery.finished) and
// "off" (disabled).
func (f *fixture) reportEndpoints(eventType string) {
	f.t.Helper()
	f.webhookEndpoint("all")
	f.webhookEndpoint("one", eventType)
	f.webhookEndpoint("other", heraldtype.WebhookDeliveryFinished)
	f.webhookEndpoint("off")
	off := false
	if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "off", store.WebhookEndpointUpdate{Enabled: &off}, base()); err != nil {
		f.t.Fatal(err)
	}
}

// reports returns the endpoint's messages of eventType, oldest first.
func (f *fixture) reports(endpoint, eventType string) []heraldtype.WebhookMessage {
	f.t.Helper()
	var out []heraldtype.WebhookMessage
	for _, m := range f.webhookMessages(endpoint, "") {
		if m.Type == eventType {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b heraldtype.WebhookMessage) int { return int(a.Seq - b.Seq) })
	return out
}

// wantReports checks that "all" and "one" hold the messages of eventType
// with these event ids, in this order, "other" none of that type and
// "off" none at all; it returns "all"'s.
func (f *fixture) wantReports(eventType string, eventIDs ...string) []heraldtype.WebhookMessage {
	f.t.Helper()
	var all []heraldtype.WebhookMessage
	for _, ep := range []string{"all", "one"} {
		ms := f.reports(ep, eventType)
		got := make([]string, len(ms))
		for i, m := range ms {
			got[i] = m.EventID
			if m.State != heraldtype.WebhookPending {
				f.t.Fatalf("%s: %+v is not pending", ep, m)
			}
		}
		if !slices.Equal(got, eventIDs) {
			f.t.Fatalf("%s: %s event ids %v, want %v", ep, eventType, got, eventIDs)
		}
		if ep == "all" {
			all = ms
		} else {
			for i := range ms {
				if string(ms[i].Data) != string(all[i].Data) || ms[i].OrderingKey != all[i].OrderingKey {
					f.t.Fatalf("the endpoints got different messages of one event: %+v, %+v", all[i], ms[i])
				}
			}
		}
	}
	if ms := f.reports("other", eventType); len(ms) != 0 {
		f.t.Fatalf("an endpoint not subscribed to %s got %+v", eventType, ms)
	}
	if ms := f.webhookMessages("off", ""); len(ms) != 0 {
		f.t.Fatalf("a disabled endpoint got %+v", ms)
	}
	return all
}

// wantData checks a message's data object.
func wantData(t *testing.T, m heraldtype.WebhookMessage, want map[string]any) {
	t.Helper()
	var data map[string]any
	if err := json.Unmarshal(m.Data, &data); err != nil {
		t.Fatalf("data %s: %v", m.Data, err)
	}
	if !maps.Equal(data, want) {
		t.Fatalf("%s data = %v, want %v", m.EventID, data, want)
	}
}

// rfc3339 is a time as the events' data write it: UTC, six digits.
func rfc3339(at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.000000Z") }

func testReceiptRecorded(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.contact("u1", "+15550001", "u1@example.com")
	early := f.on("u1", heraldtype.ChannelSMS)
	f.enqueue(channelParams(early))
	// A receipt before any endpoint exists reports nothing, then or later.
	record := func(rs ...store.Receipt) []heraldtype.ReceiptResult {
		t.Helper()
		got, err := f.s.RecordReceipts(f.ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	de := f.delivery(early.ID)
	record(store.Receipt{DeliveryID: de.ID, NotificationID: early.ID, Event: heraldtype.ReceiptDelivered, At: at(time.Second)})

	f.reportEndpoints(heraldtype.WebhookReceiptRecorded)
	n := f.on("u1", heraldtype.ChannelSMS)
	f.enqueue(channelParams(n))
	d := f.delivery(n.ID)
	opened := store.Receipt{DeliveryID: d.ID, NotificationID: n.ID, UserID: "u1", Event: heraldtype.ReceiptOpened, At: at(time.Minute)}
	clicked := store.Receipt{DeliveryID: d.ID, NotificationID: n.ID, UserID: "u1", Event: heraldtype.ReceiptClicked,
		Action: "reply", At: at(2 * time.Minute)}
	// Recorded, a duplicate in the same batch, another user's: one
	// message, for the recorded one.
	wrongUser := opened
	wrongUser.UserID = "u2"
	if got := record(opened, opened, wrongUser); !slices.Equal(got, []heraldtype.ReceiptResult{heraldtype.ReceiptRecorded,
		heraldtype.ReceiptDuplicate, heraldtype.ReceiptNotFound}) {
		t.Fatalf("results %v", got)
	}
	// The same receipt again, then the click: one more.
	record(opened)
	record(clicked, opened)
	openedID, clickedID := fmt.Sprintf("evt_r%d_opened", d.ID), fmt.Sprintf("evt_r%d_clicked", d.ID)
	ms := f.wantReports(heraldtype.WebhookReceiptRecorded, openedID, clickedID)
	for _, m := range ms {
		if m.OrderingKey != n.ID {
			t.Fatalf("ordering key %q, want the notification %q", m.OrderingKey, n.ID)
		}
	}
	wantTime(t, "OccurredAt", ms[0].OccurredAt, at(time.Minute))
	wantData(t, ms[0], map[string]any{"message_id": heraldtype.DeliveryKey(n.ID, d.ID), "delivery_id": float64(d.ID),
		"notification_id": n.ID, "user_id": "u1", "channel": "sms", "event": "opened", "at": rfc3339(at(time.Minute)),
		"action": ""})
	wantData(t, ms[1], map[string]any{"message_id": heraldtype.DeliveryKey(n.ID, d.ID), "delivery_id": float64(d.ID),
		"notification_id": n.ID, "user_id": "u1", "channel": "sms", "event": "clicked", "at": rfc3339(at(2 * time.Minute)),
		"action": "reply"})
	for _, m := range f.webhookMessages("all", "") {
		if strings.Contains(string(m.Data), early.ID) {
			t.Fatalf("a receipt recorded before the endpoint existed was reported: %+v", m)
		}
	}
}

func testInboxReceiptRecorded(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.reportEndpoints(heraldtype.WebhookReceiptRecorded)
	items := f.inboxIDs("u1", "u1", "u2")
	// notificationOf is the notification of the user's inbox item.
	notificationOf := func(item int64) string {
		t.Helper()
		page, _, _, err := f.s.ListInbox(f.ctx, "u1", heraldtype.InboxFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page {
			if it.ID == item {
				return it.NotificationID
			}
		}
		t.Fatalf("no item %d", item)
		return ""
	}
	first := notificationOf(items[0])
	d := f.byChannel(first, heraldtype.ChannelInApp)

	// Read (another user's item is ignored), read again: one message.
	if _, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{items[0], items[2]}, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{items[0]}, at(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A click of the read item: seen and clicked are new, read is not.
	if err := f.s.ClickInboxItem(f.ctx, "u1", items[0], "open", at(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ClickInboxItem(f.ctx, "u1", items[0], "open", at(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", items[0], at(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ArchiveInboxItem(f.ctx, "u1", items[0], at(6*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Mark all read: only the second item changes.
	if _, err := f.s.MarkAllInboxRead(f.ctx, "u1", at(7*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.MarkInboxSeen(f.ctx, "u1", []int64{items[0], items[1]}, at(8*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := notificationOf(items[1])
	d2 := f.byChannel(second, heraldtype.ChannelInApp)
	ev := func(id int64, event string) string { return fmt.Sprintf("evt_r%d_%s", id, event) }
	ms := f.wantReports(heraldtype.WebhookReceiptRecorded, ev(d.ID, "read"), ev(d.ID, "seen"), ev(d.ID, "clicked"),
		ev(d.ID, "archived"), ev(d2.ID, "read"), ev(d2.ID, "seen"))
	wantData(t, ms[2], map[string]any{"message_id": heraldtype.DeliveryKey(first, d.ID), "delivery_id": float64(d.ID),
		"notification_id": first, "user_id": "u1", "channel": "in_app", "event": "clicked", "at": rfc3339(at(3 * time.Minute)),
		"action": "open"})
	if ms[0].OrderingKey != first || ms[4].OrderingKey != second {
		t.Fatalf("ordering keys %q %q, want the notifications %q %q", ms[0].OrderingKey, ms[4].OrderingKey, first, second)
	}
}

func testDeviceInvalidated(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "early", heraldtype.PlatformAndroid)
	f.push("u1")
	jobs := f.claim("w", base(), 10)
	dead := func(j heraldtype.Job, when time.Time) store.Outcome {
		return outcome(j, store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"}, when)
	}
	// Without an endpoint: nothing, then or later.
	f.complete(1, dead(jobs[0], at(time.Second)))

	f.reportEndpoints(heraldtype.WebhookDeviceInvalidated)
	f.device("u1", "a1", heraldtype.PlatformAndroid)
	f.device("u1", "i1", heraldtype.PlatformIOS)
	f.push("u1")
	jobs = f.claim("w", at(time.Minute), 10)
	if len(jobs) != 2 {
		t.Fatalf("claimed %d, want a1's and i1's", len(jobs))
	}
	byDevice := map[string]heraldtype.Job{}
	for _, j := range jobs {
		byDevice[j.Delivery.DeviceID] = j
	}
	a1, i1 := byDevice["a1"], byDevice["i1"]
	// i1 registers again after the claim: the answer about its old token
	// does not invalidate it, and nothing is reported.
	f.upsertDevice(heraldtype.Device{ID: "i1", UserID: "u1", Platform: heraldtype.PlatformIOS, Token: "new", PushOptIn: true},
		at(time.Minute+time.Second))
	f.complete(2, dead(a1, at(2*time.Minute)), dead(i1, at(2*time.Minute)))
	// The same outcome again: refused by the lease guard, nothing more.
	f.complete(0, dead(a1, at(3*time.Minute)))
	ms := f.wantReports(heraldtype.WebhookDeviceInvalidated, fmt.Sprintf("evt_i%dr0", a1.Delivery.ID))
	if ms[0].OrderingKey != "a1" {
		t.Fatalf("ordering key %q, want the device", ms[0].OrderingKey)
	}
	wantTime(t, "OccurredAt", ms[0].OccurredAt, at(2*time.Minute))
	wantData(t, ms[0], map[string]any{"device_id": "a1", "user_id": "u1", "platform": "android", "channel": "push",
		"reason": "UNREGISTERED", "delivery_id": float64(a1.Delivery.ID)})
	if dev := f.getDevice("i1"); dev.Status == heraldtype.DeviceInvalid {
		t.Fatalf("i1 was invalidated: %+v", dev)
	}

	// A token another device registers: the device that held it is
	// invalidated (token_moved) and reported once; a device that was
	// INVALID already (a1, early) loses its token unreported.
	f.user("u2")
	f.device("u1", "m1", heraldtype.PlatformAndroid)
	moved := heraldtype.Device{ID: "m2", UserID: "u2", Platform: heraldtype.PlatformAndroid, Token: "tok-m1", PushOptIn: true}
	f.upsertDevice(moved, at(4*time.Minute))
	f.upsertDevice(moved, at(5*time.Minute))
	for _, tok := range []string{"tok-a1", "tok-early"} {
		f.upsertDevice(heraldtype.Device{ID: "x-" + tok, UserID: "u2", Platform: heraldtype.PlatformAndroid, Token: tok,
			PushOptIn: true}, at(6*time.Minute))
	}
	if dev := f.getDevice("a1"); dev.Token != "" || dev.InvalidReason != "token_moved" {
		t.Fatalf("a1 kept its token: %+v", dev)
	}
	movedID := fmt.Sprintf("evt_v%xt%d", "m1", at(4*time.Minute).UnixMicro())
	ms = f.wantReports(heraldtype.WebhookDeviceInvalidated, fmt.Sprintf("evt_i%dr0", a1.Delivery.ID), movedID)
	if ms[1].OrderingKey != "m1" {
		t.Fatalf("ordering key %q, want the device", ms[1].OrderingKey)
	}
	wantTime(t, "OccurredAt", ms[1].OccurredAt, at(4*time.Minute))
	wantData(t, ms[1], map[string]any{"device_id": "m1", "user_id": "u1", "platform": "android", "channel": "push",
		"reason": "token_moved", "delivery_id": nil})
}

func testRuleRunFinished(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	// A run finished before any endpoint exists: nothing.
	early := ruleRun("early", "ev-0")
	early.LastError = "render_failed: no title"
	f.record(eventRecord("ev-0", 0, early))

	f.reportEndpoints(heraldtype.WebhookRuleRunFinished)
	failed := ruleRun("price-drop", "ev-1")
	failed.LastError = "render_failed: notify.title: missing field"
	r := eventRecord("ev-1", 1, failed, ruleRun("restock", "ev-1"), ruleRun("inline", "ev-1"))
	p := params(f.notification("u1"))
	r.Inline = map[string]store.InlineBatch{"inline": {Recipients: 1, Cursor: "u1", Enqueue: &p}}
	f.record(r)
	runID := store.RuleRunID("product.inventory.v1", "", "ev-1")
	// The failed and the inline (done) runs are finished as written; the
	// runner's is running.
	f.wantReports(heraldtype.WebhookRuleRunFinished, rules.RuleRunEventID("price-drop", runID, 1),
		rules.RuleRunEventID("inline", runID, 1))

	run, err := f.s.RuleRun(f.ctx, "restock", runID)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(version int64, finish heraldtype.CampaignRunState, users ...string) store.RuleBatch {
		var ns []heraldtype.Notification
		for _, u := range users {
			ns = append(ns, f.notification(u))
		}
		p := params(ns...)
		return store.RuleBatch{Rule: run.Rule, RunID: run.ID, Version: version, Cursor: users[len(users)-1],
			Enqueue: &p, Recipients: len(users), Finish: finish, Now: at(time.Minute)}
	}
	// A batch that does not finish the run: nothing.
	res, err := f.s.AdvanceRuleRun(f.ctx, batch(run.Version, "", "u1"))
	if err != nil || !res.Applied {
		t.Fatalf("first batch: %+v %v", res, err)
	}
	// The last batch rolled back (its enqueue names a user that does not
	// exist): the run is still running, and nothing is reported.
	if _, err := f.s.AdvanceRuleRun(f.ctx, batch(res.Run.Version, heraldtype.RunDone, "nobody")); err == nil {
		t.Fatal("a batch for a user that does not exist was written")
	}
	f.wantReports(heraldtype.WebhookRuleRunFinished, rules.RuleRunEventID("price-drop", runID, 1),
		rules.RuleRunEventID("inline", runID, 1))
	last, err := f.s.AdvanceRuleRun(f.ctx, batch(res.Run.Version, heraldtype.RunDone, "u2"))
	if err != nil || !last.Applied || last.Run.State != heraldtype.RunDone {
		t.Fatalf("last batch: %+v %v", last, err)
	}
	// The last batch again (a second runner): nothing more.
	if again, err := f.s.AdvanceRuleRun(f.ctx, batch(res.Run.Version, heraldtype.RunDone, "u2")); err != nil || again.Applied {
		t.Fatalf("stale batch: %+v %v", again, err)
	}
	doneID := rules.RuleRunEventID("restock", runID, last.Run.Version)
	ms := f.wantReports(heraldtype.WebhookRuleRunFinished, rules.RuleRunEventID("price-drop", runID, 1),
		rules.RuleRunEventID("inline", runID, 1), doneID)
	wantData(t, ms[0], map[string]any{"run_id": runID, "rule": "price-drop", "source": "product.inventory.v1",
		"event": "PRICE_CHANGE", "event_id": "ev-1", "subject": "product:42", "state": "failed", "recipients": float64(0),
		"enqueued": float64(0), "last_error": failed.LastError})
	wantData(t, ms[2], map[string]any{"run_id": runID, "rule": "restock", "source": "product.inventory.v1",
		"event": "PRICE_CHANGE", "event_id": "ev-1", "subject": "product:42", "state": "done", "recipients": float64(2),
		"enqueued": float64(2), "last_error": ""})
	wantTime(t, "OccurredAt", ms[2].OccurredAt, at(time.Minute))
	for _, m := range ms {
		if m.OrderingKey != runID {
			t.Fatalf("ordering key %q, want the run %q", m.OrderingKey, runID)
		}
	}

	// The failed run sent again and failing again: a new event.
	fr, err := f.s.RuleRun(f.ctx, "price-drop", runID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.s.RetryRuleRun(f.ctx, store.RuleRetry{Rule: fr.Rule, RunID: fr.ID, Version: fr.Version, Job: fr.Job,
		Now: at(2 * time.Minute)}); err != nil || !ok {
		t.Fatalf("RetryRuleRun = %v, %v", ok, err)
	}
	retried, _ := f.s.RuleRun(f.ctx, "price-drop", runID)
	out, err := f.s.AdvanceRuleRun(f.ctx, store.RuleBatch{Rule: fr.Rule, RunID: fr.ID, Version: retried.Version,
		LastError: "rule deleted", Finish: heraldtype.RunFailed, Now: at(3 * time.Minute)})
	if err != nil || !out.Applied {
		t.Fatalf("failing the retried run: %+v %v", out, err)
	}
	f.wantReports(heraldtype.WebhookRuleRunFinished, rules.RuleRunEventID("price-drop", runID, 1),
		rules.RuleRunEventID("inline", runID, 1), doneID, rules.RuleRunEventID("price-drop", runID, out.Run.Version))
}

func testDeadLetterCreated(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	put := func(offset int64, value string) int64 {
		t.Helper()
		id, err := f.s.PutDeadEvent(f.ctx, heraldtype.DeadEvent{Topic: "requests", Partition: 2, Offset: offset,
			Kind: "notifications", Value: []byte(value), Error: "user_id: is required", Attempts: 1}, at(time.Duration(offset)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	put(1, `{}`) // before any endpoint: nothing, then or later

	f.reportEndpoints(heraldtype.WebhookDeadLetterCreated)
	a := put(10, `{"a":1}`)
	// The same record dead-lettered again (a crash before the offset
	// commit) is kept once and reported once.
	if again := put(10, `{"a":1}`); again != a {
		t.Fatalf("the same record kept twice: %d, %d", a, again)
	}
	b := put(11, `{"b":1}`)
	ms := f.wantReports(heraldtype.WebhookDeadLetterCreated, fmt.Sprintf("evt_k%d", a), fmt.Sprintf("evt_k%d", b))
	if ms[0].OrderingKey != "requests:2" {
		t.Fatalf("ordering key %q, want the topic's partition", ms[0].OrderingKey)
	}
	wantTime(t, "OccurredAt", ms[0].OccurredAt, at(10*time.Second))
	wantData(t, ms[0], map[string]any{"list": "events", "dead_event_id": float64(a), "topic": "requests", "partition": float64(2),
		"offset": float64(10), "kind": "notifications", "error": "user_id: is required", "attempts": float64(1)})
}
