package heraldclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/heraldhq/herald/heraldclient"
)

// The JSON variants send a document as written: the server judges it and
// names a bad field by its whole path; the answers are the typed
// methods'.
func TestJSONVariantsSendTheBodyAsWritten(t *testing.T) {
	s := newServer(t, serverOptions{})
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.PutUserJSON(ctx, "u1", json.RawMessage(`{"timezone":"Europe/Berlin"}`)); err != nil {
		t.Fatal(err)
	}
	if typ, err := c.PutTypeJSON(ctx, "promo", json.RawMessage(`{"channels":["in_app"]}`)); err != nil || typ.Name != "promo" {
		t.Fatalf("PutTypeJSON: %+v, %v", typ, err)
	}
	_, err := c.PutPreferencesJSON(ctx, "u1", json.RawMessage(`{"types":{"promo":{"disabld":true}}}`))
	var herr *heraldclient.Error
	if !errors.As(err, &herr) || herr.Code != heraldclient.CodeInvalidArgument || herr.Field != "types.promo.disabld" {
		t.Fatalf("a misspelt nested field: %v (%+v)", err, herr)
	}
	if n, err := c.RecordInterestsJSON(ctx, json.RawMessage(`{"interests":[{"user_id":"u1","subject":"p:1","kind":"VIEW"},
		{"user_id":"u1","subject":"p:2","kind":"VIEW"}]}`)); err != nil || n != 2 {
		t.Fatalf("RecordInterestsJSON of a batch: %d, %v", n, err)
	}

	// The body's own idempotency_key is the header's: the second send is
	// a replay of the first, not a conflict.
	body := json.RawMessage(`{"user_id":"u1","type":"promo","title":"Hi","idempotency_key":"promo-1"}`)
	first, err := c.TriggerJSON(ctx, body, "")
	if err != nil || first.IdempotencyKey != "promo-1" || first.Replayed || first.ID == "" {
		t.Fatalf("TriggerJSON: %+v, %v", first, err)
	}
	again, err := c.TriggerJSON(ctx, body, "")
	if err != nil || !again.Replayed || again.ID != first.ID {
		t.Fatalf("TriggerJSON again: %+v, %v", again, err)
	}
	// Without one, a key is made for the call.
	other, err := c.TriggerJSON(ctx, json.RawMessage(`{"user_id":"u1","type":"promo","title":"Hi"}`), "")
	if err != nil || other.IdempotencyKey == "" || other.ID == first.ID {
		t.Fatalf("TriggerJSON without a key: %+v, %v", other, err)
	}
	if _, err := c.TriggerJSON(ctx, body, "another"); !heraldclient.IsCode(err, heraldclient.CodeInvalidArgument) {
		t.Fatalf("a key that differs from the body's: %v", err)
	}
}
