package herald

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Issue 20 item 3: interests are kept InterestRetention (90 days) after
// they were last shown, and a stopped reminder ReminderConfig.Retention
// (30 days) after it stopped; the leader prunes both (RunMaintenance on
// demand). A later record of an interest moves its time on.
func TestInterestsAndStoppedRemindersArePruned(t *testing.T) {
	p := newReminderPipeline(t)
	n, err := p.client.RecordInterests(p.ctx, []InterestInput{
		{UserID: "u1", Subject: "product:42", Kind: "VIEW"},
		{UserID: "u1", Subject: "product:7", Kind: "WATCH"},
	})
	if err != nil || n != 2 {
		t.Fatalf("RecordInterests = %d, %v", n, err)
	}
	if _, _, err := p.client.PutReminder(p.ctx, cartReminder("cart-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.CancelReminders(p.ctx, ReminderSelector{UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	// 60 days on, product:42 is viewed again: only product:7's ages out
	// at 91 days; the reminder stopped 91 days ago goes too.
	p.clock.Advance(60 * 24 * time.Hour)
	if _, err := p.client.RecordInterests(p.ctx, []InterestInput{{UserID: "u1", Subject: "product:42", Kind: "VIEW"}}); err != nil {
		t.Fatal(err)
	}
	r, err := p.client.RunMaintenance(p.ctx)
	if err != nil || r.Interests != 0 || r.Reminders != 1 {
		t.Fatalf("after 60 days: %+v, %v; want the reminder stopped 60 days ago pruned, no interest", r, err)
	}
	p.clock.Advance(31 * 24 * time.Hour)
	r, err = p.client.RunMaintenance(p.ctx)
	if err != nil || r.Interests != 1 {
		t.Fatalf("after 91 days: %+v, %v; want product:7's interest pruned", r, err)
	}
	page, err := p.client.ListInterests(p.ctx, InterestFilter{UserID: "u1"})
	if err != nil || len(page.Interests) != 1 || page.Interests[0].Subject != "product:42" {
		t.Fatalf("left: %+v, %v", page, err)
	}
	if _, err := p.client.GetReminder(p.ctx, "cart-1"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("the stopped reminder is still there: %v", err)
	}
}
