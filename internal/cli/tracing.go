package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracerProvider builds the OpenTelemetry SDK from tracing: an OTLP/HTTP
// exporter behind a batching span processor, sampling parent-based with
// sample_ratio for new traces. It returns a nil provider (tracing off, the
// Client's hot paths untouched) when no endpoint is set, and the function
// that flushes and stops the exporter at shutdown.
func (c TracingConfig) tracerProvider(log *slog.Logger) (trace.TracerProvider, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if c.Endpoint == "" {
		return nil, none, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, none, fmt.Errorf("config: tracing.endpoint: %q must be an http:// or https:// URL of an OTLP/HTTP collector (e.g. https://collector:4318)", c.Endpoint)
	}
	if u.Scheme == "http" && !c.Insecure {
		return nil, none, fmt.Errorf("config: tracing.endpoint: %s would send spans and tracing.headers unencrypted; use https:// or set tracing.insecure: true", u.Redacted())
	}
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		return nil, none, fmt.Errorf("config: tracing.sample_ratio: %v must be between 0 and 1", c.SampleRatio)
	}
	if c.ServiceName == "" {
		return nil, none, fmt.Errorf("config: tracing.service_name: must not be empty")
	}
	// A collector's base URL gets OTLP's traces path, as the SDK does for
	// OTEL_EXPORTER_OTLP_ENDPOINT; a URL with a path (a vendor's own
	// intake) is used as it is.
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String())}
	if len(c.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
	}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	// The exporter connects lazily: a collector that is down loses spans,
	// reported below, and never keeps Herald from starting.
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, none, fmt.Errorf("config: tracing: %w", err)
	}
	// The SDK reports export failures through OpenTelemetry's one error
	// handler; they go to Herald's log instead of the standard logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: exporting spans failed", "endpoint", u.Redacted(), "err", err)
	}))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", c.ServiceName))),
	)
	log.Info("tracing on", "endpoint", u.Redacted(), "sample_ratio", c.SampleRatio, "service_name", c.ServiceName)
	return tp, tp.Shutdown, nil
}
