package apns

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	apnsemu "github.com/heraldhq/herald/emulator/apns"
	"github.com/heraldhq/herald/heraldtype"
)

// BenchmarkEncode measures building one request's payload and apns-id, the
// per-push encoding work of the hot path (the queue aims at 10k/s).
func BenchmarkEncode(b *testing.B) {
	for _, mode := range []heraldtype.PayloadMode{heraldtype.PayloadAlert, heraldtype.PayloadData} {
		b.Run(string(mode), func(b *testing.B) {
			m := message(deviceToken(1), mode, heraldtype.PriorityHigh)
			m.Notification.Data["campaign"] = "spring-sale-2026"
			m.Notification.Data["deeplink"] = "app://products/p-1?ref=push"
			now := time.Now()
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = appendPayload(make([]byte, 0, estimateSize(m.Notification, m.Key)), m.Notification, m.Key)
				pushType, priority := pushTypeAndPriority(m.Notification)
				_ = http.Header{
					"apns-id":         {messageUUID(m.Key)},
					"apns-push-type":  {pushType},
					"apns-priority":   {priority},
					"apns-expiration": {strconv.FormatInt(now.Add(DefaultTTL).Unix(), 10)},
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

// BenchmarkSendToEmulator measures a full Send against the emulator over
// loopback TLS and HTTP/2: encoding, the cached provider token, the
// emulator's validation and recording, and the round trip.
func BenchmarkSendToEmulator(b *testing.B) {
	e := startEmulator(b, apnsemu.Config{MaxRecorded: 1000})
	c, _ := newTestClient(b, e, nil)
	m := message(deviceToken(1), heraldtype.PayloadAlert, heraldtype.PriorityHigh)
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
