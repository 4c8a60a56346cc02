package console_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// TestEscalationViews (issue 36 items 3 and 5): a type's page lists its
// escalation steps; a notification's timeline shows a fired step as an
// escalated decision linking to what it sent (whose cause links back), a
// stopped one as escalation_stopped with the receipt, a pending one when
// it is due.
func TestEscalationViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{dev: true, workers: true})
	ctx := context.Background()
	if _, err := e.client.PutUser(ctx, "u-1", herald.UserInput{Timezone: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.PutType(ctx, "order", herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp},
		Escalate: []herald.EscalationStepConfig{
			{After: "1s", Unless: heraldtype.ReceiptRead, Channels: []heraldtype.Channel{heraldtype.ChannelPush}},
			{After: "1h", Unless: heraldtype.ReceiptRead, Channels: []heraldtype.Channel{heraldtype.ChannelEmail}},
		}}); err != nil {
		t.Fatal(err)
	}
	typ := e.get("/console/types/order").expect(t, 200)
	wellFormed(t, typ.body)
	typ.has(t, `id="escalation-steps"`, `data-step="1"`, `data-step="2"`, `<td>1s</td><td>read</td><td>push</td>`)
	unread, err := e.client.Enqueue(ctx, herald.Request{UserID: "u-1", Type: "order", Title: "Ready"})
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.client.Enqueue(ctx, herald.Request{UserID: "u-1", Type: "order", Title: "Ready"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := e.client.ListInbox(ctx, "u-1", herald.InboxFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range page.Items {
		if it.NotificationID == read.Notifications[0].ID {
			if _, err := e.client.MarkInboxRead(ctx, "u-1", []int64{it.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	id := unread.Notifications[0].ID
	var sent string
	for deadline := time.Now().Add(10 * time.Second); sent == ""; time.Sleep(20 * time.Millisecond) {
		n, err := e.client.GetNotification(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if es := n.Escalations; len(es) > 0 && es[0].State == heraldtype.EscalationFired {
			sent = es[0].NotificationID
		}
		if time.Now().After(deadline) {
			t.Fatal("the escalation did not fire")
		}
	}
	p := e.get("/console/notifications/"+id).expect(t, 200)
	wellFormed(t, p.body)
	p.has(t, `data-kind="escalated"`, `href="/console/notifications/`+sent+`"`, `sent on push`, `data-kind="escalation_pending"`)
	s := e.get("/console/notifications/"+sent).expect(t, 200)
	s.has(t, `data-kind="escalation"`, `href="/console/notifications/`+id+`"`).lacks(t, `data-kind="trigger"`)
	r := e.get("/console/notifications/"+read.Notifications[0].ID).expect(t, 200)
	r.has(t, `data-kind="escalation_stopped"`, `receipt read`)
}
