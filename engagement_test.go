package herald

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 35 item 3: the engagement report counts each send and each
// receipt once, by the groups asked for, with the rates; it refuses a bad
// query naming the field, a report over Limits.MaxEngagementRows, and
// the leader's maintenance prunes counters older than
// EngagementRetention.
func TestEngagementReport(t *testing.T) {
	p := newPolicyPipeline(t, func(c *Config) { c.Limits.MaxEngagementRows = 2 })
	// Ten minutes into an hour: the receipts a minute after the sends
	// fall in the sends' hour (from the wall clock, a run that started in
	// an hour's last minute counted them in two: CI, session 19).
	p.setClock(time.Date(2026, 11, 22, 3, 10, 0, 0, time.UTC))
	p.user("u1", "Asia/Seoul", "tok-1")
	p.user("u2", "Asia/Seoul", "tok-2")
	a := p.enqueue(Request{UserIDs: []string{"u1", "u2"}, Type: "price_drop"})
	b := p.enqueue(Request{UserID: "u1", Type: "nudge"})
	p.work()
	p.clock.Advance(time.Minute)
	key := func(r Result, i int) string {
		d := p.only(r.Notifications[i].ID)
		return d.IdempotencyKey()
	}
	for range 2 { // a repeated batch counts nothing more
		if _, err := p.client.RecordReceipts(p.ctx, []heraldtype.Receipt{
			{MessageID: key(a, 0), Event: heraldtype.ReceiptDelivered},
			{MessageID: key(a, 0), Event: heraldtype.ReceiptOpened},
			{MessageID: key(a, 1), Event: heraldtype.ReceiptDelivered},
			{MessageID: key(b, 0), Event: heraldtype.ReceiptClicked, Action: "open"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := p.client.Engagement(p.ctx, EngagementQuery{})
	if err != nil {
		t.Fatal(err)
	}
	tot := rep.Total
	if len(rep.Rows) != 1 || tot.Sent != 3 || tot.Delivered != 2 || tot.Opened != 1 || tot.Clicked != 1 ||
		tot.DeliveryRate == nil || *tot.DeliveryRate != 2.0/3 || *tot.OpenRate != 1.0/3 || *tot.ClickRate != 1.0/3 {
		t.Fatalf("report = %+v, total %+v", rep, tot)
	}
	if !rep.To.Equal(p.clock.Now()) || !rep.From.Equal(p.clock.Now().Add(-7*24*time.Hour).Truncate(time.Hour)) {
		t.Fatalf("range %v – %v, want the last seven days", rep.From, rep.To)
	}
	rep, err = p.client.Engagement(p.ctx, EngagementQuery{GroupBy: []string{"type", "channel"}})
	if err != nil || len(rep.Rows) != 2 {
		t.Fatalf("by type = %+v, %v", rep, err)
	}
	if r := rep.Rows[0]; r.Type != "nudge" || r.Channel != heraldtype.ChannelPush || r.Sent != 1 || r.Clicked != 1 {
		t.Fatalf("nudge row = %+v", r)
	}
	if r := rep.Rows[1]; r.Type != "price_drop" || r.Sent != 2 || r.Delivered != 2 || *r.DeliveryRate != 1 {
		t.Fatalf("price_drop row = %+v", r)
	}
	rep, err = p.client.Engagement(p.ctx, EngagementQuery{Type: "nudge", Interval: "hour"})
	if err != nil || len(rep.Rows) != 1 || rep.Rows[0].Start.IsZero() || rep.Total.Sent != 1 {
		t.Fatalf("nudge by the hour = %+v, %v", rep, err)
	}
	// Three groups under a bound of two rows.
	if _, err := p.client.Engagement(p.ctx, EngagementQuery{GroupBy: []string{"type"}, Interval: "hour",
		From: p.clock.Now().Add(-time.Hour), To: p.clock.Now().Add(time.Hour)}); err != nil {
		t.Fatalf("two rows under a bound of two: %v", err)
	}
	p.enqueue(Request{UserID: "u2", Type: "third"})
	p.work()
	if _, err := p.client.Engagement(p.ctx, EngagementQuery{GroupBy: []string{"type"}}); errField(err) != "group_by" {
		t.Fatalf("three rows over a bound of two: %v", err)
	}
	now := p.clock.Now()
	for _, c := range []struct {
		q     EngagementQuery
		field string
	}{
		{EngagementQuery{From: now, To: now.Add(-time.Hour)}, "to"},
		{EngagementQuery{From: now.Add(-401 * 24 * time.Hour)}, "from"},
		{EngagementQuery{Interval: "week"}, "interval"},
		{EngagementQuery{GroupBy: []string{"user"}}, "group_by"},
		{EngagementQuery{GroupBy: []string{"type", "type"}}, "group_by"},
		{EngagementQuery{Channel: "fax"}, "channel"},
	} {
		if _, err := p.client.Engagement(p.ctx, c.q); heraldtype.ErrorCode(err) != heraldtype.EINVALID || errField(err) != c.field {
			t.Errorf("Engagement(%+v) = %v, want invalid_argument on %s", c.q, err, c.field)
		}
	}
	// The counters outlive the deliveries' retention and go after their
	// own.
	p.clock.Advance(DefaultEngagementRetention + 2*time.Hour)
	res, err := p.client.RunMaintenance(p.ctx)
	if err != nil || res.Engagement == 0 {
		t.Fatalf("RunMaintenance = %+v, %v", res, err)
	}
	rep, err = p.client.Engagement(p.ctx, EngagementQuery{From: now.Add(-time.Hour), To: now.Add(time.Hour)})
	if err != nil || rep.Total.Sent != 0 {
		t.Fatalf("after the retention = %+v, %v", rep, err)
	}
}
