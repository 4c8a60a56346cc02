package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
	"github.com/heraldhq/herald/store/storetest"
)

// newStore opens a migrated store on a fresh temp file.
func newStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return newStore(t) },
		// An embedder's transaction on Herald's write connection (DB).
		BeginTx: func(t *testing.T, s store.Store) (any, func() error, func() error) {
			tx, err := s.(*sqlite.Store).DB().BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return tx, tx.Commit, tx.Rollback
		},
	})
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "x.db?mode=ro"} {
		if _, err := sqlite.Open(t.Context(), p, sqlite.Options{}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("Open(%q) = %v, want invalid_argument", p, err)
		}
	}
}

func TestMigrateTwice(t *testing.T) {
	s := newStore(t)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestTwoStoresOneFile is two processes on one database: their claims are
// serialised by BEGIN IMMEDIATE and busy_timeout, not by the Go pool.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	var stores []*sqlite.Store
	for range 2 {
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := stores[0]
	if _, err := s.UpsertUser(ctx, heraldtype.User{ID: "u", Timezone: "UTC"}, now); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		d := heraldtype.Device{ID: fmt.Sprint("d", i), UserID: "u", Platform: "android", Token: fmt.Sprint("t", i), PushOptIn: true}
		if _, err := s.UpsertDevice(ctx, d, now, 0); err != nil {
			t.Fatal(err)
		}
	}
	var ns []heraldtype.Notification
	for i := range 100 {
		ns = append(ns, heraldtype.Notification{ID: fmt.Sprint("n", i), UserID: "u", Type: "t",
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now})
	}
	_, err := s.Enqueue(ctx, store.EnqueueParams{Notifications: ns, MaxAttempts: 1, Now: now,
		PushProviders: map[heraldtype.Platform]string{"android": "fcm"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for i := range 4 {
		st := stores[i%2]
		wg.Go(func() {
			for {
				jobs, err := st.Claim(ctx, store.ClaimParams{Owner: fmt.Sprint("w", i), Now: now, LeaseUntil: now.Add(time.Minute), Limit: 9})
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if seen[j.Delivery.ID] {
						t.Errorf("delivery %d claimed twice", j.Delivery.ID)
					}
					seen[j.Delivery.ID] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 300 {
		t.Fatalf("claimed %d deliveries, want 300", len(seen))
	}
}
