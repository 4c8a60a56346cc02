package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testEngagement: the engagement counters (issue 35 item 3) count each
// delivery sent once — by the outcome batch and by the inbox at enqueue —
// and each receipt recorded once (a duplicate counts nothing), in the
// hour of the attempt row, by type, channel and source; Engagement sums
// them by the groups asked for, over the hours of the range, leaving out
// test-sends, and PruneEngagement drops old hours.
func testEngagement(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	for _, u := range []string{"u1", "u2", "u3"} {
		f.user(u)
		f.device(u, "d-"+u, heraldtype.PlatformAndroid)
	}
	rule := &heraldtype.Source{Kind: heraldtype.SourceRule, ID: "ev-1", Name: "price-drop", Occurrence: "http/ev-1", Event: "PRICE_CHANGE"}
	campaign := &heraldtype.Source{Kind: heraldtype.SourceCampaign, ID: "run-1", Name: "spring"}
	var ns []heraldtype.Notification
	for i, src := range []*heraldtype.Source{rule, rule, campaign, nil} {
		n := f.notification([]string{"u1", "u2", "u3", "u1"}[i])
		n.Source = src
		ns = append(ns, n)
	}
	ns[3].Type = "receipt"
	// An inbox item, sent at enqueue: counted in the hour of base().
	inApp := f.notification("u2")
	inApp.Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
	inApp.Source = campaign
	// A test-send's inbox item, sent at enqueue too: counted, never
	// reported.
	testInApp := f.notification("u3")
	testInApp.Channels = []heraldtype.Channel{heraldtype.ChannelInApp}
	testInApp.Source = &heraldtype.Source{Kind: heraldtype.SourceTest}
	f.enqueue(params(append(ns, inApp, testInApp)...))

	// Three of the four pushes sent an hour later; the fourth retried.
	jobs := f.claim("w1", at(time.Hour), 10)
	if len(jobs) != 4 {
		t.Fatalf("claimed %d, want 4", len(jobs))
	}
	var os []store.Outcome
	for _, j := range jobs {
		var to store.Transition = store.Sent{}
		if j.Delivery.NotificationID == ns[1].ID {
			to = store.Retry{RunAt: at(3 * time.Hour), Failure: store.Failure{ErrorCode: "UNAVAILABLE"}}
		}
		os = append(os, outcome(j, to, at(time.Hour)))
	}
	f.complete(4, os...)
	// Receipts two hours later: one of each kind on ns[0], a repeat
	// counting nothing, and the in-app item read.
	d0 := f.delivery(ns[0].ID)
	rs := []store.Receipt{
		{DeliveryID: d0.ID, NotificationID: ns[0].ID, Event: heraldtype.ReceiptDelivered, At: at(2 * time.Hour)},
		{DeliveryID: d0.ID, NotificationID: ns[0].ID, Event: heraldtype.ReceiptOpened, At: at(2 * time.Hour)},
		{DeliveryID: d0.ID, NotificationID: ns[0].ID, Event: heraldtype.ReceiptClicked, Action: "buy", At: at(2 * time.Hour)},
	}
	for range 2 {
		if _, err := f.s.RecordReceipts(f.ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	items, _, _, err := f.s.ListInbox(f.ctx, "u2", heraldtype.InboxFilter{Limit: 10})
	if err != nil || len(items) != 1 {
		t.Fatalf("ListInbox = %+v, %v", items, err)
	}
	if _, err := f.s.MarkInboxRead(f.ctx, "u2", []int64{items[0].ID}, at(2*time.Hour)); err != nil {
		t.Fatal(err)
	}

	report := func(ef store.EngagementFilter) string {
		t.Helper()
		if ef.From.IsZero() {
			ef.From, ef.To = base(), at(24*time.Hour)
		}
		if ef.Limit == 0 {
			ef.Limit = 100
		}
		cs, err := f.s.Engagement(f.ctx, ef)
		if err != nil {
			t.Fatalf("Engagement(%+v): %v", ef, err)
		}
		var out string
		for _, c := range cs {
			start := ""
			if !c.Start.IsZero() {
				start = c.Start.Format("15:04") + " "
			}
			out += fmt.Sprintf("%s%s/%s/%s/%s %s=%d; ", start, c.Type, c.Channel, c.Rule, c.Campaign, c.Event, c.N)
		}
		return out
	}
	want := func(ef store.EngagementFilter, w string) {
		t.Helper()
		if got := report(ef); got != w {
			t.Fatalf("Engagement(%+v)\n got %s\nwant %s", ef, got, w)
		}
	}
	// Everything in one row per event.
	all := "/// clicked=1; /// delivered=1; /// opened=1; /// read=1; "
	want(store.EngagementFilter{}, all+"/// sent=4; ")
	want(store.EngagementFilter{ByType: true, ByChannel: true},
		"receipt/push// sent=1; reminder/in_app// read=1; reminder/in_app// sent=1; reminder/push// clicked=1; "+
			"reminder/push// delivered=1; reminder/push// opened=1; reminder/push// sent=2; ")
	want(store.EngagementFilter{ByRule: true, ByCampaign: true},
		"/// sent=1; ///spring read=1; ///spring sent=2; //price-drop/ clicked=1; //price-drop/ delivered=1; "+
			"//price-drop/ opened=1; //price-drop/ sent=1; ")
	want(store.EngagementFilter{Rule: "price-drop", ByRule: true},
		"//price-drop/ clicked=1; //price-drop/ delivered=1; //price-drop/ opened=1; //price-drop/ sent=1; ")
	want(store.EngagementFilter{Campaign: "spring", Channel: "in_app"}, "/// read=1; /// sent=1; ")
	want(store.EngagementFilter{Type: "receipt"}, "/// sent=1; ")
	// By the hour (the range's start is rounded down to its hour) and by
	// the day (UTC).
	h := func(d time.Duration) string { return at(d).Truncate(time.Hour).Format("15:04") + " ///" }
	want(store.EngagementFilter{Interval: "hour", From: at(30 * time.Minute), To: at(24 * time.Hour), Limit: 100},
		h(0)+" sent=1; "+h(time.Hour)+" sent=3; "+h(2*time.Hour)+" clicked=1; "+h(2*time.Hour)+" delivered=1; "+
			h(2*time.Hour)+" opened=1; "+h(2*time.Hour)+" read=1; ")
	want(store.EngagementFilter{Interval: "day"},
		"00:00 /// clicked=1; 00:00 /// delivered=1; 00:00 /// opened=1; 00:00 /// read=1; 00:00 /// sent=4; ")
	// A range after the sends holds only the receipts; one before, nothing.
	want(store.EngagementFilter{From: at(2 * time.Hour), To: at(3 * time.Hour), Limit: 100}, all)
	want(store.EngagementFilter{From: at(-2 * time.Hour), To: at(-time.Hour), Limit: 100}, "")
	// The limit bounds the groups read (up to Limit+1).
	cs, err := f.s.Engagement(f.ctx, store.EngagementFilter{From: base(), To: at(24 * time.Hour), Interval: "hour", Limit: 1})
	if err != nil || len(cs) > 2*len(store.EngagementEvents) {
		t.Fatalf("Engagement with a limit of 1 = %d rows, %v", len(cs), err)
	}
	for _, bad := range []store.EngagementFilter{
		{}, {From: base(), To: base(), Limit: 1}, {From: base(), To: at(time.Hour), Interval: "week", Limit: 1},
		{From: base(), To: at(time.Hour)},
	} {
		if _, err := f.s.Engagement(f.ctx, bad); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("Engagement(%+v) = %v, want invalid_argument", bad, err)
		}
	}
	// Pruning drops the hours before the cutoff only.
	if n, err := f.s.PruneEngagement(f.ctx, at(2*time.Hour).Truncate(time.Hour)); err != nil || n == 0 {
		t.Fatalf("PruneEngagement = %d, %v", n, err)
	}
	want(store.EngagementFilter{}, all)
}
