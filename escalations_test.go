package herald

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// orderEscalation is a type sent to the inbox that escalates to push when
// its inbox item is not read within 10 minutes (issue 36 item 3).
func orderEscalation() TypeConfig {
	return TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp},
		Escalate: []EscalationStepConfig{{After: "10m", Unless: heraldtype.ReceiptRead, Channels: []heraldtype.Channel{heraldtype.ChannelPush}}}}
}

// An unread notification escalates once, on the step's channels, and
// shows the step fired; one read in time, or cancelled, shows it stopped
// and sends nothing more.
func TestEscalationFiresUnlessRead(t *testing.T) {
	p := newPipeline(t, func(c *Config) { c.Types = map[string]TypeConfig{"order": orderEscalation()} })
	p.device("u1", "d1", "tok-1")
	unread := p.enqueue(Request{UserID: "u1", Type: "order", Title: "Shipped"}).Notifications[0].ID
	read := p.enqueue(Request{UserID: "u1", Type: "order", Title: "Shipped"})
	cancelled := p.enqueue(Request{UserID: "u1", Type: "order", Title: "Shipped", CancellationKey: "cart-1"}).Notifications[0].ID
	if es := p.status(unread).Escalations; len(es) != 1 || es[0].State != heraldtype.EscalationPending {
		t.Fatalf("steps of a new notification = %+v", es)
	}
	page, err := p.client.ListInbox(p.ctx, "u1", InboxFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.NotificationID == read.Notifications[0].ID {
			if _, err := p.client.MarkInboxRead(p.ctx, "u1", []int64{it.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := p.client.Cancel(p.ctx, CancelRequest{CancellationKey: "cart-1", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(10*time.Minute - time.Second)
	if n, err := p.client.runEscalationsOnce(p.ctx); err != nil || n != 0 {
		t.Fatalf("claimed %d steps before they were due (%v)", n, err)
	}
	p.clock.Advance(time.Second)
	if n, err := p.client.runEscalationsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("claimed %d steps when due (%v), want the unread one's", n, err)
	}
	es := p.status(unread).Escalations
	if len(es) != 1 || es[0].State != heraldtype.EscalationFired || es[0].NotificationID == "" || es[0].Reason != "sent on push" {
		t.Fatalf("steps of the unread notification = %+v", es)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("sent %d deliveries after the escalation, want its push", sent)
	}
	esc := p.status(es[0].NotificationID)
	if esc.Status != heraldtype.HistorySent || esc.Title != "Shipped" || esc.Source == nil ||
		esc.Source.Kind != heraldtype.SourceEscalation || esc.Source.ID != unread || esc.Source.Count != 1 {
		t.Fatalf("escalated notification = %+v (source %+v)", esc, esc.Source)
	}
	// The history lists the escalation as what made that notification.
	h, err := p.client.ListHistory(p.ctx, HistoryFilter{UserID: "u1"})
	if err != nil || len(h.Notifications) == 0 || h.Notifications[0].NotificationID != es[0].NotificationID ||
		h.Notifications[0].Source == nil || *h.Notifications[0].Source != *esc.Source {
		t.Fatalf("history = %+v, %v; want the escalation first, with its source", h.Notifications, err)
	}
	if es := p.status(read.Notifications[0].ID).Escalations; es[0].State != heraldtype.EscalationStopped || es[0].Reason != "receipt read" {
		t.Fatalf("steps of the read notification = %+v", es)
	}
	if es := p.status(cancelled).Escalations; es[0].State != heraldtype.EscalationStopped || es[0].Reason[:9] != "cancelled" {
		t.Fatalf("steps of the cancelled notification = %+v", es)
	}
	if got := p.em.Messages(); len(got) != 1 {
		t.Fatalf("FCM received %d messages, want the one escalation", len(got))
	}
}

// A worker that dies between its claim and its fire leaves the step
// leased; after the lease another fires it, and the dead worker's late
// fire is refused: one escalated notification (issue 36 item 3).
func TestEscalationCrashBetweenClaimAndFire(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"order": orderEscalation()}
		c.Escalations.Lease = 30 * time.Second
	})
	p.device("u1", "d1", "tok-1")
	id := p.enqueue(Request{UserID: "u1", Type: "order", Title: "Shipped"}).Notifications[0].ID
	p.clock.Advance(10 * time.Minute)
	dead, err := p.store.ClaimEscalations(p.ctx, store.EscalationClaimParams{Owner: "dead", Now: p.clock.Now(),
		LeaseUntil: p.clock.Now().Add(30 * time.Second), Limit: 10})
	if err != nil || len(dead) != 1 {
		t.Fatalf("the doomed claim = %v, %v", dead, err)
	}
	if n, err := p.client.runEscalationsOnce(p.ctx); err != nil || n != 0 {
		t.Fatalf("a worker under the dead lease claimed %d (%v)", n, err)
	}
	p.clock.Advance(30 * time.Second)
	if n, err := p.client.runEscalationsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("after the lease: claimed %d (%v), want 1", n, err)
	}
	late, err := p.client.buildEscalation(p.ctx, dead[0])
	if err != nil {
		t.Fatal(err)
	}
	if outcome, _, _, err := p.store.FireEscalation(p.ctx, store.EscalationFire{NotificationID: id, Step: 1, Owner: "dead",
		Now: p.clock.Now(), Enqueue: late}); err != nil || outcome != "" {
		t.Fatalf("the dead worker's late fire = %q, %v", outcome, err)
	}
	if _, err := p.client.GetNotification(p.ctx, late.Notifications[0].ID); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("the refused fire wrote its notification: %v", err)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("sent %d, want the one escalation", sent)
	}
	if got := p.em.Messages(); len(got) != 1 {
		t.Fatalf("FCM received %d messages, want 1", len(got))
	}
}

func TestEscalationTypeValidation(t *testing.T) {
	p := newPipeline(t, nil)
	push := []heraldtype.Channel{heraldtype.ChannelPush}
	step := func(after string, unless heraldtype.ReceiptEvent, ch []heraldtype.Channel) EscalationStepConfig {
		return EscalationStepConfig{After: after, Unless: unless, Channels: ch}
	}
	six := make([]EscalationStepConfig, 6)
	for i := range six {
		six[i] = step((time.Duration(i+1) * time.Minute).String(), heraldtype.ReceiptRead, push)
	}
	for _, tc := range []struct {
		steps []EscalationStepConfig
		field string
	}{
		{[]EscalationStepConfig{step("", heraldtype.ReceiptRead, push)}, "escalate[0].after"},
		{[]EscalationStepConfig{step("soon", heraldtype.ReceiptRead, push)}, "escalate[0].after"},
		{[]EscalationStepConfig{step("10ms", heraldtype.ReceiptRead, push)}, "escalate[0].after"},
		{[]EscalationStepConfig{step("10m", heraldtype.ReceiptRead, push), step("5m", heraldtype.ReceiptRead, push)}, "escalate[1].after"},
		{[]EscalationStepConfig{step("10m", "seen", push)}, "escalate[0].unless"},
		{[]EscalationStepConfig{step("10m", heraldtype.ReceiptRead, nil)}, "escalate[0].channels"},
		{[]EscalationStepConfig{step("10m", heraldtype.ReceiptRead, []heraldtype.Channel{"fax"})}, "escalate[0].channels"},
		{[]EscalationStepConfig{step("10m", heraldtype.ReceiptRead, []heraldtype.Channel{"sms", "sms"})}, "escalate[0].channels"},
		{six, "escalate"},
	} {
		_, err := p.client.PutType(p.ctx, "order", TypeConfig{Escalate: tc.steps})
		var he *heraldtype.Error
		if heraldtype.ErrorCode(err) != heraldtype.EINVALID || !errors.As(err, &he) || he.Field != tc.field {
			t.Errorf("PutType(%+v) = %v, want invalid_argument on %s", tc.steps, err, tc.field)
		}
	}
	got, err := p.client.PutType(p.ctx, "order", TypeConfig{Escalate: six[:5]})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Escalate) != 5 || got.Escalate[4].After != "5m0s" || got.Escalate[0].Unless != heraldtype.ReceiptRead {
		t.Fatalf("stored escalation = %+v", got.Escalate)
	}
	if got, err := p.client.PutType(p.ctx, "plain", TypeConfig{}); err != nil || got.Escalate == nil || len(got.Escalate) != 0 {
		t.Fatalf("a type without escalation shows %#v (%v), want []", got.Escalate, err)
	}
}
