package kafkaapi_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
)

// trackingClient records the events handed to Track (and answers them
// applied), and lists the rules' topics it is told to.
type trackingClient struct {
	kafkaapi.Client
	mu     sync.Mutex
	events []herald.Event
	topics atomic.Pointer[[]string]
	polls  atomic.Int64
}

func (c *trackingClient) Track(_ context.Context, e herald.Event) (herald.TrackResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
	return herald.TrackResult{}, nil
}

func (c *trackingClient) RuleTopics(context.Context) ([]string, error) {
	c.polls.Add(1)
	if p := c.topics.Load(); p != nil {
		return *p, nil
	}
	return nil, nil
}

// tracked returns the events of topic tracked so far, by id.
func (c *trackingClient) tracked(topic string) map[string]herald.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]herald.Event{}
	for _, e := range c.events {
		if e.Topic == topic {
			out[e.ID] = e
		}
	}
	return out
}

// productEvent is seed 003's ProductInventoryEvent as its producer
// writes it.
type productEvent struct {
	EventID       string   `avro:"eventId"`
	ProductID     string   `avro:"productId"`
	EventType     string   `avro:"eventType"`
	PreviousPrice *float32 `avro:"previousPrice"`
	CurrentPrice  *float32 `avro:"currentPrice"`
	PreviousStock *int32   `avro:"previousStock"`
	CurrentStock  *int32   `avro:"currentStock"`
	Timestamp     int64    `avro:"timestamp"`
}

const productTS = 1764000000000

func priceChange(t *testing.T, schema avro.Schema, id string, from, to float32) []byte {
	t.Helper()
	b, err := avro.Marshal(schema, productEvent{EventID: id, ProductID: "42", EventType: "PRICE_CHANGE",
		PreviousPrice: &from, CurrentPrice: &to, Timestamp: productTS})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantPriceChange is the herald.Event priceChange(…, 10000, 8500) maps to.
func wantPriceChange(id, topic string) herald.Event {
	at := time.UnixMilli(productTS).UTC()
	return herald.Event{ID: id, Name: "PRICE_CHANGE", Subject: "product:42", Version: productTS, OccurredAt: &at,
		Data: map[string]string{"productId": "42", "previousPrice": "10000", "currentPrice": "8500"}, Topic: topic}
}

// Issue 20 item 8, S3.1: seed 003's ProductInventoryEvent in Avro — in
// the schema registry's wire format and raw with a fixed .avsc — reaches
// Track as a herald.Event mapped by its field names: the id from
// eventId, the name from eventType, the subject product:{productId}, the
// version and time from timestamp, the other fields as data (null
// unions left out), and the record's topic. A value that does not decode
// is dead-lettered with the decode error.
func TestAvroProductEvents(t *testing.T) {
	f := newFixture(t)
	reg := srfake.New()
	defer reg.Close()
	text := seedSchema(t, "ProductInventoryEvent")
	const viaRegistry, fixed = "product.inventory.v1", "product.raw.v1"
	id, _, err := reg.RegisterSchema(viaRegistry+"-value", sr.Schema{Schema: text, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	schema := avro.MustParse(text)
	var h sr.ConfluentHeader
	wire := func(payload []byte) []byte {
		b, _ := h.AppendEncode(nil, id, nil)
		return append(b, payload...)
	}
	stock, err := avro.Marshal(schema, productEvent{EventID: "e-stock", ProductID: "7", EventType: "STOCK_CHANGE",
		PreviousStock: new(int32), CurrentStock: func() *int32 { n := int32(5); return &n }(), Timestamp: productTS + 1})
	if err != nil {
		t.Fatal(err)
	}
	f.produce(viaRegistry, "42",
		wire(priceChange(t, schema, "e-registry", 10000, 8500)),
		wire([]byte{0x02, 'x', 0x02, 'y', 0x40}), // eventType's enum index 32: not in the schema
		wire(stock))
	f.produce(fixed, "42", priceChange(t, schema, "e-fixed", 10000, 8500))
	c := &trackingClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{SchemaRegistryURL: reg.URL(), Topics: []kafkaapi.Topic{
		{Name: viaRegistry, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro},
		{Name: fixed, Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro, Schema: text},
	}})
	f.waitFor("three events", 20*time.Second, func() bool {
		return len(c.tracked(viaRegistry)) == 2 && len(c.tracked(fixed)) == 1
	})
	if got, want := c.tracked(viaRegistry)["e-registry"], wantPriceChange("e-registry", viaRegistry); !reflect.DeepEqual(got, want) {
		t.Fatalf("via the registry:\n got %+v\nwant %+v", got, want)
	}
	if got, want := c.tracked(fixed)["e-fixed"], wantPriceChange("e-fixed", fixed); !reflect.DeepEqual(got, want) {
		t.Fatalf("fixed schema:\n got %+v\nwant %+v", got, want)
	}
	if got := c.tracked(viaRegistry)["e-stock"]; got.Name != "STOCK_CHANGE" || got.Subject != "product:7" || got.Version != productTS+1 ||
		!sameData(got.Data, map[string]string{"productId": "7", "previousStock": "0", "currentStock": "5"}) {
		t.Fatalf("stock change: %+v", got)
	}

	dead := f.deadLetters(viaRegistry+".dlq", 1)
	if h := dead[viaRegistry+"@1"]; h[kafkaapi.HeaderAttempts] != "1" || !strings.Contains(h[kafkaapi.HeaderError], "avro") {
		t.Fatalf("the undecodable record's dead letter: %v", dead)
	}
	page, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{Topic: viaRegistry})
	if err != nil || len(page.DeadEvents) != 1 || page.DeadEvents[0].Kind != kafkaapi.KindEvents.String() || page.DeadEvents[0].Payload != nil {
		t.Fatalf("dead events: %+v, %v", page, err)
	}
}

func sameData(a, b map[string]string) bool { return reflect.DeepEqual(a, b) }

// Issue 20 item 8: a JSON event topic carries herald.Event itself by
// default (its version too, its topic set, named by its position when it
// has no id), or — with ShapeFields — any flat record mapped by field
// names, renamed by Topic.Fields. A record the mapping cannot make an
// event of is dead-lettered naming the field.
func TestJSONEventShapes(t *testing.T) {
	f := newFixture(t)
	const flat = "flat.v1"
	f.produce("events.v1", "k", []byte(`{"name":"checkout","user_id":"u1","version":7,"data":{"total":12.5}}`))
	f.produce(flat, "k",
		[]byte(`{"kind":"PRICE_CHANGE","sku":"42","shop":"s1","customer":"u1","at":"2026-11-01T10:00:00Z","seq":9,"price":10000,"sale":true,"note":null,"tags":["a"]}`),
		[]byte(`{"sku":"42","price":1}`),                           // no kind: no name
		[]byte(`{"kind":"X","sku":"42","shop":"s1","seq":"soon"}`), // a version that is not an integer
		[]byte(`{"kind":"X","shop":"s1","price":1}`),               // no sku: no subject
	)
	c := &trackingClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{Topics: []kafkaapi.Topic{
		{Name: "events.v1", Kind: kafkaapi.KindEvents},
		{Name: flat, Kind: kafkaapi.KindEvents, Shape: kafkaapi.ShapeFields, Fields: kafkaapi.EventFields{
			ID: kafkaapi.NoField, Name: "kind", UserID: "customer", Subject: "shop:{shop}/sku:{sku}", Version: "seq", OccurredAt: "at"}},
	}})
	f.waitFor("two events", 20*time.Second, func() bool { return len(c.tracked("events.v1")) == 1 && len(c.tracked(flat)) == 1 })
	want := herald.Event{ID: "events.v1:0:0", Name: "checkout", UserID: "u1", Version: 7, Data: map[string]string{"total": "12.5"}, Topic: "events.v1"}
	for _, e := range c.tracked("events.v1") {
		// The partition is the key's; the id names it.
		want.ID = e.ID
		if !strings.HasPrefix(e.ID, "events.v1:") || !reflect.DeepEqual(e, want) {
			t.Fatalf("herald.Event-shaped:\n got %+v\nwant %+v", e, want)
		}
	}
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, e := range c.tracked(flat) {
		want := herald.Event{ID: e.ID, Name: "PRICE_CHANGE", UserID: "u1", Subject: "shop:s1/sku:42", Version: 9, OccurredAt: &at,
			Data: map[string]string{"sku": "42", "shop": "s1", "price": "10000", "sale": "true"}, Topic: flat}
		if !strings.HasPrefix(e.ID, flat+":") || !reflect.DeepEqual(e, want) {
			t.Fatalf("mapped by fields:\n got %+v\nwant %+v", e, want)
		}
	}
	dead := f.deadLetters(flat+".dlq", 3)
	for offset, field := range map[string]string{"1": "kind", "2": "seq", "3": "sku"} {
		if h := dead[flat+"@"+offset]; !strings.Contains(h[kafkaapi.HeaderError], field+":") {
			t.Errorf("dead letter of offset %s: %v, want an error naming %s", offset, h, field)
		}
	}
}

// Issue 20 item 8: a rule's topic is consumed without being configured —
// read as Config.RuleTopic says (here raw Avro with the seed's schema) —
// once the rule appears, from the topic's start; the consumer's metadata
// request creates the topic on a broker that creates topics on demand
// (serve --dev's), so a producer that does not may write to it then.
func TestRuleTopicsAreConsumed(t *testing.T) {
	f := newFixture(t)
	text := seedSchema(t, "ProductInventoryEvent")
	schema := avro.MustParse(text)
	const topic = "product.inventory.v1"
	c := &trackingClient{Client: f.client}
	f.consumer(c, kafkaapi.Config{RuleTopicPoll: 50 * time.Millisecond,
		RuleTopic: kafkaapi.Topic{Encoding: kafkaapi.EncodingAvro, Schema: text}})
	// Polled a few times with no rule: the topic does not exist.
	f.waitFor("three polls", 20*time.Second, func() bool { return c.polls.Load() >= 3 })
	plain, err := kgo.NewClient(kgo.SeedBrokers(f.broker.Addr()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	exists := func() bool {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(f.ctx, plain)
		return err == nil && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0
	}
	if exists() {
		t.Fatal("the topic exists before any rule names it")
	}

	c.topics.Store(&[]string{topic, requests}) // a configured topic keeps its kind
	f.waitFor("the consumer to create the rule's topic", 20*time.Second, exists)
	if err := plain.ProduceSync(f.ctx, &kgo.Record{Topic: topic, Key: []byte("42"),
		Value: priceChange(t, schema, "e-rule", 10000, 8500)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the rule topic's event", 30*time.Second, func() bool { return len(c.tracked(topic)) == 1 })
	if got, want := c.tracked(topic)["e-rule"], wantPriceChange("e-rule", topic); !reflect.DeepEqual(got, want) {
		t.Fatalf("rule topic's event:\n got %+v\nwant %+v", got, want)
	}
}

// Config.RuleTopic is checked like a topic, naming its key.
func TestRuleTopicConfigErrors(t *testing.T) {
	base := []kafkaapi.Topic{{Name: "a", Kind: kafkaapi.KindEvents}}
	for _, tc := range []struct {
		rule  kafkaapi.Topic
		field string
	}{
		{kafkaapi.Topic{Encoding: kafkaapi.EncodingAvro}, "kafka.schema_registry_url"},
		{kafkaapi.Topic{Encoding: "xml"}, "kafka.rule_topic.encoding"},
		{kafkaapi.Topic{Shape: kafkaapi.ShapeFields, Fields: kafkaapi.EventFields{Subject: "p:}"}}, "kafka.rule_topic.fields.subject"},
	} {
		_, err := kafkaapi.New(kafkaapi.Config{Brokers: []string{"x:1"}, Topics: base, RuleTopic: tc.rule}, &countingClient{})
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != tc.field {
			t.Fatalf("%+v: err %v, want invalid_argument naming %s", tc.rule, err, tc.field)
		}
	}
	// Not followed: not checked.
	if _, err := kafkaapi.New(kafkaapi.Config{Brokers: []string{"x:1"}, Topics: base, RuleTopicPoll: -1,
		RuleTopic: kafkaapi.Topic{Encoding: "xml"}}, &countingClient{}); err != nil {
		t.Fatal(err)
	}
}
