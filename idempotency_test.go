package herald_test

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/sqlite"
)

// TestIdempotencyNamespace: Request.IdempotencyNamespace keeps callers'
// keys apart (issue 23), in Enqueue as in EnqueueTx; within a namespace
// the key replays and conflicts as before, and the namespace is checked
// like the key.
func TestIdempotencyNamespace(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	client, err := herald.NewClient(herald.Config{Store: st, Providers: map[string]herald.Provider{"fcm": stubProvider{}},
		DisableWorkers: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	req := func(namespace, title string) herald.Request {
		return herald.Request{IdempotencyNamespace: namespace, IdempotencyKey: "order-1001", UserID: "u1",
			Type: "order_shipped", Title: title}
	}
	a, err := client.Enqueue(ctx, req("checkout", "Shipped"))
	if err != nil || a.Replayed {
		t.Fatalf("checkout: %+v, %v", a, err)
	}
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.EnqueueTx(ctx, tx, req("billing", "Refunded"))
	if err != nil || b.Replayed || b.Notifications[0].ID == a.Notifications[0].ID {
		t.Fatalf("billing, same key, other request: %+v, %v; want a trigger of its own", b, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	again, err := client.Enqueue(ctx, req("checkout", "Shipped"))
	if err != nil || !again.Replayed || again.Notifications[0].ID != a.Notifications[0].ID {
		t.Fatalf("checkout retry: %+v, %v; want %s replayed", again, err, a.Notifications[0].ID)
	}
	_, err = client.Enqueue(ctx, req("checkout", "Refunded"))
	if heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("checkout, same key, other request: %v; want a conflict", err)
	}
	_, err = client.Enqueue(ctx, req(strings.Repeat("n", herald.MaxKeyLength+1), "Shipped"))
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("an overlong namespace: %v; want invalid_argument", err)
	}
}
