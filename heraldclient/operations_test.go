package heraldclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/heraldtype"
)

func TestReminders(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutType(ctx, "cart_reminder", heraldclient.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	req := heraldclient.ReminderRequest{UserID: "u1", Type: "cart_reminder", Title: "Still thinking?", Body: "Your cart is waiting",
		Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)}},
		Stop:     heraldtype.ReminderStop{MaxSends: 5, OnEvent: "checkout_completed"}}
	r, created, err := c.PutReminder(ctx, "cart-42", req)
	if err != nil || !created || r.Key != "cart-42" || r.State != heraldtype.ReminderActive || r.NextAt.IsZero() || r.Stop.MaxSends != 5 {
		t.Fatalf("PutReminder: %+v, %v, %v", r, created, err)
	}
	if _, created, err = c.PutReminder(ctx, "cart-42", req); err != nil || created {
		t.Errorf("PutReminder again: created %v, %v", created, err)
	}
	if got, err := c.GetReminder(ctx, "cart-42"); err != nil || got.UserID != "u1" {
		t.Errorf("GetReminder: %+v, %v", got, err)
	}
	if page, err := c.ListReminders(ctx, heraldtype.ReminderFilter{UserID: "u1"}); err != nil || len(page.Reminders) != 1 {
		t.Errorf("ListReminders of u1: %+v, %v", page, err)
	}
	n := 0
	for _, err := range c.Reminders(ctx, heraldtype.ReminderFilter{Type: "cart_reminder", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("Reminders walked %d", n)
	}
	// The event the reminder waits for stops it.
	res, err := c.PostEvent(ctx, heraldclient.Event{ID: "ev-1", Name: "checkout_completed", UserID: "u1"})
	if err != nil || res.StoppedReminders != 1 || res.EventID != "ev-1" {
		t.Errorf("PostEvent: %+v, %v", res, err)
	}
	if _, _, err := c.PutReminder(ctx, "cart-43", req); err != nil {
		t.Fatal(err)
	}
	if n, err := c.CancelReminders(ctx, heraldclient.ReminderSelector{UserID: "u1"}); err != nil || n != 1 {
		t.Errorf("CancelReminders: %d, %v", n, err)
	}
	if err := c.CancelReminder(ctx, "cart-43"); err != nil {
		t.Errorf("CancelReminder: %v", err)
	}
	if _, err := c.GetReminder(ctx, "cart-43"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetReminder after delete: %v", err)
	}
	bad := req
	bad.Schedule = heraldtype.Schedule{RRule: "FREQ=NEVER"}
	_, _, err = c.PutReminder(ctx, "bad", bad)
	var herr *heraldclient.Error
	if !asError(err, &herr) || herr.Field != "schedule.rrule" {
		t.Errorf("a bad rrule: %v", err)
	}
}

func TestRulesEventsAndInterests(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutType(ctx, "price_drop", heraldclient.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}
	n, err := c.RecordInterests(ctx, heraldclient.InterestInput{UserID: "u1", Subject: "product:42", Kind: "VIEW"},
		heraldclient.InterestInput{UserID: "u1", Subject: "product:43", Kind: "CLICK"})
	if err != nil || n != 2 {
		t.Fatalf("RecordInterests: %d, %v", n, err)
	}
	if page, err := c.ListInterests(ctx, heraldtype.InterestFilter{UserID: "u1", Subject: "product:42"}); err != nil || len(page.Interests) != 1 {
		t.Errorf("ListInterests: %+v, %v", page, err)
	}
	k := 0
	for _, err := range c.Interests(ctx, heraldtype.InterestFilter{UserID: "u1", Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		k++
	}
	if k != 2 {
		t.Errorf("Interests walked %d, want 2", k)
	}

	rule := heraldtype.Rule{Name: "price-drop",
		When:     heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{PriceDropPct: 10}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW"}, Within: heraldtype.Duration(168 * time.Hour)}},
		Notify:   heraldtype.RuleNotify{Type: "price_drop", Title: "{{.product_name}} is {{.drop_pct}}% off"}}
	r, created, err := c.PutRule(ctx, rule)
	if err != nil || !created || r.Name != "price-drop" || r.When.Detect.PriceDropPct != 10 || r.CreatedAt.IsZero() {
		t.Fatalf("PutRule: %+v, %v, %v", r, created, err)
	}
	if _, created, err := c.PutRule(ctx, r); err != nil || created {
		t.Errorf("PutRule of what GetRule answers: created %v, %v", created, err)
	}
	if got, err := c.GetRule(ctx, "price-drop"); err != nil || got.Notify.Type != "price_drop" {
		t.Errorf("GetRule: %+v, %v", got, err)
	}
	if page, err := c.ListRules(ctx, heraldtype.RuleFilter{Event: "PRICE_CHANGE"}); err != nil || len(page.Rules) != 1 {
		t.Errorf("ListRules: %+v, %v", page, err)
	}
	ev := heraldclient.Event{ID: "ev-7", Name: "PRICE_CHANGE", Subject: "product:42", Version: 7,
		Data: map[string]any{"product_name": "Kettle", "previous_price": 10000, "current_price": 8500}}
	dry, err := c.DryRunRule(ctx, "price-drop", ev)
	if err != nil || !dry.Matches || !dry.Detected || dry.AudienceSize != 1 || dry.Notification == nil || dry.Notification.Title != "Kettle is 15% off" {
		t.Errorf("DryRunRule: %+v, %v", dry, err)
	}
	res, err := c.PostEvent(ctx, ev)
	if err != nil || len(res.Rules) != 1 || !res.Rules[0].Detected || res.Rules[0].Run == "" || res.Counts == nil || res.Counts.Runs != 1 {
		t.Fatalf("PostEvent: %+v, %v", res, err)
	}
	again, err := c.PostEvent(ctx, ev)
	if err != nil || !again.Replayed {
		t.Errorf("PostEvent again: %+v, %v", again, err)
	}
	var runs []heraldtype.RuleRun
	for run, err := range c.RuleRuns(ctx, heraldtype.RuleRunFilter{Rule: "price-drop"}) {
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	if len(runs) != 1 || runs[0].ID != res.Rules[0].Run || runs[0].Job.Notification.Title != "Kettle is 15% off" {
		t.Errorf("RuleRuns: %+v", runs)
	}
	_, err = c.PostEvent(ctx, heraldclient.Event{Name: "PRICE_CHANGE", Data: map[string]any{"price": map[string]any{"amount": 1}}})
	var herr *heraldclient.Error
	if !asError(err, &herr) || herr.Field != "data.price" {
		t.Errorf("an object in data: %v", err)
	}
	if err := c.DeleteRule(ctx, "price-drop"); err != nil {
		t.Errorf("DeleteRule: %v", err)
	}
	if _, err := c.GetRule(ctx, "price-drop"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetRule after delete: %v", err)
	}
}

func TestCampaigns(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutType(ctx, "weekly", heraldclient.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
		t.Fatal(err)
	}
	req := heraldclient.CampaignRequest{Type: "weekly", Title: "This week", Paused: true,
		Schedule: heraldtype.Schedule{Cron: "0 9 * * 1", TimeZone: "Asia/Seoul"},
		Audience: heraldtype.Audience{ActiveWithin: heraldtype.Duration(168 * time.Hour)}}
	camp, created, err := c.PutCampaign(ctx, "weekly-digest", req)
	if err != nil || !created || camp.Name != "weekly-digest" || !camp.Paused {
		t.Fatalf("PutCampaign: %+v, %v, %v", camp, created, err)
	}
	if got, err := c.GetCampaign(ctx, "weekly-digest"); err != nil || got.Schedule.Cron != "0 9 * * 1" {
		t.Errorf("GetCampaign: %+v, %v", got, err)
	}
	k := 0
	for _, err := range c.Campaigns(ctx, heraldtype.CampaignFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		k++
	}
	if k != 1 {
		t.Errorf("Campaigns walked %d", k)
	}
	run, err := c.RunCampaign(ctx, "weekly-digest", "")
	if err != nil || run.Campaign != "weekly-digest" || run.ID == "" {
		t.Fatalf("RunCampaign: %+v, %v", run, err)
	}
	if _, err := c.RunCampaign(ctx, "weekly-digest", "manual-none"); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("RunCampaign of a run that does not exist: %v", err)
	}
	if page, err := c.ListCampaignRuns(ctx, heraldtype.CampaignRunFilter{Campaign: "weekly-digest"}); err != nil || len(page.Runs) != 1 || page.Runs[0].ID != run.ID {
		t.Errorf("ListCampaignRuns: %+v, %v", page, err)
	}
	if err := c.DeleteCampaign(ctx, "weekly-digest"); err != nil {
		t.Errorf("DeleteCampaign: %v", err)
	}
	req.Schedule.Cron = "0 25 * * *"
	_, _, err = c.PutCampaign(ctx, "bad", req)
	var herr *heraldclient.Error
	if !asError(err, &herr) || herr.Field != "schedule.cron" {
		t.Errorf("a bad cron: %v", err)
	}
}

func TestInboxDeliveriesAndSuppressions(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUser(ctx, "u1", heraldclient.UserInput{}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		res, err := c.Trigger(ctx, heraldclient.TriggerRequest{UserID: "u1", Type: "news", Title: "News " + string(rune('A'+i)),
			Channels: []heraldtype.Channel{heraldtype.ChannelInApp}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	page, err := c.ListInbox(ctx, "u1", heraldtype.InboxFilter{Limit: 2})
	if err != nil || len(page.Items) != 2 || page.Unread != 3 || page.NextCursor == "" {
		t.Fatalf("ListInbox: %+v, %v", page, err)
	}
	var items []heraldtype.InboxItem
	for it, err := range c.Inbox(ctx, "u1", heraldtype.InboxFilter{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if len(items) != 3 || items[0].Title != "News C" {
		t.Fatalf("Inbox: %+v", items)
	}
	if n, err := c.MarkInboxRead(ctx, "u1", items[0].ID); err != nil || n != 1 {
		t.Errorf("MarkInboxRead: %d, %v", n, err)
	}
	if n, err := c.MarkAllInboxRead(ctx, "u1"); err != nil || n != 2 {
		t.Errorf("MarkAllInboxRead: %d, %v", n, err)
	}
	if err := c.ArchiveInboxItem(ctx, "u1", items[1].ID); err != nil {
		t.Errorf("ArchiveInboxItem: %v", err)
	}
	if p, err := c.ListInbox(ctx, "u1", heraldtype.InboxFilter{Archived: true}); err != nil || len(p.Items) != 1 || p.Items[0].ID != items[1].ID {
		t.Errorf("archived: %+v, %v", p, err)
	}
	if n, err := c.MarkInboxSeen(ctx, "u1", items[0].ID); err != nil || n != 1 {
		t.Errorf("MarkInboxSeen: %d, %v", n, err)
	}
	if err := c.ClickInboxItem(ctx, "u1", items[0].ID, "open"); err != nil {
		t.Errorf("ClickInboxItem: %v", err)
	}
	if err := c.ClickInboxItem(ctx, "u1", 1<<40, ""); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("ClickInboxItem of an unknown item: %v", err)
	}
	if p, err := c.ListInbox(ctx, "u1", heraldtype.InboxFilter{Limit: 1}); err != nil || len(p.Items) != 1 ||
		p.Items[0].ClickedAt == nil || p.Items[0].SeenAt == nil || p.Items[0].MessageID == "" {
		t.Errorf("the clicked item: %+v, %v", p, err)
	}

	// Deliveries: the in-app ones are sent at the trigger.
	dp, err := c.ListDeliveries(ctx, heraldtype.DeliveryFilter{NotificationID: ids[0]})
	if err != nil || len(dp.Deliveries) != 1 {
		t.Fatalf("ListDeliveries: %+v, %v", dp, err)
	}
	d, err := c.GetDelivery(ctx, dp.Deliveries[0].ID)
	if err != nil || d.NotificationID != ids[0] {
		t.Errorf("GetDelivery: %+v, %v", d, err)
	}
	// Marking the item read put its receipt on the delivery's timeline;
	// the app's receipts land there too, once each.
	if len(d.Attempts) != 1 || len(d.Receipts) != 1 || d.Receipts[0].Event != heraldtype.ReceiptRead {
		t.Errorf("the read item's timeline: %+v %+v", d.Attempts, d.Receipts)
	}
	key := heraldtype.DeliveryKey(d.NotificationID, d.ID)
	for i, want := range []heraldtype.ReceiptsResult{{Recorded: 1}, {Duplicate: 1, NotFound: 1}} {
		rs := []heraldtype.Receipt{{MessageID: key, Event: heraldtype.ReceiptOpened, At: time.Now().Add(-time.Second)}}
		if i == 1 {
			rs = append(rs, heraldtype.Receipt{MessageID: key + "0", Event: heraldtype.ReceiptClicked, Action: "more"})
		}
		got, err := c.RecordReceipts(ctx, rs...)
		if err != nil || got.Recorded != want.Recorded || got.Duplicate != want.Duplicate || got.NotFound != want.NotFound ||
			len(got.Results) != len(rs) || got.Results[0].MessageID != key {
			t.Errorf("RecordReceipts #%d: %+v, %v", i, got, err)
		}
	}
	if _, err := c.RecordReceipts(ctx, heraldtype.Receipt{MessageID: key, Event: "read"}); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("RecordReceipts of an inbox event: %v", err)
	}
	if _, err := c.ReplayDelivery(ctx, d.ID); !heraldclient.IsCode(err, heraldclient.CodeConflict) && !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("ReplayDelivery of a delivery that is not dead: %v", err)
	}
	if n, err := c.ReplayDeliveries(ctx, heraldclient.ReplayFilter{Type: "news", From: time.Now().Add(-time.Hour)}); err != nil || n != 0 {
		t.Errorf("ReplayDeliveries: %d, %v", n, err)
	}
	if _, err := c.GetDelivery(ctx, 999999); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetDelivery of a missing one: %v", err)
	}

	sup, err := c.ListSuppressions(ctx, heraldtype.ChannelSMS)
	if err != nil || sup == nil || len(sup) != 0 {
		t.Errorf("ListSuppressions: %#v, %v", sup, err)
	}
	if err := c.DeleteSuppression(ctx, heraldtype.ChannelSMS, "+15550100"); err != nil && !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("DeleteSuppression: %v", err)
	}
	if _, err := c.ListSuppressions(ctx, "fax"); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Errorf("ListSuppressions of a bad channel: %v", err)
	}
}

func TestDeadEvents(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	id, err := s.herald.RecordDeadEvent(ctx, heraldtype.DeadEvent{Topic: "events.v1", Partition: 0, Offset: 7, Kind: "events",
		Value: []byte(`{"name":"x"`), Error: "unexpected end of JSON input"})
	if err != nil {
		t.Skipf("cannot seed a dead event: %v", err)
	}
	page, err := c.ListDeadEvents(ctx, heraldtype.DeadEventFilter{Topic: "events.v1"})
	if err != nil || len(page.DeadEvents) != 1 || page.DeadEvents[0].ID != id {
		t.Fatalf("ListDeadEvents: %+v, %v", page, err)
	}
	k := 0
	for _, err := range c.DeadEvents(ctx, heraldtype.DeadEventFilter{}) {
		if err != nil {
			t.Fatal(err)
		}
		k++
	}
	if k != 1 {
		t.Errorf("DeadEvents walked %d", k)
	}
	d, err := c.GetDeadEvent(ctx, id)
	if err != nil || d.Offset != 7 || !strings.Contains(d.Error, "JSON") {
		t.Errorf("GetDeadEvent: %+v, %v", d, err)
	}
	dry, err := c.ReplayDeadEvents(ctx, heraldclient.DeadEventSelector{Topic: "events.v1", DryRun: true})
	if err != nil || dry.Matched != 1 {
		t.Errorf("ReplayDeadEvents dry run: %+v, %v", dry, err)
	}
	if _, err := c.ReplayDeadEvent(ctx, id); err != nil && !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) && !heraldclient.IsCode(err, heraldclient.CodeConflict) {
		t.Errorf("ReplayDeadEvent: %v", err)
	}
	if _, err := c.GetDeadEvent(ctx, id+100); !heraldclient.IsCode(err, heraldclient.CodeNotFound) {
		t.Errorf("GetDeadEvent of a missing one: %v", err)
	}
}
