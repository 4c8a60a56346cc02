package webpush

import (
	"context"
	"testing"

	webpushemu "github.com/heraldhq/herald/emulator/webpush"
	"github.com/heraldhq/herald/heraldtype"
)

// BenchmarkEncode measures building one push request: the JSON payload,
// the RFC 8291 encryption (an ephemeral ECDH key pair and an ECDH per
// message, which dominate) and the cached VAPID header — the per-push work
// of the hot path (S3.13 asks for ≥ 100 events/s; the queue aims at 10k/s).
func BenchmarkEncode(b *testing.B) {
	e := webpushemu.New(webpushemu.Config{PublicURL: "https://push.example"})
	ep, p, a := e.NewSubscription()
	m := message(ep, p, a, heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	m.Notification.Data["campaign"] = "spring-sale-2026"
	m.Notification.Data["deeplink"] = "https://shop.example/products/p-1?ref=push"
	c := newTestClient(b, nil)
	sub, err := c.parseSubscription(m.Device)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req, err := c.newRequest(context.Background(), m, sub)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(req.ContentLength)
	}
}

// BenchmarkSendToEmulator measures a full Send against the emulator over
// loopback HTTP/1.1: encryption, the emulator's VAPID verification and
// decryption, and the HTTP round trip.
func BenchmarkSendToEmulator(b *testing.B) {
	e := startEmulator(b, webpushemu.Config{MaxRecorded: 1000})
	c := newTestClient(b, nil)
	m := subscribe(e)
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
