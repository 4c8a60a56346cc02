package kafkaapi_test

import (
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/kafkaapi"
)

func seedSchema(t *testing.T, name string) string {
	t.Helper()
	b, err := kafkaapi.Schemas.ReadFile("schemas/" + name + ".avsc")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func avroRequest(t *testing.T, schema avro.Schema, id, user string) []byte {
	t.Helper()
	b, err := avro.Marshal(schema, kafkaapi.NotificationEvent{NotificationID: id, UserID: user, ProductID: "42",
		NotificationType: "BACK_IN_STOCK", Title: "Back in stock", Body: "Get it now", Data: map[string]string{"k": "v"},
		Channels: []string{"IN_APP"}, Priority: "NORMAL", Timestamp: 1764000000000})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 20 item 8: seed 003's NotificationEvent in Avro, in the schema
// registry's wire format (the schema fetched from a registry speaking its
// REST API) and raw with a fixed .avsc; a record whose schema id the
// registry does not know, or that lacks the magic byte, is dead-lettered.
func TestAvroNotificationRequests(t *testing.T) {
	f := newFixture(t)
	f.users(2)
	reg := srfake.New()
	defer reg.Close()
	text := seedSchema(t, "NotificationEvent")
	id, _, err := reg.RegisterSchema(requests+"-value", sr.Schema{Schema: text, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	schema := avro.MustParse(text)
	var h sr.ConfluentHeader
	wire := func(id int, payload []byte) []byte {
		b, _ := h.AppendEncode(nil, id, nil)
		return append(b, payload...)
	}
	f.produce(requests, "k",
		wire(id, avroRequest(t, schema, "n-registry", user(0))),
		wire(id+100, avroRequest(t, schema, "n-unknown-schema", user(0))), // no such schema id
		avroRequest(t, schema, "n-no-magic", user(0)),                     // raw Avro on a wire-format topic
	)
	const fixed = "fixed.v1"
	f.produce(fixed, "k", avroRequest(t, schema, "n-fixed", user(1)))
	f.consumer(f.client, kafkaapi.Config{SchemaRegistryURL: reg.URL(), Topics: []kafkaapi.Topic{
		{Name: requests, Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro},
		{Name: fixed, Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro, Schema: text},
	}})
	f.waitFor("both good requests", 20*time.Second, func() bool { return f.notifications(2) == 2 })
	for i, key := range []string{"n-registry", "n-fixed"} {
		page, err := f.client.ListHistory(f.ctx, herald.HistoryFilter{UserID: user(i), Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.client.GetNotification(f.ctx, page.Notifications[0].NotificationID)
		if err != nil {
			t.Fatal(err)
		}
		if n.IdempotencyKey != key || n.Type != "back_in_stock" || n.Data["k"] != "v" || n.Data["productId"] != "42" ||
			n.Priority != heraldtype.PriorityNormal || n.Channels[0] != heraldtype.ChannelInApp {
			t.Fatalf("%s: %+v", key, n.Notification)
		}
	}
	dead := f.deadLetters(requests+".dlq", 2)
	if len(dead) != 2 {
		t.Fatalf("dead letters: %v, want the unknown schema id and the missing magic byte", dead)
	}
}

// Bad Avro configuration is refused naming the key.
func TestAvroConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		topic kafkaapi.Topic
		url   string
		field string
	}{
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro}, "", "kafka.schema_registry_url"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindNotifications, Encoding: kafkaapi.EncodingAvro, Schema: "{"}, "", "kafka.topics[0].schema"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindInterests, Encoding: kafkaapi.EncodingAvro}, "http://x", "kafka.topics[0].encoding"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindEvents, Encoding: kafkaapi.EncodingAvro, Shape: kafkaapi.ShapeEvent}, "http://x", "kafka.topics[0].shape"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindEvents, Shape: "flat"}, "", "kafka.topics[0].shape"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindNotifications, Shape: kafkaapi.ShapeFields}, "", "kafka.topics[0].shape"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindEvents, Shape: kafkaapi.ShapeFields, Fields: kafkaapi.EventFields{Name: "-"}}, "", "kafka.topics[0].fields.name"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindEvents, Shape: kafkaapi.ShapeFields, Fields: kafkaapi.EventFields{Subject: "product:{productId"}}, "", "kafka.topics[0].fields.subject"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindEvents, Shape: kafkaapi.ShapeFields, Fields: kafkaapi.EventFields{Subject: "product:{}"}}, "", "kafka.topics[0].fields.subject"},
		{kafkaapi.Topic{Name: "a", Kind: kafkaapi.KindNotifications, Encoding: "protobuf"}, "", "kafka.topics[0].encoding"},
	} {
		_, err := kafkaapi.New(kafkaapi.Config{Brokers: []string{"x:1"}, SchemaRegistryURL: tc.url, Topics: []kafkaapi.Topic{tc.topic}}, &countingClient{})
		if e, ok := err.(*heraldtype.Error); !ok || e.Code != heraldtype.EINVALID || e.Field != tc.field {
			t.Fatalf("%+v: err %v, want invalid_argument naming %s", tc.topic, err, tc.field)
		}
	}
}
