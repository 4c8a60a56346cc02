package storetest

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testWebhookDeliveryFinished checks that a delivery reaching a final
// state writes its delivery.finished messages in the transaction of the
// move (issue 35 item 4): one per subscribed, enabled endpoint, only for
// an outcome the lease guard applied, none for a move that is not final,
// none without an endpoint, and a new event id after a replay.
func testWebhookDeliveryFinished(t *testing.T, newStore NewStore) {
	t.Run("NoEndpoint", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", heraldtype.PlatformAndroid)
		f.push("u1")
		jobs := f.claim("w", base(), 10)
		f.complete(1, outcome(jobs[0], store.Sent{}, at(time.Second)))
		// An endpoint created after the outcome gets nothing of it.
		f.webhookEndpoint("later")
		if ms := f.webhookMessages("later", ""); len(ms) != 0 {
			t.Fatalf("messages of an outcome before the endpoint existed: %+v", ms)
		}
	})
	t.Run("Outcomes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all")
		f.webhookEndpoint("finished", heraldtype.WebhookDeliveryFinished)
		f.webhookEndpoint("other", "test.event")
		f.webhookEndpoint("off")
		off := false
		if _, err := f.s.UpdateWebhookEndpoint(f.ctx, "off", store.WebhookEndpointUpdate{Enabled: &off}, base()); err != nil {
			t.Fatal(err)
		}
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		f.device("u1", "i1", heraldtype.PlatformIOS)
		n := f.push("u1")[0]
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 2 {
			t.Fatalf("claimed %d deliveries, want 2", len(jobs))
		}
		sent, retried := jobs[0], jobs[1]
		// A sent outcome writes; a retry (not final) does not; a
		// duplicate of the applied outcome writes nothing more.
		f.complete(2, outcome(sent, store.Sent{ProviderMessageID: "pm"}, at(time.Second)),
			outcome(retried, store.Retry{RunAt: at(time.Minute), Failure: store.Failure{ErrorCode: "unavailable", Error: "503"}}, at(time.Second)))
		f.complete(0, outcome(sent, store.Sent{}, at(2*time.Second)))
		for _, ep := range []string{"all", "finished"} {
			ms := f.webhookMessages(ep, "")
			if len(ms) != 1 {
				t.Fatalf("%s: %d messages after one final outcome, want 1: %+v", ep, len(ms), ms)
			}
			m := ms[0]
			if m.Type != heraldtype.WebhookDeliveryFinished || m.OrderingKey != n.ID || m.State != heraldtype.WebhookPending ||
				m.EventID != fmt.Sprintf("evt_d%dr0", sent.Delivery.ID) {
				t.Fatalf("%s: the message = %+v", ep, m)
			}
			wantTime(t, "OccurredAt", m.OccurredAt, at(time.Second))
			wantTime(t, "RunAt", m.RunAt, at(time.Second))
			var data map[string]any
			if err := json.Unmarshal(m.Data, &data); err != nil {
				t.Fatalf("%s: data %s: %v", ep, m.Data, err)
			}
			want := map[string]any{"delivery_id": float64(sent.Delivery.ID), "notification_id": n.ID, "user_id": "u1",
				"notification_type": n.Type, "channel": "push", "state": "sent", "attempt": float64(1), "error_code": ""}
			if !maps.Equal(data, want) {
				t.Fatalf("%s: data = %v, want %v", ep, data, want)
			}
		}
		for _, ep := range []string{"other", "off"} {
			if ms := f.webhookMessages(ep, ""); len(ms) != 0 {
				t.Fatalf("%s got %+v", ep, ms)
			}
		}
		// The retried delivery dies: its event follows, same ordering key.
		again := f.claim("w", at(time.Minute), 10)
		f.complete(1, outcome(again[0], store.Dead{Failure: store.Failure{ErrorCode: "bad", Error: "refused"}}, at(61*time.Second)))
		ms := f.webhookMessages("finished", "")
		if len(ms) != 2 || ms[0].OrderingKey != n.ID || !strings.Contains(string(ms[0].Data), `"dead"`) ||
			!strings.Contains(string(ms[0].Data), `"bad"`) || ms[0].EventID != fmt.Sprintf("evt_d%dr0", retried.Delivery.ID) {
			t.Fatalf("after the death: %+v", ms)
		}
		// Replayed and sent: a new event, told apart by the replay count.
		if _, err := f.s.ReplayDelivery(f.ctx, retried.Delivery.ID, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		replayed := f.claim("w", at(2*time.Minute), 10)
		f.complete(1, outcome(replayed[0], store.Sent{}, at(2*time.Minute)))
		ms = f.webhookMessages("finished", "")
		if len(ms) != 3 || ms[0].EventID != fmt.Sprintf("evt_d%dr1", retried.Delivery.ID) {
			t.Fatalf("after the replay: %+v", ms)
		}
	})
	t.Run("ReapedUnknown", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all", heraldtype.WebhookDeliveryFinished)
		f.user("u1")
		f.device("u1", "a1", heraldtype.PlatformAndroid)
		n := f.notification("u1")
		n.Guarantee = heraldtype.AtMostOnce
		f.enqueue(params(n))
		f.claim("w", base(), 10)
		// The lease ends with the worker gone: unknown, and reported.
		if _, err := f.s.ReapExpiredLeases(f.ctx, at(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		ms := f.webhookMessages("all", "")
		if len(ms) != 1 || !strings.Contains(string(ms[0].Data), `"unknown"`) || ms[0].OrderingKey != n.ID {
			t.Fatalf("after the reap: %+v", ms)
		}
		wantTime(t, "OccurredAt", ms[0].OccurredAt, at(2*time.Minute))
	})
	t.Run("InboxSent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.webhookEndpoint("all", heraldtype.WebhookDeliveryFinished)
		f.user("u1")
		n := f.on("u1", heraldtype.ChannelInApp)
		n.SendAt = at(time.Minute)
		f.enqueue(params(n))
		jobs := f.claim("w", at(time.Minute), 10)
		if len(jobs) != 1 {
			t.Fatalf("claimed %d, want the scheduled in-app delivery", len(jobs))
		}
		f.complete(1, outcome(jobs[0], store.InboxSent{}, at(time.Minute)))
		ms := f.webhookMessages("all", "")
		if len(ms) != 1 || !strings.Contains(string(ms[0].Data), `"in_app"`) || !strings.Contains(string(ms[0].Data), `"sent"`) {
			t.Fatalf("after the inbox write: %+v", ms)
		}
	})
}
