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
