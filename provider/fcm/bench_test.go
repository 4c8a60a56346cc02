package fcm

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// BenchmarkEncode measures building one send request, the per-push work of
// the hot path (S3.13 asks for ≥ 100 events/s; the queue aims at 10k/s).
func BenchmarkEncode(b *testing.B) {
	for _, mode := range []heraldtype.PayloadMode{heraldtype.PayloadAlert, heraldtype.PayloadData} {
		b.Run(string(mode), func(b *testing.B) {
			m := message(heraldtype.PlatformIOS, "fcm-token-0123456789abcdefghijklmnopqrstuvwxyz:APA91b", mode, heraldtype.PriorityHigh)
			m.Notification.Data["campaign"] = "spring-sale-2026"
			m.Notification.Data["deeplink"] = "app://products/p-1?ref=push"
			now := time.Now()
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = appendRequest(make([]byte, 0, estimateSize(m)), m, MaxTTL, now)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkSendToEmulator measures a full Send against the emulator over
// loopback HTTP/1.1: client encoding, the emulator's validation and
// recording, and the HTTP round trip.
func BenchmarkSendToEmulator(b *testing.B) {
	e := startEmulator(b, EmulatorConfig{MaxRecorded: 1000})
	c := newTestClient(b, e, nil)
	m := message(heraldtype.PlatformAndroid, "bench-token", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	b.ReportAllocs()
	b.SetParallelism(8) // many sends in flight, as the dispatcher's pool has
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), m); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkParseSend measures the emulator's validation of a typical
// messages:send body (what the FCM client sends for a push with data).
func BenchmarkParseSend(b *testing.B) {
	body := []byte(`{"message":{"token":"tok-b1234-0","notification":{"title":"Hello","body":"World"},` +
		`"data":{"orderId":"42","bench_t":"1795481790615259843","herald_delivery_id":"123456","herald_notification_id":"01JDZ8Y6Q0R9W1T5K3M7N2P4XV"},` +
		`"android":{"priority":"high","ttl":"2419200s","collapse_key":"orders"},` +
		`"apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"sound":"default"}}}}}`)
	if _, gerr := parseSend(body); gerr != nil {
		b.Fatalf("%+v", *gerr)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, gerr := parseSend(body); gerr != nil {
			b.Fatalf("%+v", *gerr)
		}
	}
}
