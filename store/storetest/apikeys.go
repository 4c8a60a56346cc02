package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testAPIKeys checks the server API key storage (security issue): keys
// round-trip, ids are unique, revocation is sticky and idempotent, and
// only unrevoked keys count as active.
func testAPIKeys(t *testing.T, newStore NewStore) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		if n, err := f.s.CountActiveAPIKeys(f.ctx); err != nil || n != 0 {
			t.Fatalf("CountActiveAPIKeys on an empty store = %d, %v", n, err)
		}
		if keys, err := f.s.ListAPIKeys(f.ctx); err != nil || keys == nil || len(keys) != 0 {
			t.Fatalf("ListAPIKeys on an empty store = %#v, %v; want an empty, non-nil list", keys, err)
		}
		a := store.APIKey{ID: "k1", Name: "ci", Hash: "aa11", Scopes: []string{"notifications:write", "users:write"}, CreatedAt: base()}
		b := store.APIKey{ID: "k2", Name: "ops", Hash: "bb22", Scopes: []string{"admin"}, CreatedAt: at(time.Minute)}
		for _, k := range []store.APIKey{b, a} {
			if err := f.s.CreateAPIKey(f.ctx, k); err != nil {
				t.Fatalf("CreateAPIKey(%s): %v", k.ID, err)
			}
		}
		wantCode(t, f.s.CreateAPIKey(f.ctx, store.APIKey{ID: "k1", Name: "again", Hash: "cc", Scopes: []string{"admin"}, CreatedAt: base()}), heraldtype.ECONFLICT)
		got, err := f.s.GetAPIKey(f.ctx, "k1")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a.ID || got.Name != a.Name || got.Hash != a.Hash || !slices.Equal(got.Scopes, a.Scopes) || got.RevokedAt != nil {
			t.Fatalf("GetAPIKey = %+v, want %+v", got, a)
		}
		wantTime(t, "CreatedAt", got.CreatedAt, base())
		keys, err := f.s.ListAPIKeys(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 2 || keys[0].ID != "k1" || keys[1].ID != "k2" {
			t.Fatalf("ListAPIKeys = %+v, want k1, k2 (oldest first)", keys)
		}
		_, err = f.s.GetAPIKey(f.ctx, "nope")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("Revoke", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		for _, id := range []string{"k1", "k2"} {
			if err := f.s.CreateAPIKey(f.ctx, store.APIKey{ID: id, Name: id, Hash: "h" + id, Scopes: []string{"admin"}, CreatedAt: base()}); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := f.s.CountActiveAPIKeys(f.ctx); err != nil || n != 2 {
			t.Fatalf("CountActiveAPIKeys = %d, %v; want 2", n, err)
		}
		if err := f.s.RevokeAPIKey(f.ctx, "k1", at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		// A second revocation is not an error and keeps the first time.
		if err := f.s.RevokeAPIKey(f.ctx, "k1", at(2*time.Hour)); err != nil {
			t.Fatalf("revoking twice: %v", err)
		}
		got, err := f.s.GetAPIKey(f.ctx, "k1")
		if err != nil {
			t.Fatal(err)
		}
		wantTimePtr(t, "RevokedAt", got.RevokedAt, at(time.Hour))
		if n, err := f.s.CountActiveAPIKeys(f.ctx); err != nil || n != 1 {
			t.Fatalf("CountActiveAPIKeys after a revocation = %d, %v; want 1", n, err)
		}
		wantCode(t, f.s.RevokeAPIKey(f.ctx, "nope", base()), heraldtype.ENOTFOUND)
	})
}
