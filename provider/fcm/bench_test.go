package fcm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/cputime"
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
//
// It reports cpu-µs/op: the CPU time (user + system, client and emulator
// and the kernel's loopback work, all in this process) that one push costs.
// Compare it with BenchmarkHTTPFloor's.
func BenchmarkSendToEmulator(b *testing.B) {
	e := startEmulator(b, fcmemu.Config{MaxRecorded: 1000})
	c := newTestClient(b, e, nil)
	m := message(heraldtype.PlatformAndroid, "bench-token", heraldtype.PayloadAlert, heraldtype.PriorityHigh)
	b.ReportAllocs()
	b.SetParallelism(8) // many sends in flight, as the dispatcher's pool has
	defer cputime.Report(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Send(context.Background(), m); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHTTPFloor is the floor under BenchmarkSendToEmulator: the same
// loopback HTTP/1.1 round trip with Go's net/http on both ends, the same
// client transport settings and a request of a push's size, but a handler
// that only drains the body and answers a message name. Nothing of FCM's
// protocol is encoded or checked. FCM's v1 API takes one message per
// request, so every push pays at least this; its cpu-µs/op is what the
// provider round trip of `herald bench` cannot go below on this machine
// (docs/PERFORMANCE.md, "the floor").
func BenchmarkHTTPFloor(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write([]byte(`{"name":"projects/p/messages/0:1795481790615259843%abcdef"}`))
	}))
	b.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256 // as New's transport
	hc := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	body := appendRequest(nil, message(heraldtype.PlatformAndroid, "bench-token", heraldtype.PayloadAlert,
		heraldtype.PriorityHigh), MaxTTL, time.Now())
	url := srv.URL + "/v1/projects/p/messages:send"
	b.ReportAllocs()
	b.SetParallelism(8)
	defer cputime.Report(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json; charset=UTF-8")
			req.Header.Set("Authorization", "Bearer ya29.c.b0Aaekm1K-floor-benchmark-access-token")
			resp, err := hc.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
