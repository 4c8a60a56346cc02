package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
	"github.com/heraldhq/herald/store"
)

// acceptingStore accepts every trigger without a database, so the fuzzer
// spends its time in decoding and validation. Only Enqueue, GetType (no
// type is declared), DigestScheduleTypes (no user has a digest schedule,
// so a trigger reads no preferences: issue 36 item 2) and GetTemplates (no
// type has templates; a trigger without a title or a body reads its
// type's since issue 37) are implemented: the trigger path calls nothing
// else, and any other call would panic and fail the fuzz run, which is
// what should happen if that changes.
type acceptingStore struct{ store.Store }

func (acceptingStore) GetType(_ context.Context, name string) (heraldtype.NotificationType, error) {
	return heraldtype.NotificationType{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "type %q not found", name)
}

func (acceptingStore) DigestScheduleTypes(context.Context) ([]string, error) { return nil, nil }

func (acceptingStore) GetTemplates(_ context.Context, typ string, _ int) (heraldtype.TemplateVersion, error) {
	return heraldtype.TemplateVersion{}, heraldtype.Errorf(heraldtype.ENOTFOUND, "templates of type %q not found", typ)
}

func (acceptingStore) Enqueue(_ context.Context, p store.EnqueueParams) (store.EnqueueResult, error) {
	res := store.EnqueueResult{Notifications: make([]store.EnqueuedNotification, len(p.Notifications))}
	for i, n := range p.Notifications {
		res.Notifications[i] = store.EnqueuedNotification{ID: n.ID, UserID: n.UserID, Deliveries: 1}
	}
	return res, nil
}

// FuzzDecodeTrigger drives POST /v1/notifications — body decoding, the
// Idempotency-Key header and the Client's normalisation — with arbitrary
// bodies, content types and keys. Whatever comes in, the answer is 202 or a
// well-formed 4xx error from the catalogue: never a panic, never a 5xx.
// The committed corpus is in testdata/fuzz/FuzzDecodeTrigger.
func FuzzDecodeTrigger(f *testing.F) {
	c, err := herald.NewClient(herald.Config{
		Store:          acceptingStore{},
		Providers:      map[string]herald.Provider{"fcm": &fakeProvider{maxBody: 4096}},
		DisableWorkers: true,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		f.Fatal(err)
	}
	// Without credentials in development mode: the fuzzer exercises the
	// decoder, and the authenticated path is fuzzed in auth_fuzz_test.go.
	srv, err := httpapi.New(httpapi.Config{Client: c, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxBodyBytes: 64 << 10,
		Auth: httpapi.AuthConfig{Disabled: true}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"user_id":"alice","type":"price_drop","title":"Cheaper"}`), "application/json", "")
	f.Add([]byte(`{"user_ids":["a","b"],"type":"t","body":"x","idempotency_key":"k"}`), "", "k")
	f.Add([]byte(`{"user_id":"a","type":"t","data_only":true,"data":{"k":"v"},"send_at":"2026-01-01T00:00:00Z"}`), "application/x-www-form-urlencoded", "")
	f.Add([]byte(`{"user_id":"a","type":"t","title":"x"}{}`), "text/plain", "")
	f.Add([]byte(`{"user_id":"a","type":"t","data":{"n":"1"}}`), "application/json", "") // no title: the type's templates are read
	f.Add([]byte("\xff"), "application/json; charset=latin1", "\x00")

	f.Fuzz(func(t *testing.T, body []byte, contentType, key string) {
		req := httptest.NewRequest("POST", "/v1/notifications", bytes.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)

		switch {
		case rec.Code == http.StatusAccepted:
			var ok struct {
				Notifications []herald.EnqueuedNotification `json:"notifications"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &ok); err != nil || len(ok.Notifications) == 0 {
				t.Fatalf("202 with body %q (%v)", rec.Body.Bytes(), err)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var eb httpapi.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
				t.Fatalf("%d with a body that is not JSON: %q", rec.Code, rec.Body.Bytes())
			}
			if eb.Code == "" || eb.Message == "" || httpapi.StatusForCode(eb.Code) != rec.Code {
				t.Fatalf("%d with error body %+v", rec.Code, eb)
			}
		default:
			t.Fatalf("status %d for body %q, Content-Type %q, key %q: %s", rec.Code, body, contentType, key, rec.Body.Bytes())
		}
	})
}
