package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/heraldhq/herald"
	kafkaemu "github.com/heraldhq/herald/emulator/kafka"
	"github.com/heraldhq/herald/heraldtype"
)

// TestKafkaEventRulesSurviveSIGKILL: a herald process applying product
// events from a Kafka topic to a price-drop rule is SIGKILLed mid-stream —
// events applied (their runs recorded, some fanned out) whose offsets were
// never committed, fan-outs cut between two batches — and a second process
// takes the group and the leadership over. Every (event, interested user)
// becomes exactly one notification: zero missing, zero duplicates, nobody
// outside the audience (issue 20 items 1 and 4, S3.1, S3.5, S3.13).
func TestKafkaEventRulesSurviveSIGKILL(t *testing.T) {
	c := newCluster(t)
	const users, products, events = 200, 50, 6
	ids := c.users(users)
	// user i watches product i % products; the last 20 users watch a
	// product no event is about.
	var in []herald.InterestInput
	audience := map[string][]string{}
	for i, u := range ids {
		p := fmt.Sprintf("product:%d", i%products)
		if i >= users-20 {
			p = "product:none"
		}
		audience[p] = append(audience[p], u)
		in = append(in, herald.InterestInput{UserID: u, Subject: p, Kind: "VIEW"})
	}
	if _, err := c.client.RecordInterests(c.ctx, in); err != nil {
		t.Fatal(err)
	}
	const topic = "product.inventory.v1"
	if _, err := c.client.PutType(c.ctx, "price_drop", herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelPush}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.client.PutRule(c.ctx, herald.Rule{Name: "price-drop", Source: heraldtype.RuleSource{KafkaTopic: topic},
		When:     heraldtype.RuleWhen{Event: "PRICE_CHANGE", Detect: heraldtype.Detector{PriceDropPct: 10}},
		Audience: heraldtype.RuleAudience{Interest: &heraldtype.InterestAudience{Kinds: []string{"VIEW"}}},
		Notify:   heraldtype.RuleNotify{Type: "price_drop", Title: "{{.subject}} is {{.drop_pct}}% off"}})
	if err != nil {
		t.Fatal(err)
	}
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
	want := 0
	for j := range events {
		for p := range products {
			subject := fmt.Sprintf("product:%d", p)
			v, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("e-%d-%d", p, j), "name": "PRICE_CHANGE", "subject": subject,
				"version": j + 1, "data": map[string]any{"previous_price": 10000, "current_price": 8000}})
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(subject), Value: v})
			want += len(audience[subject])
		}
	}
	if err := prod.ProduceSync(c.ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	env := append(c.env[:len(c.env):len(c.env)],
		"HERALD_KAFKA__BROKERS="+broker.Addr(),
		"HERALD_KAFKA__NOTIFICATION_TOPICS=",
		"HERALD_KAFKA__EVENT_TOPICS="+topic,
		"HERALD_KAFKA__MAX_POLL_RECORDS=20",
		"HERALD_KAFKA__SESSION_TIMEOUT=6s",
		// Small batches: the kill lands between two batches of a run.
		"HERALD_RULES__BATCH_SIZE=2",
	)
	a := startInstance(t, env)
	deadline := time.Now().Add(2 * time.Minute)
	for c.notifications(ids) < want/3 {
		if time.Now().After(deadline) {
			t.Fatalf("a third was not fanned out within 2 minutes (%d of %d):\n%s", c.notifications(ids), want, a.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.kill(t)
	atKill := c.notifications(ids)
	b := startInstance(t, env)
	deadline = time.Now().Add(3 * time.Minute)
	for c.notifications(ids) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications after 3 minutes:\n%s", c.notifications(ids), want, b.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.waitSettled(2*time.Minute, b)
	// Each user: one notification per event about their product, each
	// naming its event; nothing for the users of the product no event
	// is about.
	for i, u := range ids {
		page, err := c.client.ListHistory(c.ctx, herald.HistoryFilter{UserID: u, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		wantN := events
		if i >= users-20 {
			wantN = 0
		}
		seen := map[string]bool{}
		for _, e := range page.Notifications {
			n, err := c.client.GetNotification(c.ctx, e.NotificationID)
			if err != nil {
				t.Fatal(err)
			}
			if n.Source == nil || n.Source.Kind != heraldtype.SourceRule || n.Source.Name != "price-drop" {
				t.Fatalf("user %s: a notification without its rule: %+v", u, n.Source)
			}
			if seen[n.Source.ID] {
				t.Fatalf("user %s: event %s notified twice", u, n.Source.ID)
			}
			seen[n.Source.ID] = true
		}
		if len(seen) != wantN {
			t.Fatalf("user %s has %d notifications, want %d", u, len(seen), wantN)
		}
	}
	runs, err := c.client.ListRuleRuns(c.ctx, heraldtype.RuleRunFilter{Rule: "price-drop", Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if runs.NextCursor == "" || len(runs.Runs) != 200 {
		t.Fatalf("%d runs on the first page (next %q), want 200 and more", len(runs.Runs), runs.NextCursor)
	}
	for _, r := range runs.Runs {
		if r.State != heraldtype.RunDone {
			t.Fatalf("run %s is %s (%s)", r.ID, r.State, r.LastError)
		}
	}
	t.Logf("%d events, %d notifications; %d when instance A was killed; all exactly once", len(recs), want, atKill)
}
