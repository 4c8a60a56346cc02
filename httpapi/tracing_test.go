package httpapi_test

// Issue 34 item 5: one trace from a trigger request carrying a W3C
// traceparent through the enqueue, the claim, the policy and the provider
// call, on both stores; and without tracing, no trace column written.

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/internal/apitest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// tracedStore is a migrated store and a query of one notification's
// stored traceparent (NULL reads as nil).
type tracedStore struct {
	store.Store
	traceParent func(ctx context.Context, id string) (*string, error)
}

func openTracedStores(t *testing.T) map[string]func(t *testing.T) tracedStore {
	return map[string]func(t *testing.T) tracedStore{
		"sqlite": func(t *testing.T) tracedStore {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "h.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			return tracedStore{Store: s, traceParent: func(ctx context.Context, id string) (*string, error) {
				var v sql.NullString
				err := s.DB().QueryRowContext(ctx, `SELECT trace_parent FROM notifications WHERE id = ?`, id).Scan(&v)
				if !v.Valid {
					return nil, err
				}
				return &v.String, err
			}}
		},
		"postgres": func(t *testing.T) tracedStore {
			dsn, schema := pgtest.NewSchema(t)
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			return tracedStore{Store: s, traceParent: func(ctx context.Context, id string) (*string, error) {
				var v *string
				err := s.Pool().QueryRow(ctx, `SELECT trace_parent FROM `+pgx.Identifier{schema}.Sanitize()+
					`.notifications WHERE id = $1`, id).Scan(&v)
				return v, err
			}}
		},
	}
}

// newTracedEnv is newEnv over st with running workers and tp as the
// Client's TracerProvider (nil: tracing off).
func newTracedEnv(t *testing.T, st store.Store, tp trace.TracerProvider) *env {
	t.Helper()
	p := &fakeProvider{}
	c, err := herald.NewClient(herald.Config{
		Store: st, Providers: map[string]herald.Provider{"fcm": p}, MaintenanceInterval: -1,
		Worker:         herald.WorkerConfig{PollInterval: 20 * time.Millisecond, ReapInterval: time.Second},
		Logger:         slog.New(slog.DiscardHandler),
		TracerProvider: tp,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	keys, err := auth.NewKeys(auth.KeysConfig{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := keys.Create(t.Context(), "test-admin", []auth.Scope{auth.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(httpapi.Config{Client: c, Logger: slog.New(slog.DiscardHandler), Auth: httpapi.AuthConfig{Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, h: apitest.Handler(t, srv), client: c, provider: p, keys: keys, adminKey: admin}
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// spanAttr is the value of key on span, "" when it has none.
func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == key {
			return a.Value.Emit()
		}
	}
	return ""
}

func TestTriggerIsTracedThroughTheDelivery(t *testing.T) {
	for name, open := range openTracedStores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			e := newTracedEnv(t, st, tp)
			e.seedUser("u1")
			exp.Reset() // the seeding requests' own traces
			var res herald.Result
			e.do("POST", "/v1/notifications", map[string]any{"user_id": "u1", "type": "promo", "title": "Hi", "body": "b"},
				"traceparent", "00-"+callerTrace+"-"+callerSpan+"-01").expect(t, 202, &res)
			nid := res.Notifications[0].ID

			ended := func(name string) sdktrace.ReadOnlySpan {
				for _, s := range exp.GetSpans().Snapshots() {
					if s.Name() == name && spanAttr(s, "herald.notification_id") == nid {
						return s
					}
				}
				return nil
			}
			waitFor(t, "the delivery span", func() bool { return ended("herald.deliver") != nil })

			byName := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range exp.GetSpans().Snapshots() {
				if s.SpanContext().TraceID().String() != callerTrace {
					t.Errorf("span %s is in trace %s, not the caller's", s.Name(), s.SpanContext().TraceID())
				}
				byName[s.Name()] = s
			}
			req := byName["POST /v1/notifications"]
			if req == nil || req.Parent().SpanID().String() != callerSpan || !req.Parent().IsRemote() {
				t.Fatalf("the request span is missing or not the caller's child: %v", req)
			}
			deliver := byName["herald.deliver"]
			did := spanAttr(deliver, "herald.delivery_id")
			if did == "" || spanAttr(deliver, "herald.outcome") != "sent" || spanAttr(deliver, "herald.provider") != "fcm" ||
				spanAttr(deliver, "herald.channel") != "push" || spanAttr(deliver, "herald.type") != "promo" {
				t.Errorf("delivery span attributes: %v", deliver.Attributes())
			}
			if enq := byName["herald.enqueue"]; enq == nil || spanAttr(enq, "herald.notification_id") != nid ||
				enq.Parent().SpanID() != req.SpanContext().SpanID() {
				t.Fatalf("the enqueue span is missing, unnamed or not the request's child: %v", enq)
			}
			if deliver.Parent().SpanID() != byName["herald.enqueue"].SpanContext().SpanID() {
				t.Errorf("the delivery span's parent is %s, not the enqueue span", deliver.Parent().SpanID())
			}
			for _, n := range []string{"herald.claim", "herald.policy", "herald.send"} {
				s := byName[n]
				if s == nil {
					t.Fatalf("no %s span; got %v", n, keys(byName))
				}
				if spanAttr(s, "herald.delivery_id") != did || s.Parent().SpanID() != deliver.SpanContext().SpanID() {
					t.Errorf("%s: delivery_id %q (want %s), parent %s", n, spanAttr(s, "herald.delivery_id"), did, s.Parent().SpanID())
				}
			}
			if v := spanAttr(byName["herald.policy"], "herald.policy.verdict"); v != "allow" {
				t.Errorf("policy verdict %q", v)
			}

			stored, err := st.traceParent(t.Context(), nid)
			if err != nil || stored == nil || (*stored)[3:35] != callerTrace {
				t.Errorf("stored traceparent %v, %v", stored, err)
			}
		})
	}
}

func keys(m map[string]sdktrace.ReadOnlySpan) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Tracing off: the trigger is delivered as ever and its notification keeps
// no traceparent, whatever header the caller sent.
func TestUntracedTriggerStoresNoTraceParent(t *testing.T) {
	for name, open := range openTracedStores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			e := newTracedEnv(t, st, nil)
			e.seedUser("u1")
			var res herald.Result
			e.do("POST", "/v1/notifications", map[string]any{"user_id": "u1", "type": "promo", "title": "Hi", "body": "b"},
				"traceparent", "00-"+callerTrace+"-"+callerSpan+"-01").expect(t, 202, &res)
			waitFor(t, "the send", func() bool {
				e.provider.mu.Lock()
				defer e.provider.mu.Unlock()
				return e.provider.sent == 1
			})
			stored, err := st.traceParent(t.Context(), res.Notifications[0].ID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) || stored != nil {
				t.Errorf("stored traceparent %v, %v; want NULL", stored, err)
			}
		})
	}
}
