package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald"
	kafkaemu "github.com/heraldhq/herald/emulator/kafka"
	"github.com/heraldhq/herald/kafkaapi"
)

// TestKafkaIntakeSurvivesSIGKILL: a herald process consuming notification
// requests from Kafka is SIGKILLed mid-stream — records applied whose
// offsets were never committed — and a second process takes the group
// over. Every request becomes exactly one notification: zero missing,
// zero duplicates (issue 20 item 1, S3.1, S4.1).
func TestKafkaIntakeSurvivesSIGKILL(t *testing.T) {
	c := newCluster(t)
	const users, perUser = 200, 15
	ids := c.users(users)
	const topic = "requests.v1"
	broker, err := kafkaemu.Start(kafkaemu.Config{Topics: []string{topic, topic + ".dlq"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var recs []*kgo.Record
	for i, u := range ids {
		for j := range perUser {
			v, _ := json.Marshal(kafkaapi.NotificationEvent{NotificationID: fmt.Sprintf("n-%d-%d", i, j), UserID: u,
				NotificationType: "PRICE_DROP", Title: "Price drop", Body: fmt.Sprintf("item %d", j), Channels: []string{"PUSH"}})
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(u), Value: v})
		}
	}
	if err := prod.ProduceSync(c.ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	env := append(c.env[:len(c.env):len(c.env)],
		"HERALD_KAFKA__BROKERS="+broker.Addr(),
		"HERALD_KAFKA__NOTIFICATION_TOPICS="+topic,
		"HERALD_KAFKA__EVENT_TOPICS=",
		// Small polls: many offset commits, so the kill lands between
		// an applied record and its commit.
		"HERALD_KAFKA__MAX_POLL_RECORDS=50",
		// The killed member's partitions move to the next one after this.
		"HERALD_KAFKA__SESSION_TIMEOUT=6s",
	)
	total := users * perUser
	a := startInstance(t, env)
	deadline := time.Now().Add(2 * time.Minute)
	for c.notifications(ids) < total/3 {
		if time.Now().After(deadline) {
			t.Fatalf("a third was not consumed within 2 minutes:\n%s", a.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.kill(t)
	atKill := c.notifications(ids)
	b := startInstance(t, env)
	deadline = time.Now().Add(3 * time.Minute)
	for c.notifications(ids) < total {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications after 3 minutes:\n%s", c.notifications(ids), total, b.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.waitSettled(2*time.Minute, b)
	// Exactly perUser per user, each under its own notificationId.
	for i, u := range ids {
		page, err := c.client.ListHistory(c.ctx, herald.HistoryFilter{UserID: u, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Notifications) != perUser {
			t.Fatalf("user %s has %d notifications, want %d", u, len(page.Notifications), perUser)
		}
		keys := map[string]bool{}
		for _, e := range page.Notifications {
			n, err := c.client.GetNotification(c.ctx, e.NotificationID)
			if err != nil {
				t.Fatal(err)
			}
			if keys[n.IdempotencyKey] {
				t.Fatalf("user %s: request %s enqueued twice", u, n.IdempotencyKey)
			}
			keys[n.IdempotencyKey] = true
		}
		if i == 0 && !keys["n-0-0"] {
			t.Fatalf("user %s's notifications are not keyed by notificationId: %v", u, keys)
		}
	}
	t.Logf("%d requests; %d applied when instance A was killed; all %d notifications exactly once", total, atKill, total)
}

// notifications counts the deliveries in every state: one per
// notification here, since each user has one device.
func (c *cluster) notifications([]string) int {
	c.t.Helper()
	n := 0
	for _, k := range c.stats() {
		n += k
	}
	return n
}
