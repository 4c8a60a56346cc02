package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Tracing is off by default; a bad tracing setting stops the start with
// its key's name; a good one builds a provider whose shutdown works with
// no collector listening.
func TestTracingConfig(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	tp, stop, err := defaultConfig().Tracing.tracerProvider(log)
	if err != nil || tp != nil {
		t.Fatalf("default: provider %v, err %v; want off", tp, err)
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  TracingConfig
		want string
	}{
		{TracingConfig{Endpoint: "collector:4318", SampleRatio: 1, ServiceName: "h"}, "tracing.endpoint"},
		{TracingConfig{Endpoint: "http://collector:4318", SampleRatio: 1, ServiceName: "h"}, "tracing.insecure"},
		{TracingConfig{Endpoint: "https://collector:4318", SampleRatio: 1.5, ServiceName: "h"}, "tracing.sample_ratio"},
		{TracingConfig{Endpoint: "https://collector:4318", SampleRatio: 1}, "tracing.service_name"},
	} {
		if _, _, err := tc.cfg.tracerProvider(log); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one naming %s", tc.cfg, err, tc.want)
		}
	}
	cfg := TracingConfig{Endpoint: "http://127.0.0.1:1", Insecure: true, SampleRatio: 0.5, ServiceName: "herald",
		Headers: map[string]string{"authorization": "Bearer x"}}
	tp, stop, err = cfg.tracerProvider(log)
	if err != nil || tp == nil {
		t.Fatalf("provider %v, err %v", tp, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = stop(ctx) // nothing was recorded; a cancelled flush returns at once
}

// serve with tracing.* set exports a trigger's spans over OTLP/HTTP to the
// collector, in the caller's trace, with the configured headers; the last
// spans are flushed when serve stops.
func TestServeExportsTraces(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var auth []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/v1/traces" {
			bodies = append(bodies, b)
			auth = append(auth, r.Header.Get("Authorization"))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	s := startDevEnv(t, []string{"HERALD_TRACING__ENDPOINT=" + collector.URL, "HERALD_TRACING__INSECURE=true",
		"HERALD_TRACING__HEADERS__AUTHORIZATION=Bearer collector-key"})
	if code, _ := call(t, "PUT", s.api+"/v1/users/u1", `{"timezone":"Asia/Seoul"}`); code != 200 {
		t.Fatalf("PUT user: %d", code)
	}
	if code, _ := call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android"}`); code != 200 {
		t.Fatalf("POST device: %d", code)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	code, out := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"promo","title":"t","body":"b"}`,
		"traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if code != 202 {
		t.Fatalf("POST notification: %d %v", code, out)
	}
	id, _ := out["id"].(string)
	waitFor(t, "the notification to be sent", func() bool {
		_, st := call(t, "GET", s.api+"/v1/notifications/"+id, "")
		return st["status"] == "SENT"
	})
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	raw, _ := hex.DecodeString(traceID)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("nothing was exported to /v1/traces")
	}
	var all []byte
	for i, b := range bodies {
		if auth[i] != "Bearer collector-key" {
			t.Errorf("export %d: Authorization %q", i, auth[i])
		}
		all = append(all, b...)
	}
	for _, want := range []string{"POST /v1/notifications", "herald.enqueue", "herald.deliver", "herald.claim", "herald.policy", "herald.send", id} {
		if !bytes.Contains(all, []byte(want)) {
			t.Errorf("the exported spans lack %q", want)
		}
	}
	if !bytes.Contains(all, raw) {
		t.Error("the exported spans are not in the caller's trace")
	}
	if !strings.Contains(s.logs.String(), `"msg":"tracing on"`) {
		t.Error("no start-up line says tracing is on")
	}
}
