package storetest

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testConsoleSessions checks the console session storage (issue 34 item
// 1): sessions round-trip by their token's hash, ids and hashes are
// unique, a touch never moves last_seen_at back, sign-out deletes, and
// pruning removes exactly the sessions that ended — by their absolute end
// or by idleness.
func testConsoleSessions(t *testing.T, newStore NewStore) {
	session := func(id string, lastSeen, expires time.Time) store.ConsoleSession {
		return store.ConsoleSession{ID: id, TokenHash: "hash-" + id, KeyID: "key-" + id, CreatedAt: base(),
			LastSeenAt: lastSeen, ExpiresAt: expires}
	}
	t.Run("CreateGetTouchDelete", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		a := session("s1", base(), at(12*time.Hour))
		a.KeyFingerprint = "fp"
		if err := f.s.CreateConsoleSession(f.ctx, a); err != nil {
			t.Fatal(err)
		}
		dupID := session("s1", base(), at(time.Hour))
		dupID.TokenHash = "other"
		wantCode(t, f.s.CreateConsoleSession(f.ctx, dupID), heraldtype.ECONFLICT)
		dupHash := session("s2", base(), at(time.Hour))
		dupHash.TokenHash = a.TokenHash
		wantCode(t, f.s.CreateConsoleSession(f.ctx, dupHash), heraldtype.ECONFLICT)

		got, err := f.s.GetConsoleSession(f.ctx, a.TokenHash)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a.ID || got.TokenHash != a.TokenHash || got.KeyID != a.KeyID || got.KeyFingerprint != "fp" {
			t.Fatalf("GetConsoleSession = %+v, want %+v", got, a)
		}
		wantTime(t, "CreatedAt", got.CreatedAt, base())
		wantTime(t, "LastSeenAt", got.LastSeenAt, base())
		wantTime(t, "ExpiresAt", got.ExpiresAt, at(12*time.Hour))
		_, err = f.s.GetConsoleSession(f.ctx, "hash-unknown")
		wantCode(t, err, heraldtype.ENOTFOUND)

		// A touch moves last_seen_at forward, never back.
		if err := f.s.TouchConsoleSession(f.ctx, "s1", at(5*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := f.s.TouchConsoleSession(f.ctx, "s1", at(2*time.Minute)); err != nil {
			t.Fatalf("a late touch: %v", err)
		}
		if got, err = f.s.GetConsoleSession(f.ctx, a.TokenHash); err != nil {
			t.Fatal(err)
		}
		wantTime(t, "LastSeenAt after touches", got.LastSeenAt, at(5*time.Minute))
		wantCode(t, f.s.TouchConsoleSession(f.ctx, "nope", base()), heraldtype.ENOTFOUND)

		if err := f.s.DeleteConsoleSession(f.ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		_, err = f.s.GetConsoleSession(f.ctx, a.TokenHash)
		wantCode(t, err, heraldtype.ENOTFOUND)
		wantCode(t, f.s.DeleteConsoleSession(f.ctx, "s1"), heraldtype.ENOTFOUND)
		wantCode(t, f.s.TouchConsoleSession(f.ctx, "s1", at(time.Hour)), heraldtype.ENOTFOUND)
	})
	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		now, idle := at(time.Hour), 30*time.Minute
		sessions := []store.ConsoleSession{
			session("alive", at(50*time.Minute), at(2*time.Hour)),
			session("expired", at(59*time.Minute), now),      // absolute end reached at now
			session("idle", now.Add(-idle), at(2*time.Hour)), // idle for exactly the timeout
			session("just-active", now.Add(-idle+time.Microsecond), at(2*time.Hour)),
		}
		for _, cs := range sessions {
			if err := f.s.CreateConsoleSession(f.ctx, cs); err != nil {
				t.Fatal(err)
			}
		}
		n, err := f.s.PruneConsoleSessions(f.ctx, now, now.Add(-idle))
		if err != nil || n != 2 {
			t.Fatalf("PruneConsoleSessions = %d, %v; want 2", n, err)
		}
		for _, cs := range sessions {
			_, err := f.s.GetConsoleSession(f.ctx, cs.TokenHash)
			gone := heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND
			if err != nil && !gone {
				t.Fatal(err)
			}
			if wantGone := cs.ID == "expired" || cs.ID == "idle"; gone != wantGone {
				t.Errorf("session %s: pruned %v, want %v", cs.ID, gone, wantGone)
			}
		}
		if n, err := f.s.PruneConsoleSessions(f.ctx, now, now.Add(-idle)); err != nil || n != 0 {
			t.Fatalf("a second PruneConsoleSessions = %d, %v; want 0", n, err)
		}
	})
}
