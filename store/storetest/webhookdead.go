package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// DeadWebhookMessage writes the event eventID for the endpoint (its
// ordering key the event's id) and makes it a dead letter as the
// dispatcher would after its last failed attempt, answered status with
// errText: it streams the endpoint's log and copies every event past the
// cursor into the retry table, dead. It returns the message's seq. For
// the tests of the surfaces that list and replay dead letters (httpapi,
// console).
func DeadWebhookMessage(t testing.TB, s store.Store, endpoint, eventID string, status int, errText string) int64 {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	if _, err := s.AddWebhookEvents(ctx, []store.WebhookEvent{{EventID: eventID, Type: heraldtype.WebhookDeliveryFinished,
		OrderingKey: eventID, Data: []byte(`{"state":"sent"}`), At: now, EndpointID: endpoint}}); err != nil {
		t.Fatal(err)
	}
	var seq int64
	deadline := time.Now().Add(10 * time.Second)
	for seq == 0 {
		st, err := s.ClaimWebhookStream(ctx, store.WebhookStreamClaim{Owner: "storetest", Now: now, LeaseUntil: now.Add(time.Minute),
			Limit: store.MaxWebhookClaim})
		if err != nil {
			t.Fatal(err)
		}
		if st == nil {
			// On PostgreSQL an event streams once every older
			// transaction has ended.
			if time.Now().After(deadline) {
				t.Fatalf("the event %s never reached the stream", eventID)
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		a := store.WebhookStreamAdvance{EndpointID: st.EndpointID, Owner: "storetest", At: now, Failed: true,
			Through: st.Events[len(st.Events)-1].Position()}
		for _, e := range st.Events {
			a.Moves = append(a.Moves, store.WebhookMove{Event: e, State: heraldtype.WebhookDead, Attempt: 1, FirstAt: e.OccurredAt,
				LastStatus: status, LastError: errText})
			if e.EventID == eventID {
				seq = e.Seq
			}
		}
		if applied, _, err := s.AdvanceWebhookStream(ctx, a); err != nil || !applied {
			t.Fatalf("AdvanceWebhookStream = %v, %v", applied, err)
		}
	}
	return seq
}
