package httpapi

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
)

// The trigger body is decoded on the hot path (POST /v1/notifications);
// these benchmarks measure what the strict-JSON check adds to it (issue
// 18, item 5).
func BenchmarkDecodeTrigger(b *testing.B) {
	small := []byte(`{"user_id":"alice","type":"price_drop","title":"Cheaper today","body":"The jacket you saved is 20% off.","data":{"product_id":"p-123","url":"https://example.com/p/123"},"channels":["push","in_app"],"priority":"HIGH"}`)
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = strconv.Quote("user-" + strconv.Itoa(i))
	}
	large := []byte(`{"user_ids":[` + strings.Join(ids, ",") + `],"type":"price_drop","title":"Cheaper today","body":"` + strings.Repeat("x", 2000) + `","data":{"product_id":"p-123"}}`)
	for _, c := range []struct {
		name string
		body []byte
	}{{"small", small}, {"1000_recipients", large}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				var req herald.Request
				if err := decodeBody(c.body, &req, bodySpec{timeField: "send_at"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The strict step alone: its share of the decode above.
		b.Run(c.name+"/strict_only", func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			t := reflect.TypeFor[*herald.Request]()
			for b.Loop() {
				if err := checkStrict(c.body, t); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
