package httpapi

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/tracing"
)

// traced wraps a route's handler in a server span named after its pattern
// ("POST /v1/notifications") when the Client traces (Client.
// TracerProvider): the caller's W3C traceparent header, when it sends one,
// makes the span its child, so a trigger's enqueue and, later, its
// deliveries' claims and sends join the caller's trace. Without tracing
// the handler is returned as it is.
func (s *Server) traced(pattern string, h http.HandlerFunc) http.HandlerFunc {
	if s.tracer == nil {
		return h
	}
	route := pattern // "POST /v1/notifications" → the route "/v1/notifications"
	if _, path, ok := strings.Cut(pattern, " "); ok {
		route = path
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := tracing.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.tracer.Start(ctx, pattern, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
		defer span.End()
		h(w, r.WithContext(ctx))
	}
}

// traceError marks the request's span, if it records, with the API error
// it answered: its code, and an error status when it is the server's
// fault (a client's mistake is not a failure of the span).
func traceError(r *http.Request, code string, status int) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(tracing.ErrorCode.String(code), attribute.Int("http.response.status_code", status))
	if status >= 500 && code != heraldtype.EUNAVAILABLE {
		span.SetStatus(codes.Error, code)
	}
}
