package kafkaapi

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// goWords are what an error a producer reads must not hold: Go's type
// names and encoding/json's wording (issue 30 item 2).
var goWords = []string{"kafkaapi.", "eventJSON", "NotificationEvent", "Go struct", "Go value", "json:", "int64", "map[string]"}

func wantDecodeError(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want an error saying %q", what, want)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want it to say %q", what, err, want)
	}
	for _, w := range goWords {
		if strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v speaks Go (%q)", what, err, w)
		}
	}
}

// Issue 30 item 2: a JSON record is one object, of the types its fields
// take; anything else is an error naming the field in a producer's words.
// Issue 31 item 6: invalid UTF-8 is refused as the HTTP API refuses it.
func TestJSONRecordErrors(t *testing.T) {
	event := func(v string) error {
		_, err := decodeEvent(&kgo.Record{Topic: "t", Value: []byte(v)})
		return err
	}
	request := func(v string) error {
		var ev NotificationEvent
		return jsonDecoder{}.decode(context.Background(), []byte(v), &ev)
	}
	fields := func(v string) error {
		var rec map[string]any
		return jsonDecoder{}.decode(context.Background(), []byte(v), &rec)
	}
	for _, tc := range []struct {
		name   string
		decode func(string) error
		value  string
		want   string
	}{
		{"event: a stray brace after", event, `{"name":"x"}}`, "data after it"},
		{"event: a second object", event, `{"name":"x"} {"name":"y"}`, "data after it"},
		{"event: text after", event, `{"name":"x"} x`, "data after it"},
		{"event: a string", event, `"x"`, "must be a JSON object"},
		{"event: an array", event, `[1]`, "must be a JSON object"},
		{"event: a number", event, `7`, "must be a JSON object"},
		{"event: null", event, `null`, "must be a JSON object"},
		{"event: blanks", event, "  \n", "holds no JSON object"},
		{"event: cut", event, `{"name":"x"`, "ends in the middle"},
		{"event: not JSON", event, `{name}`, "not valid JSON"},
		{"event: version as text", event, `{"name":"x","version":"7"}`, "version: must be an integer, not string"},
		{"event: version a fraction", event, `{"name":"x","version":1.5}`, "version: must be an integer"},
		{"event: name a number", event, `{"name":1}`, "name: must be a string, not number"},
		{"event: data a list", event, `{"name":"x","data":[1]}`, "data: must be an object, not array"},
		{"event: a data value an object", event, `{"name":"x","data":{"p":{}}}`, "data.p: must be a string, number or boolean"},
		{"event: a bad time", event, `{"name":"x","occurred_at":"soon"}`, "occurred_at: must be an RFC 3339 time"},
		{"event: an unknown field", event, `{"name":"x","nme":"y"}`, "nme: is not a known field"},
		{"event: invalid UTF-8", event, "{\"name\":\"\xff\"}", "not valid UTF-8"},
		{"event: a cancellation key a number", event, `{"name":"x","cancellation_key":7}`, "cancellation_key: must be a string, not number"},
		{"request: timestamp as text", request, `{"notificationId":"n","timestamp":"x"}`, "timestamp: must be an integer, not string"},
		{"request: channels a string", request, `{"channels":"PUSH"}`, "channels: must be an array, not string"},
		{"request: a data value a number", request, `{"data":{"k":1}}`, "data: must be a string, not number"},
		{"request: title an object", request, `{"title":{}}`, "title: must be a string, not object"},
		{"request: trailing data", request, `{"title":"t"}]`, "data after it"},
		{"request: invalid UTF-8", request, "{\"title\":\"caf\xc3\"}", "not valid UTF-8"},
		{"fields: an array", fields, `[]`, "must be a JSON object"},
		{"event: a key twice", event, `{"name":"x","name":"y"}`, "name: is given twice"},
		{"event: a data key twice", event, `{"name":"x","data":{"p":1,"p":2}}`, "data.p: is given twice"},
		{"event: another case", event, `{"Name":"x"}`, `Name: must be written "name"`},
		{"request: another case", request, `{"notificationID":"n"}`, `notificationID: must be written "notificationId"`},
		{"request: a channel list's key twice", request, `{"channels":["PUSH"],"channels":["SMS"]}`, "channels: is given twice"},
		{"fields: a key twice", fields, `{"eventType":"A","eventType":"B"}`, "eventType: is given twice"},
		{"fields: invalid UTF-8 in a key", fields, "{\"\xfe\":1}", "not valid UTF-8"},
	} {
		wantDecodeError(t, tc.name, tc.decode(tc.value), tc.want)
	}
}

// Issue 31 item 6: an Avro string that is not valid UTF-8 is refused,
// naming the field.
func TestAvroInvalidUTF8(t *testing.T) {
	text, err := Schemas.ReadFile("schemas/NotificationEvent.avsc")
	if err != nil {
		t.Fatal(err)
	}
	dec := avroFixed{avro.MustParse(string(text))}
	for field, ev := range map[string]NotificationEvent{
		"title":  {NotificationID: "n", UserID: "u", NotificationType: "PRICE_DROP", Title: "caf\xc3", Priority: "HIGH"},
		"data.k": {NotificationID: "n", UserID: "u", NotificationType: "PRICE_DROP", Data: map[string]string{"k": "\xff"}, Priority: "HIGH"},
		"userId": {NotificationID: "n", UserID: "u\xff", NotificationType: "PRICE_DROP", Priority: "HIGH"},
	} {
		b, err := avro.Marshal(dec.schema, ev)
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		var got NotificationEvent
		wantDecodeError(t, field, dec.decode(context.Background(), b, &got), field+": is not valid UTF-8")
	}
	product, err := Schemas.ReadFile("schemas/ProductInventoryEvent.avsc")
	if err != nil {
		t.Fatal(err)
	}
	ps := avro.MustParse(string(product))
	b, err := avro.Marshal(ps, map[string]any{"eventId": "e", "productId": "4\xff2", "eventType": "PRICE_CHANGE",
		"previousPrice": nil, "currentPrice": nil, "previousStock": nil, "currentStock": nil, "timestamp": int64(1764000000000)})
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	wantDecodeError(t, "productId", avroFixed{ps}.decode(context.Background(), b, &rec), "productId: is not valid UTF-8")
}

// An Avro array's block header is a count the decoder allocates for before
// it reads an item: a record of a few bytes claiming 10^12 items took the
// process down (FuzzDecodeRecord; its input is kept in testdata/fuzz).
// Such a record is refused, in a producer's words, without the allocation.
func TestAvroHugeArrayIsRefused(t *testing.T) {
	t.Parallel()
	schema := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":"null"}}]}`)
	for _, n := range []uint64{maxAvroItems + 1, 1_000_000_000_000} {
		b := binary.AppendUvarint(nil, 2*n) // zigzag: the count n
		b = append(b, 0)                    // the array's end
		var v struct {
			A []any `avro:"a"`
		}
		err := avroUnmarshal(schema, b, &v)
		if err == nil || !strings.Contains(err.Error(), "an array is longer than Herald reads") {
			t.Errorf("%d items: %v", n, err)
		}
	}
}

// An events topic's record may cancel by key, as POST /v1/events' body
// may (issue 36 item 4).
func TestEventCancellationKey(t *testing.T) {
	e, err := decodeEvent(&kgo.Record{Topic: "t", Value: []byte(`{"name":"order_shipped","user_id":"u1","cancellation_key":"order-7"}`)})
	if err != nil || e.CancellationKey != "order-7" || e.UserID != "u1" {
		t.Fatalf("decodeEvent = %+v, %v", e, err)
	}
}
