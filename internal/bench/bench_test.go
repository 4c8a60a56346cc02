package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunInProcess drives an in-process SQLite server with faults and
// checks that the measurements add up: every live device got its pushes,
// dead tokens got none, latency was measured for each accepted push.
func TestRunInProcess(t *testing.T) {
	var progress bytes.Buffer
	cfg := Config{
		Users: 50, DevicesPerUser: 2, Notifications: 400, Recipients: 10, Concurrency: 4,
		Faults:      Faults{Unavailable: 0.1, Unregistered: 0.1},
		Worker:      workerForTests(),
		MaxAttempts: 10, Retry: fastRetry(), Progress: &progress, DrainTimeout: time.Minute,
	}
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	// A trigger after a dead token's device was invalidated makes no
	// delivery for it, so between 720 and 800 deliveries exist.
	if res.Notifications != 400 || res.Deliveries < 720 || res.Deliveries > 800 || res.TriggerErrors != 0 {
		t.Fatalf("accepted %d notifications with %d deliveries (%d errors), want 400 and 720..800", res.Notifications, res.Deliveries, res.TriggerErrors)
	}
	// 10 of 100 devices are dead: 720 pushes reach live tokens.
	if res.Sent != 720 || res.Latency.Count != 720 {
		t.Fatalf("sent %d, latency samples %d; want 720", res.Sent, res.Latency.Count)
	}
	if res.Rejected["UNREGISTERED"] < 10 || res.Rejected["UNAVAILABLE"] == 0 {
		t.Fatalf("emulator errors %v: want UNREGISTERED for each of the 10 dead tokens and some UNAVAILABLE", res.Rejected)
	}
	if res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 || res.Latency.Max < res.Latency.P99 {
		t.Fatalf("latency %+v is not ordered", res.Latency)
	}
	if res.Resources.CPUSeconds <= 0 || res.Resources.PeakRSSBytes == 0 || res.DeliveriesPerSec <= 0 {
		t.Fatalf("resources %+v, %v deliveries/s", res.Resources, res.DeliveriesPerSec)
	}
	if m := res.Resources.Machine; m != nil && (m.MicrosPerDelivery <= 0 || m.Ceiling <= 0) {
		t.Fatalf("machine %+v: no cost per delivery for %d sent", *m, res.Sent)
	}
	if !strings.Contains(progress.String(), "deliver") {
		t.Fatalf("no progress drawn: %q", progress.String())
	}
	var table, js bytes.Buffer
	if err := res.WriteTable(&table); err != nil || !strings.Contains(table.String(), "deliveries sent") {
		t.Fatalf("table: %v\n%s", err, table.String())
	}
	if err := res.WriteJSON(&js); err != nil || !json.Valid(js.Bytes()) {
		t.Fatalf("JSON: %v\n%s", err, js.String())
	}
}

// TestRunBacklog fills the queue with the workers stopped, then drains it.
func TestRunBacklog(t *testing.T) {
	res, err := Run(t.Context(), Config{Users: 100, Notifications: 1000, Recipients: 100, Backlog: true,
		Worker: workerForTests(), DrainTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "backlog" || res.Sent != 1000 || res.FillResources == nil {
		t.Fatalf("backlog run: %+v", res)
	}
}

// TestRunWebhooks: with Webhooks, every delivery's delivery.finished and
// every notification's notification.status_changed reach the in-process
// receiver, signed as it verifies, before the run ends (issue 35 item 5's
// measurement), in a backlog run too.
func TestRunWebhooks(t *testing.T) {
	for _, backlog := range []bool{false, true} {
		res, err := Run(t.Context(), Config{Users: 20, Notifications: 200, Recipients: 10, Backlog: backlog, Webhooks: true,
			Worker: workerForTests(), DrainTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		// Each notification has one delivery: its delivery.finished and
		// its notification.status_changed.
		if res.Sent != 200 || res.Webhooks < 400 || res.WebhookSeconds <= 0 {
			t.Fatalf("backlog %v: sent %d, webhooks %d in %v s; want 200 and at least 400", backlog, res.Sent, res.Webhooks, res.WebhookSeconds)
		}
		var table bytes.Buffer
		if err := res.WriteTable(&table); err != nil || !strings.Contains(table.String(), "webhooks received") {
			t.Fatalf("table: %v\n%s", err, table.String())
		}
	}
}

// TestRunDigests: in a digest run each user's triggers become one digest
// (or one per max items), the run waits out the window rather than ending
// on an empty queue, and checks the server made exactly those digests
// (issue 36 item 6's measurement).
func TestRunDigests(t *testing.T) {
	for _, tc := range []struct {
		maxItems, digests int
	}{{0, 20}, {4, 60}} { // 10 triggers per user: one digest, or 4+4+2
		res, err := Run(t.Context(), Config{Users: 20, Notifications: 200, Recipients: 10, DigestWindow: 3 * time.Second,
			DigestMaxItems: tc.maxItems, Worker: workerForTests(), DrainTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if res.Digests != tc.digests || res.Sent != uint64(tc.digests) || res.Notifications != 200 {
			t.Fatalf("max items %d: %d digests, %d sent for %d triggers; want %d", tc.maxItems, res.Digests, res.Sent, res.Notifications, tc.digests)
		}
	}
}

// TestRunWarmup: the pushes of triggers sent during the warm-up are
// delivered and counted, but left out of the latency figures.
func TestRunWarmup(t *testing.T) {
	res, err := Run(t.Context(), Config{Users: 10, Notifications: 200, Recipients: 1, Concurrency: 8, Rate: 200,
		Warmup: 500 * time.Millisecond, Worker: workerForTests(), DrainTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// 1 s of triggers at 200/s: about the second half is measured.
	if res.Sent != 200 || res.Latency.Count < 40 || res.Latency.Count > 160 || res.Latency.WarmupSeconds != 0.5 {
		t.Fatalf("sent %d, latency of %d pushes after a %v s warm-up; want 200 sent, about 100 measured",
			res.Sent, res.Latency.Count, res.Latency.WarmupSeconds)
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil || !strings.Contains(table.String(), "after a 0.5s warm-up") {
		t.Fatalf("table: %v\n%s", err, table.String())
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"recipients above users":  {Users: 5, Recipients: 6, Notifications: 6},
		"not a multiple":          {Users: 10, Recipients: 3, Notifications: 10},
		"backlog remote":          {Server: "http://x", EmulatorAddr: "127.0.0.1:1", Backlog: true},
		"webhooks remote":         {Server: "http://x", EmulatorAddr: "127.0.0.1:1", Webhooks: true},
		"remote without emulator": {Server: "http://x"},
		"remote with database":    {Server: "http://x", EmulatorAddr: "127.0.0.1:1", Database: "x.db"},
		"bad fault rate":          {Faults: Faults{Unavailable: 1.5}},
		"rates above one":         {Faults: Faults{Unavailable: 0.6, Quota: 0.6}},
		"negative rate":           {Rate: -1},
		"negative warmup":         {Warmup: -time.Second},
		"digest remote":           {Server: "http://x", EmulatorAddr: "127.0.0.1:1", DigestWindow: time.Minute},
		"digest items no window":  {DigestMaxItems: 5},
		"negative digest window":  {DigestWindow: -time.Second},
		"server not a URL":        {Server: "localhost:8080", EmulatorAddr: "127.0.0.1:1"},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: Run accepted %+v", name, cfg)
		}
	}
}

// TestScrapeMetrics reads a remote server's process gauges.
func TestScrapeMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("# HELP x\nprocess_cpu_seconds_total 12.5\nprocess_resident_memory_bytes 1.048576e+08\ngo_goroutines 9\n"))
	}))
	defer srv.Close()
	v, err := scrape(t.Context(), newAPIClient(srv.URL, "k", 1))
	if err != nil {
		t.Fatal(err)
	}
	if v["process_cpu_seconds_total"] != 12.5 || v["process_resident_memory_bytes"] != 104857600 {
		t.Fatalf("scraped %v", v)
	}
	if _, err := scrape(t.Context(), newAPIClient(srv.URL, "", 1)); err == nil {
		t.Fatal("scrape without the key succeeded")
	}
}

func TestPopulationSpreadsDeadTokens(t *testing.T) {
	p := newPopulation("r", 100, 2, 0.02)
	dead := 0
	for u := range p.dead {
		for _, d := range p.dead[u] {
			if d {
				dead++
			}
		}
	}
	if dead != 4 {
		t.Fatalf("%d dead tokens of 200 at 2 %%, want 4", dead)
	}
	if got := p.expectedSends(10, 10); got != 10*10*2-countDeadIn(p, 100) {
		t.Fatalf("expectedSends = %d", got)
	}
	if v, ok := dataValue([]byte(`{"message":{"data":{"bench_t":"123","messageId":"n.1"}}}`), "messageId"); !ok || v != "n.1" {
		t.Fatalf("dataValue = %q, %v", v, ok)
	}
}

func countDeadIn(p *population, users int) uint64 {
	var n uint64
	for u := range users {
		for _, d := range p.dead[u] {
			if d {
				n++
			}
		}
	}
	return n
}

// waitDrained does not take one empty look for a drained queue: a delivery
// retried between the look's two requests passes unseen. The queue counts
// as drained only after two empty looks with no send between them.
func TestWaitDrainedNeedsTwoQuietEmptyLooks(t *testing.T) {
	var looks atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("state") == "pending" {
			looks.Add(1)
		}
		w.Write([]byte(`{"deliveries":[]}`)) // every look finds nothing
	}))
	defer srv.Close()
	// Sends keep reaching the emulator until the fourth look.
	var sends atomic.Uint64
	count := func() uint64 {
		if looks.Load() < 4 {
			return sends.Add(1)
		}
		return sends.Load()
	}
	err := waitDrained(t.Context(), newAPIClient(srv.URL, "", 1), newSink(false), count, 1, time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n := looks.Load(); n < 5 {
		t.Fatalf("drained after %d looks, while sends still arrived until the fourth", n)
	}
}
