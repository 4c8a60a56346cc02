package cli

import (
	"context"
	"log/slog"
	"strings"
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
