package kafkaapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/kafkaapi"
)

// appliedClient passes every call to the real client and counts those
// that succeeded, by topic (interests by kind: their input names no
// topic).
type appliedClient struct {
	kafkaapi.Client
	mu      sync.Mutex
	applied map[string]int
}

func (c *appliedClient) count(key string, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applied == nil {
		c.applied = map[string]int{}
	}
	c.applied[key]++
}

func (c *appliedClient) of(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied[key]
}

func (c *appliedClient) Enqueue(ctx context.Context, r herald.Request) (herald.Result, error) {
	res, err := c.Client.Enqueue(ctx, r)
	c.count(strings.TrimPrefix(r.IdempotencyNamespace, "kafka:"), err)
	return res, err
}

func (c *appliedClient) Track(ctx context.Context, e herald.Event) (herald.TrackResult, error) {
	res, err := c.Client.Track(ctx, e)
	c.count(e.Topic, err)
	return res, err
}

func (c *appliedClient) RecordInterests(ctx context.Context, in []herald.InterestInput) (int, error) {
	n, err := c.Client.RecordInterests(ctx, in)
	c.count("interests", err)
	return n, err
}

// deadEvents lists every dead event of topic, oldest first.
func (f *fixture) deadEvents(topic string) []herald.DeadEvent {
	f.t.Helper()
	page, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{Topic: topic, Limit: 200})
	if err != nil {
		f.t.Fatal(err)
	}
	out := make([]herald.DeadEvent, len(page.DeadEvents))
	for i, d := range page.DeadEvents {
		out[len(out)-1-i] = d
	}
	return out
}

// Issue 30 item 1: no record stops intake. On each kind of topic — JSON
// notification requests, Avro notification requests, interests, JSON
// events, Avro events with a fixed schema and through the registry — a
// tombstone, an empty value and random bytes are each dead-lettered (the
// tombstone kept as one), and the good record after them is applied, on
// every topic.
func TestNoRecordStopsIntake(t *testing.T) {
	f := newFixture(t)
	f.users(1)
	reg := srfake.New()
	defer reg.Close()
	productText, requestText := seedSchema(t, "ProductInventoryEvent"), seedSchema(t, "NotificationEvent")
	productSchema, requestSchema := avro.MustParse(productText), avro.MustParse(requestText)
	const avroRequests, avroEvents, wireEvents = "requests.avro.v1", "product.raw.v1", "product.inventory.v1"
	id, _, err := reg.RegisterSchema(wireEvents+"-value", sr.Schema{Schema: productText, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	var h sr.ConfluentHeader
	wire := func(payload []byte) []byte {
		b, _ := h.AppendEncode(nil, id, nil)
		return append(b, payload...)
	}
	rnd := rand.New(rand.NewPCG(30, 1))
	random := func() []byte {
		b := make([]byte, 48)
		for i := range b {
			b[i] = byte(rnd.UintN(256))
		}
		return b
	}
	good := map[string][]byte{
		requests:       request("n-good", user(0)),
		avroRequests:   avroRequest(t, requestSchema, "n-good-avro", user(0)),
		"interests.v1": []byte(`{"user_id":"u000","subject":"product:42","kind":"VIEW"}`),
		"events.v1":    []byte(`{"id":"e-good","name":"checkout","user_id":"u000"}`),
		avroEvents:     priceChange(t, productSchema, "e-good", 10000, 8500),
		wireEvents:     wire(priceChange(t, productSchema, "e-good", 10000, 8500)),
	}
	bad := map[string]int{}
	for topic, rec := range good {
		vals := [][]byte{nil, {}, random()}
		if topic == wireEvents {
			vals = append(vals, wire(random())) // garbage after the schema id
		}
		bad[topic] = len(vals)
		f.produce(topic, "k", append(vals, rec)...)
	}
	c := &appliedClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{SchemaRegistryURL: reg.URL(), Topics: []kafkaapi.Topic{
		{Name: requests, Kind: kafkaapi.KindNotifications},
		{Name: avroRequests, Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro, Schema: requestText},
		{Name: "interests.v1", Kind: kafkaapi.KindInterests},
		{Name: "events.v1", Kind: kafkaapi.KindEvents},
		{Name: avroEvents, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro, Schema: productText},
		{Name: wireEvents, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro},
	}})
	f.waitFor("the good record of every topic", 30*time.Second, func() bool {
		for topic := range good {
			key := topic
			if topic == "interests.v1" {
				key = "interests"
			}
			if c.of(key) != 1 {
				return false
			}
		}
		return true
	})
	for topic, n := range bad {
		dead := f.deadEvents(topic)
		if len(dead) != n {
			t.Fatalf("%s: %d dead events, want %d: %+v", topic, len(dead), n, dead)
		}
		tomb, empty := dead[0], dead[1]
		if !tomb.Tombstone || tomb.Value != nil || !strings.Contains(tomb.Error, "tombstone") || tomb.RecordTimestamp.IsZero() {
			t.Errorf("%s: the tombstone's dead event: %+v", topic, tomb)
		}
		if empty.Tombstone || empty.Value == nil || len(empty.Value) != 0 || !strings.Contains(empty.Error, "empty") {
			t.Errorf("%s: the empty value's dead event: %+v", topic, empty)
		}
		for _, d := range dead[2:] {
			if len(d.Value) == 0 || d.Payload != nil || strings.Contains(d.Error, "is required") {
				t.Errorf("%s: random bytes' dead event: %+v", topic, d)
			}
		}
	}
}

// Issue 30 item 2: a record cut short is not an event. Seed 003's
// ProductInventoryEvent, raw and in the registry's wire format, cut at
// every length, is dead-lettered each time with what was wrong — never
// applied (a cut through timestamp once became version 0 and fired a
// price drop), never "eventType: is required", never a Go type name —
// and the whole record after the cuts is applied, once.
func TestCutAvroRecordsAreDeadLettered(t *testing.T) {
	f := newFixture(t)
	reg := srfake.New()
	defer reg.Close()
	text := seedSchema(t, "ProductInventoryEvent")
	const raw, wired = "product.raw.v1", "product.inventory.v1"
	id, _, err := reg.RegisterSchema(wired+"-value", sr.Schema{Schema: text, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	schema := avro.MustParse(text)
	seed := priceChange(t, schema, "e-1", 10000, 8500)
	var h sr.ConfluentHeader
	wire, _ := h.AppendEncode(nil, id, nil)
	wire = append(wire, seed...)
	whole := map[string][]byte{raw: seed, wired: wire}
	for topic, b := range whole {
		vals := make([][]byte, 0, len(b)+1)
		for n := range len(b) {
			vals = append(vals, b[:n:n])
		}
		f.produce(topic, "42", append(vals, b)...)
	}
	c := &appliedClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{SchemaRegistryURL: reg.URL(), Topics: []kafkaapi.Topic{
		{Name: raw, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro, Schema: text},
		{Name: wired, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro},
	}})
	f.waitFor("both whole records", 30*time.Second, func() bool { return c.of(raw) == 1 && c.of(wired) == 1 })
	for topic, b := range whole {
		dead := f.deadEvents(topic)
		if len(dead) != len(b) {
			t.Fatalf("%s: %d dead events, want one per cut (%d)", topic, len(dead), len(b))
		}
		for n, d := range dead {
			want := "ends early"
			switch {
			case n == 0:
				want = "empty"
			case topic == wired && n < 5:
				want = "wire format"
			}
			if d.Offset != int64(n) || !strings.Contains(d.Error, want) || strings.Contains(d.Error, "is required") ||
				strings.Contains(d.Error, "kafkaapi.") || d.Payload != nil {
				t.Errorf("%s cut to %d bytes: %+v, want a dead letter saying %q", topic, n, d, want)
			}
		}
	}
	if n := c.of(raw) + c.of(wired); n != 2 {
		t.Fatalf("%d events applied, want the 2 whole ones", n)
	}
}

// gauge reads a gauge of reg by name, topic and partition; -1 if absent.
func gauge(t *testing.T, reg *prometheus.Registry, name, topic string, partition int32) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["topic"] == topic && labels["partition"] == fmt.Sprint(partition) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// Issue 30 item 1: a dead letter that cannot be written holds its
// partition — a record is never skipped unrecorded — while the other
// partitions go on, and says so: the
// readiness check names the topic and partition, herald_kafka_partition_stuck
// is 1, and the lag, measured against the broker's end offsets, grows with
// the records produced behind the stuck one although none is fetched.
// Once the database answers, the record is recorded and the rest applied.
func TestStuckDeadLetterIsVisible(t *testing.T) {
	f := newFixture(t)
	f.users(1)
	applied := &appliedClient{Client: f.client}
	c := &flakyDeadLetters{Client: applied}
	c.fails.Store(1 << 40)
	reg := prometheus.NewRegistry()
	cons, _ := f.startConsumer(c, kafkaapi.Config{Registerer: reg, StuckAfter: 50 * time.Millisecond, LagInterval: 20 * time.Millisecond,
		Topics: []kafkaapi.Topic{{Name: requests, Kind: kafkaapi.KindNotifications}, {Name: "events.v1", Kind: kafkaapi.KindEvents}}})
	res, err := f.prod.ProduceSync(f.ctx, &kgo.Record{Topic: requests, Key: []byte("k")}).First() // a tombstone
	if err != nil {
		t.Fatal(err)
	}
	p, at := res.Partition, res.Offset
	f.waitFor("the partition to be stuck", 20*time.Second, func() bool {
		return gauge(t, reg, "herald_kafka_partition_stuck", requests, p) == 1
	})
	f.produce(requests, "k", request("n-1", user(0)), request("n-2", user(0)), request("n-3", user(0)))
	f.waitFor("the lag to count the records behind it", 20*time.Second, func() bool {
		return gauge(t, reg, "herald_kafka_consumer_lag", requests, p) == 4
	})
	// Lag sums what the gauges show (the console's overview).
	if lag, ok := cons.Lag(); !ok || lag < 4 {
		t.Errorf("Lag() = %d, %v; want at least the stuck partition's 4", lag, ok)
	}
	var notReady error
	f.waitFor("readiness to fail", 20*time.Second, func() bool {
		notReady = cons.Ready(f.ctx)
		return notReady != nil
	})
	if want := fmt.Sprintf("topic %s partition %d at offset %d", requests, p, at); !strings.Contains(notReady.Error(), want) {
		t.Fatalf("readiness: %v, want it to name %q", notReady, want)
	}
	if strings.Contains(notReady.Error(), "database does not answer") {
		t.Fatalf("readiness shows internals: %v", notReady)
	}
	// The other partitions go on meanwhile: the stuck one is held back
	// and tried again, not waited on.
	f.produce("events.v1", "k", []byte(`{"id":"e-1","name":"checkout","user_id":"u000"}`))
	f.waitFor("another topic's record while the partition is stuck", 20*time.Second, func() bool {
		return applied.of("events.v1") == 1
	})
	if n := f.notifications(1); n != 0 {
		t.Fatalf("%d notifications while stuck: a record went past the unrecorded one", n)
	}

	c.fails.Store(0)
	f.waitFor("the records behind it", 20*time.Second, func() bool { return f.notifications(1) == 3 })
	f.waitFor("the partition to move again", 20*time.Second, func() bool {
		return cons.Ready(f.ctx) == nil && gauge(t, reg, "herald_kafka_partition_stuck", requests, p) == 0 &&
			gauge(t, reg, "herald_kafka_consumer_lag", requests, p) == 0
	})
	if dead := f.deadEvents(requests); len(dead) != 1 || !dead[0].Tombstone {
		t.Fatalf("dead events: %+v, want the tombstone once", dead)
	}
}
