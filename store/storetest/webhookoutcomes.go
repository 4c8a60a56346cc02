package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// statusEvent is the data of a notification.status_changed message.
type statusEvent struct {
	NotificationID   string                                          `json:"notification_id"`
	UserID           string                                          `json:"user_id"`
	NotificationType string                                          `json:"notification_type"`
	Status           heraldtype.HistoryStatus                        `json:"status"`
	Reason           string                                          `json:"reason"`
	ChannelStatus    map[heraldtype.Channel]heraldtype.HistoryStatus `json:"channel_status"`
}

// messagesOf returns the endpoint's messages of type typ, oldest first.
func (f *fixture) messagesOf(endpoint, typ string) []heraldtype.WebhookMessage {
	f.t.Helper()
	var out []heraldtype.WebhookMessage
	ms := f.webhookMessages(endpoint, "")
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Type == typ {
			out = append(out, ms[i])
		}
	}
	return out
}

// wantStatusEvent fails unless m is n's notification.status_changed with
// the event id evt_n<id>r<replays>, at occurred, and the status, reason
// and channel_status that GET /v1/notifications/{id} reports now
// (rules.DeliveriesStatus over the notification's deliveries), which must
// be want.
func (f *fixture) wantStatusEvent(m heraldtype.WebhookMessage, n heraldtype.Notification, replays int, occurred time.Time,
	want heraldtype.HistoryStatus) statusEvent {
	f.t.Helper()
	if m.Type != heraldtype.WebhookNotificationStatusChanged || m.OrderingKey != n.ID ||
		m.EventID != fmt.Sprintf("evt_n%sr%d", n.ID, replays) {
		f.t.Fatalf("status message = %+v, want %s's, id evt_n%sr%d", m, n.ID, n.ID, replays)
	}
	wantTime(f.t, "OccurredAt", m.OccurredAt, occurred)
	var got statusEvent
	if err := json.Unmarshal(m.Data, &got); err != nil {
		f.t.Fatalf("status data %s: %v", m.Data, err)
	}
	st, reason, perCh := rules.DeliveriesStatus(n.Channels, f.deliveries(n.ID))
	if got.NotificationID != n.ID || got.UserID != n.UserID || got.NotificationType != n.Type || got.Status != st ||
		got.Reason != reason || !maps.Equal(got.ChannelStatus, perCh) {
		f.t.Fatalf("status data = %+v, want what the notification reports: %s (%s) %v", got, st, reason, perCh)
	}
	if got.Status != want {
		f.t.Fatalf("status %s, want %s", got.Status, want)
	}
	return got
}

// testWebhookOutcomeEvents checks the notification.status_changed and
// dead_letter.created messages an outcome writes with its moves (issue 35
// item 4): a notification is reported once, when its last delivery still
// to be decided finishes — whether its deliveries finish in separate
// batches, in one, or at once on two connections — with the status GET
// reports; again, under a new id, after a replay makes it final again;
// never for a move that leaves it live (a retry, a deferral); and a
// delivery that dies is a dead letter.
func testWebhookOutcomeEvents(t *testing.T, newStore NewStore) {
	// three returns a push notification to three devices of u1, claimed.
	three := func(f *fixture) (heraldtype.Notification, []heraldtype.Job) {
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		f.device("u1", "a2", heraldtype.PlatformAndroid)
		n := f.push("u1")[0]
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 3 {
			t.Fatalf("claimed %d deliveries, want 3", len(jobs))
		}
		return n, jobs
	}
	dead := store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED", Error: "token gone"}}
	t.Run("SeparateBatches", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		f.webhookEndpoint("status", heraldtype.WebhookNotificationStatusChanged)
		n, jobs := three(f)
		f.complete(1, outcome(jobs[0], store.Sent{}, at(time.Second)))
		f.complete(1, outcome(jobs[1], dead, at(2*time.Second)))
		if ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged); len(ms) != 0 {
			t.Fatalf("a status event while a delivery is leased: %+v", ms)
		}
		f.complete(1, outcome(jobs[2], store.Sent{}, at(3*time.Second)))
		ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 1 || len(f.webhookMessages("status", "")) != 1 {
			t.Fatalf("status endpoint got %+v, want one status event", f.webhookMessages("status", ""))
		}
		got := f.wantStatusEvent(ms[0], n, 0, at(3*time.Second), heraldtype.HistoryPartiallySent)
		if got.Reason != "UNREGISTERED" || got.ChannelStatus[heraldtype.ChannelPush] != heraldtype.HistoryPartiallySent {
			t.Fatalf("status data = %+v", got)
		}
		// The endpoint of every type has them all, in order: each
		// delivery's, the dead letter after its delivery.finished, the
		// status last.
		all := f.webhookMessages("all", "")
		var order []string
		for i := len(all) - 1; i >= 0; i-- {
			order = append(order, all[i].Type)
		}
		want := []string{heraldtype.WebhookDeliveryFinished, heraldtype.WebhookDeliveryFinished, heraldtype.WebhookDeadLetterCreated,
			heraldtype.WebhookDeliveryFinished, heraldtype.WebhookNotificationStatusChanged}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Fatalf("messages in order %v, want %v", order, want)
		}
	})
	t.Run("OneBatch", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		n, jobs := three(f)
		os := []store.Outcome{outcome(jobs[0], store.Sent{}, at(time.Second)), outcome(jobs[1], store.Sent{}, at(2*time.Second)),
			outcome(jobs[2], store.Sent{}, at(time.Second))}
		f.complete(3, os...)
		f.complete(0, os...) // a retried batch: nothing applies, nothing more is written
		ms := f.messagesOf("all", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 1 {
			t.Fatalf("%d status events, want 1: %+v", len(ms), ms)
		}
		f.wantStatusEvent(ms[0], n, 0, at(2*time.Second), heraldtype.HistorySent)
		all := f.webhookMessages("all", "")
		if len(all) != 4 || all[0].Type != heraldtype.WebhookNotificationStatusChanged {
			t.Fatalf("messages (newest first) = %+v, want the status after three delivery.finished", all)
		}
	})
	t.Run("AtOnce", func(t *testing.T) {
		t.Parallel()
		// The last two deliveries of a notification finish at the same
		// moment on two connections: one of the two reports it.
		f := newFixture(t, newStore)
		f.webhookEndpoint("status", heraldtype.WebhookNotificationStatusChanged)
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		const rounds = 8
		var ns []heraldtype.Notification
		for r := range rounds {
			n := f.push("u1")[0]
			ns = append(ns, n)
			now := at(time.Duration(r) * time.Minute)
			j1, j2 := f.claim("w1", now, 1), f.claim("w2", now, 1)
			if len(j1) != 1 || len(j2) != 1 {
				t.Fatalf("round %d: claimed %d and %d, want one each", r, len(j1), len(j2))
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, j := range [][]heraldtype.Job{j1, j2} {
				wg.Go(func() {
					_, errs[i] = f.s.Complete(f.ctx, []store.Outcome{outcome(j[0], store.Sent{}, now)})
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("round %d: Complete: %v", r, err)
				}
			}
		}
		ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != rounds {
			t.Fatalf("%d status events for %d notifications, want one each: %+v", len(ms), rounds, ms)
		}
		seen := map[string]bool{}
		for _, m := range ms {
			seen[m.OrderingKey] = true
		}
		for _, n := range ns {
			if !seen[n.ID] {
				t.Fatalf("no status event of %s: %+v", n.ID, ms)
			}
		}
	})
	t.Run("ReplayAndDeadLetters", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("status", heraldtype.WebhookNotificationStatusChanged)
		f.webhookEndpoint("dead", heraldtype.WebhookDeadLetterCreated)
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		n := f.push("u1")[0]
		jobs := f.claim("w", base(), 10)
		f.complete(1, outcome(jobs[0], dead, at(time.Second)))
		id := jobs[0].Delivery.ID
		f.wantStatusEvent(f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)[0], n, 0, at(time.Second),
			heraldtype.HistoryFailed)
		letters := f.webhookMessages("dead", "")
		if len(letters) != 1 || letters[0].Type != heraldtype.WebhookDeadLetterCreated || letters[0].OrderingKey != n.ID ||
			letters[0].EventID != fmt.Sprintf("evt_dl%dr0", id) {
			t.Fatalf("dead letter messages = %+v", letters)
		}
		wantTime(t, "OccurredAt", letters[0].OccurredAt, at(time.Second))
		var data map[string]any
		if err := json.Unmarshal(letters[0].Data, &data); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"list": "deliveries", "delivery_id": float64(id), "notification_id": n.ID, "user_id": "u1",
			"notification_type": n.Type, "channel": "push", "state": "dead", "attempt": float64(1),
			"error_code": "UNREGISTERED", "error": "token gone"}
		if !maps.Equal(data, want) {
			t.Fatalf("dead letter data = %v, want %v", data, want)
		}

		// Replayed and sent: final again, a new event id.
		if _, err := f.s.ReplayDelivery(f.ctx, id, at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		again := f.claim("w", at(time.Minute), 10)
		f.complete(1, outcome(again[0], store.Sent{}, at(61*time.Second)))
		ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 2 {
			t.Fatalf("%d status events after the replay, want 2", len(ms))
		}
		f.wantStatusEvent(ms[1], n, 1, at(61*time.Second), heraldtype.HistorySent)
		if got := f.webhookMessages("dead", ""); len(got) != 1 {
			t.Fatalf("a sent replay is no dead letter: %+v", got)
		}
	})
	t.Run("StillLive", func(t *testing.T) {
		t.Parallel()
		// A retry and a deferral to the end of quiet hours leave the
		// notification live: no status event (DEFERRED is not reported).
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		n := f.push("u1")[0]
		jobs := f.claim("w", base(), 10)
		f.complete(2, outcome(jobs[0], store.Retry{RunAt: at(time.Minute), Failure: store.Failure{ErrorCode: "UNAVAILABLE", Error: "503"}}, at(time.Second)),
			outcome(jobs[1], store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: at(8 * time.Hour),
				ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours"}, at(time.Second)))
		if ms := f.webhookMessages("all", ""); len(ms) != 0 {
			t.Fatalf("messages of moves that leave %s live: %+v", n.ID, ms)
		}
	})
	t.Run("Unsubscribed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("finished", heraldtype.WebhookDeliveryFinished)
		f.webhookEndpoint("off")
		off := false
		if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "off", store.WebhookEndpointUpdate{Enabled: &off}, base()); err != nil {
			t.Fatal(err)
		}
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.push("u1")
		jobs := f.claim("w", base(), 10)
		f.complete(1, outcome(jobs[0], dead, at(time.Second)))
		if ms := f.webhookMessages("finished", ""); len(ms) != 1 || ms[0].Type != heraldtype.WebhookDeliveryFinished {
			t.Fatalf("finished endpoint got %+v, want its delivery.finished only", ms)
		}
		if ms := f.webhookMessages("off", ""); len(ms) != 0 {
			t.Fatalf("disabled endpoint got %+v", ms)
		}
	})
	t.Run("ChannelStatus", func(t *testing.T) {
		t.Parallel()
		// push asked for without a device (no delivery: FAILED), sms sent,
		// in_app in the inbox at enqueue: the event's channel_status is
		// the detail's.
		f := newFixture(t, newStore)
		f.webhookEndpoint("status", heraldtype.WebhookNotificationStatusChanged)
		f.contact("u1", "+15550001", "")
		n := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelInApp)
		f.enqueue(channelParams(n))
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 1 || jobs[0].Delivery.Channel != heraldtype.ChannelSMS {
			t.Fatalf("claimed %+v, want the sms delivery", jobs)
		}
		f.complete(1, outcome(jobs[0], store.Sent{ProviderMessageID: "SM1"}, at(time.Second)))
		ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 1 {
			t.Fatalf("%d status events, want 1", len(ms))
		}
		got := f.wantStatusEvent(ms[0], n, 0, at(time.Second), heraldtype.HistorySent)
		want := map[heraldtype.Channel]heraldtype.HistoryStatus{heraldtype.ChannelPush: heraldtype.HistoryFailed,
			heraldtype.ChannelSMS: heraldtype.HistorySent, heraldtype.ChannelInApp: heraldtype.HistorySent}
		if !maps.Equal(got.ChannelStatus, want) {
			t.Fatalf("channel_status = %v, want %v", got.ChannelStatus, want)
		}
	})
	t.Run("Reaped", func(t *testing.T) {
		t.Parallel()
		// An at_most_once delivery whose lease ends with its worker gone
		// is unknown: a dead letter, and its notification FAILED.
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		n := f.notification("u1")
		n.Guarantee = heraldtype.AtMostOnce
		f.enqueue(params(n))
		f.claim("w", base(), 10)
		if _, err := f.s.ReapExpiredLeases(f.ctx, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		all := f.webhookMessages("all", "")
		if len(all) != 3 || all[1].Type != heraldtype.WebhookDeadLetterCreated || all[2].Type != heraldtype.WebhookDeliveryFinished {
			t.Fatalf("after the reap (newest first): %+v", all)
		}
		got := f.wantStatusEvent(all[0], n, 0, at(2*time.Minute), heraldtype.HistoryFailed)
		if got.Reason != "lease_expired" {
			t.Fatalf("reason %q, want lease_expired", got.Reason)
		}
	})
	t.Run("InboxSent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("status", heraldtype.WebhookNotificationStatusChanged)
		f.user("u1")
		n := f.on("u1", heraldtype.ChannelInApp)
		n.SendAt = at(time.Minute)
		f.enqueue(params(n))
		jobs := f.claim("w", at(time.Minute), 10)
		f.complete(1, outcome(jobs[0], store.InboxSent{}, at(time.Minute)))
		ms := f.messagesOf("status", heraldtype.WebhookNotificationStatusChanged)
		if len(ms) != 1 {
			t.Fatalf("%d status events, want 1", len(ms))
		}
		f.wantStatusEvent(ms[0], n, 0, at(time.Minute), heraldtype.HistorySent)
	})
}
