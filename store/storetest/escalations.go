package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testEscalations covers escalation steps (issue 36 item 3): an enqueue
// writes one pending row per notification and step in its transaction; a
// claim leases the due ones; the guarded fire enqueues the step's
// notification once (idempotency key escalation:{notification}:{step});
// a receipt, an inbox read and a cancel stop the pending steps they
// answer in their own transaction, and a fire after them refuses.
func testEscalations(t *testing.T, h Harness) {
	steps := []heraldtype.EscalationStep{
		{After: 10 * time.Minute, Unless: heraldtype.ReceiptOpened, Channels: []heraldtype.Channel{heraldtype.ChannelSMS}},
		{After: 30 * time.Minute, Unless: heraldtype.ReceiptRead, Channels: []heraldtype.Channel{heraldtype.ChannelEmail}},
	}
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, h.New)
		f.contact("u1", "+15550001", "u1@example.com")
		f.device("u1", "d1", "android")
		return f
	}
	trigger := func(f *fixture, channels ...heraldtype.Channel) heraldtype.Notification {
		f.t.Helper()
		n := f.on("u1", channels...)
		p := channelParams(n)
		p.Escalate = steps
		f.enqueue(p)
		return n
	}
	// fire builds the step's notification as the escalation worker does
	// and fires it as owner.
	fire := func(f *fixture, c store.ClaimedEscalation, owner, id string, now time.Time) (string, store.EnqueueResult) {
		f.t.Helper()
		n := f.on(c.UserID, c.Channels...)
		n.ID, n.CreatedAt = id, now
		p := channelParams(n)
		p.Now = now
		p.IdempotencyKey = store.EscalationIdempotencyKey(c.NotificationID, c.Step)
		p.IdempotencyNamespace, p.RequestHash = store.EscalationNamespace, "h"
		outcome, _, res, err := f.s.FireEscalation(f.ctx, store.EscalationFire{NotificationID: c.NotificationID, Step: c.Step,
			Owner: owner, Now: now, Enqueue: &p})
		if err != nil {
			f.t.Fatalf("FireEscalation(%s, %d, %s): %v", c.NotificationID, c.Step, owner, err)
		}
		return outcome, res
	}
	claim := func(f *fixture, owner string, now time.Time) []store.ClaimedEscalation {
		f.t.Helper()
		got, err := f.s.ClaimEscalations(f.ctx, store.EscalationClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute),
			Limit: 10})
		if err != nil {
			f.t.Fatalf("ClaimEscalations: %v", err)
		}
		return got
	}
	list := func(f *fixture, id string) []heraldtype.Escalation {
		f.t.Helper()
		es, err := f.s.ListEscalations(f.ctx, id)
		if err != nil {
			f.t.Fatalf("ListEscalations(%s): %v", id, err)
		}
		return es
	}
	t.Run("RowsAtEnqueue", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelPush)
		es := list(f, n.ID)
		if len(es) != 2 || es[0].Step != 1 || !es[0].DueAt.Equal(at(10*time.Minute)) || es[0].State != heraldtype.EscalationPending ||
			es[0].Unless != heraldtype.ReceiptOpened || len(es[0].Channels) != 1 || es[0].Channels[0] != heraldtype.ChannelSMS ||
			es[1].Step != 2 || !es[1].DueAt.Equal(at(30*time.Minute)) {
			t.Fatalf("steps = %+v", es)
		}
		// A notification sent later escalates from its send.
		later := f.on("u1", heraldtype.ChannelPush)
		later.SendAt = at(time.Hour)
		p := channelParams(later)
		p.Escalate = steps[:1]
		f.enqueue(p)
		if es := list(f, later.ID); len(es) != 1 || !es[0].DueAt.Equal(at(70*time.Minute)) {
			t.Fatalf("steps of a scheduled notification = %+v", es)
		}
		if es := list(f, "nope"); len(es) != 0 {
			t.Fatalf("steps of an unknown notification = %+v", es)
		}
		// An enqueue that fails writes no step.
		bad := f.on("ghost", heraldtype.ChannelPush)
		p = channelParams(bad)
		p.Escalate = steps
		if _, err := f.s.Enqueue(f.ctx, p); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("Enqueue(unknown user) = %v", err)
		}
		if es := list(f, bad.ID); len(es) != 0 {
			t.Fatalf("a refused trigger wrote steps %+v", es)
		}
	})
	t.Run("FireOnceUnderTheLease", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelPush)
		if got := claim(f, "w1", at(10*time.Minute-time.Second)); len(got) != 0 {
			t.Fatalf("claimed %d steps before they were due", len(got))
		}
		// w1 claims and dies before its fire; its lease (1 min) ends and
		// w2 claims the step again.
		got := claim(f, "w1", at(10*time.Minute))
		if len(got) != 1 || got[0].NotificationID != n.ID || got[0].Step != 1 || got[0].UserID != "u1" {
			t.Fatalf("w1 claimed %+v", got)
		}
		if more := claim(f, "w2", at(10*time.Minute+30*time.Second)); len(more) != 0 {
			t.Fatalf("w2 claimed %d steps under w1's lease", len(more))
		}
		again := claim(f, "w2", at(11*time.Minute))
		if len(again) != 1 {
			t.Fatalf("w2 re-claimed %+v", again)
		}
		if outcome, _ := fire(f, got[0], "w1", "late", at(11*time.Minute)); outcome != "" {
			t.Fatalf("w1's late fire = %q, want refused", outcome)
		}
		f.noNotification("late")
		outcome, res := fire(f, again[0], "w2", "esc-1", at(11*time.Minute))
		if outcome != heraldtype.EscalationFired || len(res.Notifications) != 1 || res.Notifications[0].ID != "esc-1" {
			t.Fatalf("w2's fire = %q, %+v", outcome, res)
		}
		if outcome, _ := fire(f, again[0], "w2", "twice", at(11*time.Minute)); outcome != "" {
			t.Fatalf("a second fire = %q, want refused", outcome)
		}
		f.noNotification("twice")
		f.byChannel("esc-1", heraldtype.ChannelSMS)
		es := list(f, n.ID)
		if es[0].State != heraldtype.EscalationFired || es[0].NotificationID != "esc-1" || !es[0].DecidedAt.Equal(at(11*time.Minute)) ||
			es[0].Reason != "sent on sms" || es[1].State != heraldtype.EscalationPending {
			t.Fatalf("steps after the fire = %+v", es)
		}
		if more := claim(f, "w3", at(20*time.Minute)); len(more) != 0 {
			t.Fatalf("a fired step was claimed again: %+v", more)
		}
	})
	t.Run("ReceiptStopsWhatItAnswers", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelPush)
		d := f.delivery(n.ID)
		// A delivered receipt answers neither step.
		receipt := func(d heraldtype.Delivery, e heraldtype.ReceiptEvent, when time.Duration) {
			t.Helper()
			if _, err := f.s.RecordReceipts(f.ctx, []store.Receipt{{DeliveryID: d.ID, NotificationID: d.NotificationID, Event: e,
				At: at(when)}}); err != nil {
				t.Fatalf("RecordReceipts: %v", err)
			}
		}
		receipt(d, heraldtype.ReceiptDelivered, time.Minute)
		if es := list(f, n.ID); es[0].State != heraldtype.EscalationPending || es[1].State != heraldtype.EscalationPending {
			t.Fatalf("steps after a delivered receipt = %+v", es)
		}
		// Claimed and then answered: the receipt wins, the fire refuses.
		got := claim(f, "w1", at(10*time.Minute))
		receipt(d, heraldtype.ReceiptOpened, 2*time.Minute)
		es := list(f, n.ID)
		if es[0].State != heraldtype.EscalationStopped || es[0].Reason != "receipt opened" || !es[0].DecidedAt.Equal(at(2*time.Minute)) ||
			es[1].State != heraldtype.EscalationPending {
			t.Fatalf("steps after an opened receipt = %+v", es)
		}
		if outcome, _ := fire(f, got[0], "w1", "late", at(10*time.Minute)); outcome != "" {
			t.Fatalf("fire after the receipt = %q, want refused", outcome)
		}
		f.noNotification("late")
	})
	t.Run("ReceiptOnAStepsMessageStopsTheLaterSteps", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := f.on("u1", heraldtype.ChannelPush)
		p := channelParams(n)
		p.Escalate = []heraldtype.EscalationStep{
			{After: time.Minute, Unless: heraldtype.ReceiptClicked, Channels: []heraldtype.Channel{heraldtype.ChannelPush}},
			{After: time.Hour, Unless: heraldtype.ReceiptClicked, Channels: []heraldtype.Channel{heraldtype.ChannelSMS}},
		}
		f.enqueue(p)
		c := claim(f, "w1", at(time.Minute))
		if outcome, _ := fire(f, c[0], "w1", "esc-1", at(time.Minute)); outcome != heraldtype.EscalationFired {
			t.Fatalf("fire = %q", outcome)
		}
		d := f.delivery("esc-1")
		if _, err := f.s.RecordReceipts(f.ctx, []store.Receipt{{DeliveryID: d.ID, NotificationID: "esc-1",
			Event: heraldtype.ReceiptClicked, At: at(2 * time.Minute)}}); err != nil {
			t.Fatalf("RecordReceipts: %v", err)
		}
		if es := list(f, n.ID); es[1].State != heraldtype.EscalationStopped || es[1].Reason != "receipt clicked" {
			t.Fatalf("steps after a click on the first step's push = %+v", es)
		}
	})
	t.Run("InboxReadStops", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := f.on("u1", heraldtype.ChannelInApp)
		p := channelParams(n)
		p.Escalate = steps[1:]
		res := f.enqueue(p)
		if _, err := f.s.MarkInboxRead(f.ctx, "u1", []int64{res.Inbox[0].ID}, at(time.Minute)); err != nil {
			t.Fatalf("MarkInboxRead: %v", err)
		}
		if es := list(f, n.ID); es[0].State != heraldtype.EscalationStopped || es[0].Reason != "receipt read" {
			t.Fatalf("steps after the inbox read = %+v", es)
		}
		if got := claim(f, "w1", at(time.Hour)); len(got) != 0 {
			t.Fatalf("claimed a stopped step: %+v", got)
		}
	})
	t.Run("CancelStops", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelPush)
		other := trigger(f, heraldtype.ChannelPush)
		f.cancel(store.CancelParams{NotificationIDs: []string{n.ID}, Reason: "by key k1", Now: at(time.Minute)})
		es := list(f, n.ID)
		if es[0].State != heraldtype.EscalationStopped || es[1].State != heraldtype.EscalationStopped ||
			es[0].Reason != "cancelled: by key k1" || !es[0].DecidedAt.Equal(at(time.Minute)) {
			t.Fatalf("steps after the cancel = %+v", es)
		}
		if es := list(f, other.ID); es[0].State != heraldtype.EscalationPending {
			t.Fatalf("another notification's steps = %+v", es)
		}
		// A cancel by id takes back what the notification's fired steps
		// sent, and reports it.
		c := claim(f, "w1", at(10*time.Minute))
		if len(c) != 1 || c[0].NotificationID != other.ID {
			t.Fatalf("claimed %+v", c)
		}
		if outcome, _ := fire(f, c[0], "w1", "esc-other", at(10*time.Minute)); outcome != heraldtype.EscalationFired {
			t.Fatalf("fire = %q", outcome)
		}
		res := f.cancel(store.CancelParams{NotificationIDs: []string{other.ID}, Reason: "by id", Now: at(11 * time.Minute)})
		if !slices.Contains(res.NotificationIDs, "esc-other") {
			t.Fatalf("cancel of %s reported %v, want the escalation's notification too", other.ID, res.NotificationIDs)
		}
		if d := f.byChannel("esc-other", heraldtype.ChannelSMS); d.State != heraldtype.StateCancelled {
			t.Fatalf("the escalation's sms = %s, want cancelled", d.State)
		}
		if es := list(f, other.ID); es[0].State != heraldtype.EscalationFired || es[1].State != heraldtype.EscalationStopped {
			t.Fatalf("steps after the cancel = %+v", es)
		}
	})
	t.Run("PrunedWithTheirNotification", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelInApp)
		recent := f.on("u1", heraldtype.ChannelInApp)
		recent.CreatedAt = at(2 * time.Hour)
		p := channelParams(recent)
		p.Escalate = steps
		f.enqueue(p)
		if pruned, err := f.s.PruneFinished(f.ctx, at(time.Hour), 10); err != nil || pruned != 1 {
			t.Fatalf("PruneFinished = %d, %v; want 1", pruned, err)
		}
		if es := list(f, n.ID); len(es) != 0 {
			t.Fatalf("steps of a pruned notification = %+v", es)
		}
		if es := list(f, recent.ID); len(es) != 2 {
			t.Fatalf("steps of a kept notification = %+v", es)
		}
	})
	t.Run("Failure", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		n := trigger(f, heraldtype.ChannelPush)
		c := claim(f, "w1", at(10*time.Minute))
		outcome, reason, _, err := f.s.FireEscalation(f.ctx, store.EscalationFire{NotificationID: n.ID, Step: c[0].Step, Owner: "w1",
			Now: at(10 * time.Minute), Failure: "type_gone"})
		if err != nil || outcome != heraldtype.EscalationStopped || reason != "type_gone" {
			t.Fatalf("FireEscalation(failure) = %q, %q, %v", outcome, reason, err)
		}
		_, _, _, err = f.s.FireEscalation(f.ctx, store.EscalationFire{NotificationID: n.ID, Step: 0, Owner: "w1", Now: at(0)})
		wantCode(t, err, heraldtype.EINVALID)
	})
}
