package kafkaapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// FuzzDecodeRecord feeds any bytes to every decoder a topic can have —
// JSON notification requests, events and interests, Avro notification
// requests and Avro events mapped by field names — outside decode's panic
// guard (issue 30 items 1, 2): none may panic; a refusal is a decode
// error (dead-lettered at once) in the producer's words; an Avro event
// that decodes carries a positive version.
func FuzzDecodeRecord(f *testing.F) {
	read := func(name string) string {
		b, err := Schemas.ReadFile("schemas/" + name + ".avsc")
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	requestText, productText := read("NotificationEvent"), read("ProductInventoryEvent")
	build := &readers{}
	mk := func(t Topic) *topicReader {
		rd, err := build.reader("t", "t", t)
		if err != nil {
			f.Fatal(err)
		}
		return rd
	}
	jsonRequests, jsonEvents := mk(Topic{Name: "r", Kind: KindNotifications}), mk(Topic{Name: "e", Kind: KindEvents})
	jsonFields := mk(Topic{Name: "f", Kind: KindEvents, Shape: ShapeFields})
	avroRequests := mk(Topic{Name: "ar", Kind: KindNotifications, Encoding: EncodingAvro, Schema: requestText})
	avroEvents := mk(Topic{Name: "ae", Kind: KindEvents, Encoding: EncodingAvro, Schema: productText})

	product, err := avro.Marshal(avro.MustParse(productText), map[string]any{"eventId": "e-1", "productId": "42",
		"eventType": "PRICE_CHANGE", "previousPrice": map[string]any{"float": float32(10000)}, "currentPrice": map[string]any{"float": float32(8500)},
		"previousStock": nil, "currentStock": nil, "timestamp": int64(1764000000000)})
	if err != nil {
		f.Fatal(err)
	}
	request, err := avro.Marshal(avro.MustParse(requestText), NotificationEvent{NotificationID: "n", UserID: "u", NotificationType: "PRICE_DROP",
		Title: "t", Body: "b", Channels: []string{"PUSH"}, Priority: "HIGH", Timestamp: 1764000000000})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{product, product[:20], request, request[:len(request)-1], []byte(`{"name":"x","version":7}`),
		[]byte(`{"notificationId":"n","userId":"u"}`), []byte(`{"eventType":"X","productId":"1","timestamp":1}`), {}, {0xff}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		ctx := context.Background()
		r := &kgo.Record{Topic: "t", Value: value}
		check := func(what string, err error) {
			if err == nil {
				return
			}
			var de *decodeError
			if !errors.As(err, &de) {
				t.Fatalf("%s: %v is not a decode error (it would be retried)", what, err)
			}
			for _, w := range []string{"kafkaapi.", "Go struct", "map[", "interface {}", "Read", "Config.", "avro: avro"} {
				if strings.Contains(err.Error(), w) {
					t.Fatalf("%s: %v speaks Go", what, err)
				}
			}
		}
		for name, rd := range map[string]*topicReader{"json requests": jsonRequests, "avro requests": avroRequests} {
			_, err := decodeNotificationRequest(ctx, rd.dec, r)
			check(name, err)
		}
		for name, rd := range map[string]*topicReader{"json events": jsonEvents, "json fields": jsonFields, "avro events": avroEvents} {
			e, err := rd.event(ctx, r)
			check(name, err)
			if err == nil && rd.mapping != nil && e.Version <= 0 {
				t.Fatalf("%s: an event of version %d from %x", name, e.Version, value)
			}
		}
		var in struct{}
		if err := strictJSON(value, &in, ""); err != nil {
			check("interests", &decodeError{err})
		}
	})
}
