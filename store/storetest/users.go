package storetest

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func testUsers(t *testing.T, newStore NewStore) {
	t.Run("UpsertGet", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		u, err := f.s.UpsertUser(f.ctx, heraldtype.User{ID: "u1", Timezone: "Asia/Seoul", Locale: "ko", Email: "a@b.c"}, base())
		if err != nil {
			t.Fatal(err)
		}
		wantTime(t, "CreatedAt", u.CreatedAt, base())
		wantTime(t, "UpdatedAt", u.UpdatedAt, base())
		later := at(time.Hour)
		u, err = f.s.UpsertUser(f.ctx, heraldtype.User{ID: "u1", Timezone: "Europe/Paris", Phone: "+331"}, later)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.s.GetUser(f.ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		if got != u {
			t.Fatalf("GetUser = %+v, upsert returned %+v", got, u)
		}
		if got.Timezone != "Europe/Paris" || got.Phone != "+331" || got.Locale != "" || got.Email != "" {
			t.Fatalf("mutable fields not replaced: %+v", got)
		}
		wantTime(t, "CreatedAt", got.CreatedAt, base())
		wantTime(t, "UpdatedAt", got.UpdatedAt, later)
	})
	t.Run("GetMany", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		want := map[string]heraldtype.User{}
		for _, u := range []heraldtype.User{{ID: "u1", Timezone: "Asia/Seoul", Locale: "ko-KR"}, {ID: "u2", Locale: "ar", Email: "a@b.c"}, {ID: "u3"}} {
			got, err := f.s.UpsertUser(f.ctx, u, base())
			if err != nil {
				t.Fatal(err)
			}
			want[u.ID] = got
		}
		got, err := f.s.GetUsers(f.ctx, []string{"u2", "nobody", "u1", "u2"})
		if err != nil || len(got) != 2 || got["u1"] != want["u1"] || got["u2"] != want["u2"] {
			t.Fatalf("GetUsers = %+v, %v; want u1 and u2 as upserted", got, err)
		}
		if got, err := f.s.GetUsers(f.ctx, nil); err != nil || len(got) != 0 {
			t.Fatalf("GetUsers of none = %+v, %v", got, err)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		_, err := f.s.GetUser(f.ctx, "nobody")
		wantCode(t, err, heraldtype.ENOTFOUND)
		_, err = f.s.GetUser(f.ctx, "")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("EmptyID", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		_, err := f.s.UpsertUser(f.ctx, heraldtype.User{Timezone: "UTC"}, base())
		wantCode(t, err, heraldtype.EINVALID)
	})
}

func testDevices(t *testing.T, newStore NewStore) {
	t.Run("Upsert", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		_, err := f.s.UpsertDevice(f.ctx, heraldtype.Device{ID: "d1", UserID: "nobody", Platform: "android", Token: "t"}, base(), 0)
		wantCode(t, err, heraldtype.ENOTFOUND)
		f.user("u1")
		d := f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "android", Token: "t1", AppVersion: "1.0", PushOptIn: true}, base())
		if d.Status != heraldtype.DeviceActive || d.FailCount != 0 || d.Token != "t1" || !d.PushOptIn || d.AppVersion != "1.0" {
			t.Fatalf("new device = %+v", d)
		}
		wantTime(t, "LastSeenAt", d.LastSeenAt, base())
		wantTime(t, "CreatedAt", d.CreatedAt, base())
		if got := f.getDevice("d1"); got.Token != "t1" || got.UserID != "u1" || got.Platform != "android" {
			t.Fatalf("GetDevice = %+v", got)
		}
		_, err = f.s.GetDevice(f.ctx, "nope")
		wantCode(t, err, heraldtype.ENOTFOUND)
		_, err = f.s.UpsertDevice(f.ctx, heraldtype.Device{UserID: "u1", Platform: "android", Token: "x"}, base(), 0)
		if err == nil {
			t.Fatal("UpsertDevice with an empty id succeeded")
		}
	})
	t.Run("TokenRefreshSameDevice", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "ios", Token: "old", PushOptIn: true}, base())
		d := f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "ios", Token: "new", PushOptIn: false}, at(time.Hour))
		if d.Token != "new" || d.PushOptIn || d.Status != heraldtype.DeviceActive {
			t.Fatalf("refreshed device = %+v", d)
		}
		wantTime(t, "CreatedAt", d.CreatedAt, base())
		wantTime(t, "LastSeenAt", d.LastSeenAt, at(time.Hour))
		// The old token is free: another device may take it without
		// disturbing d1.
		f.upsertDevice(heraldtype.Device{ID: "d2", UserID: "u1", Platform: "ios", Token: "old", PushOptIn: true}, at(2*time.Hour))
		if got := f.getDevice("d1"); got.Status != heraldtype.DeviceActive || got.Token != "new" {
			t.Fatalf("d1 after d2 took its old token = %+v", got)
		}
	})
	t.Run("TokenMoves", func(t *testing.T) {
		t.Parallel()
		for _, toUser := range []string{"u1", "u2"} {
			t.Run("to_"+toUser, func(t *testing.T) {
				f := newFixture(t, newStore)
				f.user("u1")
				f.user("u2")
				f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "android", Token: "shared", PushOptIn: true}, base())
				moved := at(time.Minute)
				d2 := f.upsertDevice(heraldtype.Device{ID: "d2", UserID: toUser, Platform: "android", Token: "shared", PushOptIn: true}, moved)
				if d2.Token != "shared" || d2.Status != heraldtype.DeviceActive {
					t.Fatalf("new holder = %+v", d2)
				}
				old := f.getDevice("d1")
				if old.Token != "" || old.Status != heraldtype.DeviceInvalid || old.InvalidReason != "token_moved" {
					t.Fatalf("old holder = %+v, want detached and INVALID token_moved", old)
				}
				wantTimePtr(t, "InvalidatedAt", old.InvalidatedAt, moved)
				// The detached device comes back with a token of its own.
				back := f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u1", Platform: "android", Token: "fresh", PushOptIn: true}, at(time.Hour))
				if back.Status != heraldtype.DeviceActive || back.InvalidatedAt != nil || back.InvalidReason != "" || back.FailCount != 0 {
					t.Fatalf("re-registered device = %+v", back)
				}
			})
		}
	})
	t.Run("DeviceMovesUser", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android")
		f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(time.Minute))
		l1, err := f.s.ListDevices(f.ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		l2, err := f.s.ListDevices(f.ctx, "u2")
		if err != nil {
			t.Fatal(err)
		}
		if len(l1) != 0 || len(l2) != 1 || l2[0].ID != "d1" || l2[0].UserID != "u2" || l2[0].Status != heraldtype.DeviceActive {
			t.Fatalf("after the move: u1 %+v, u2 %+v", l1, l2)
		}
	})
	t.Run("ListDeleteTouchPrune", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		_, err := f.s.ListDevices(f.ctx, "nobody")
		wantCode(t, err, heraldtype.ENOTFOUND)
		empty, err := f.s.ListDevices(f.ctx, "u2")
		if err != nil || len(empty) != 0 {
			t.Fatalf("ListDevices(u2) = %v, %v; want empty", empty, err)
		}
		for _, id := range []string{"dc", "da", "db"} {
			f.device("u1", id, "android")
		}
		f.device("u2", "dz", "ios")
		l, err := f.s.ListDevices(f.ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 3 || l[0].ID != "da" || l[1].ID != "db" || l[2].ID != "dc" {
			t.Fatalf("ListDevices(u1) = %+v, want da, db, dc", l)
		}

		wantCode(t, f.s.DeleteDevice(f.ctx, "u2", "da"), heraldtype.ENOTFOUND)
		if err := f.s.DeleteDevice(f.ctx, "u1", "da"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, f.s.DeleteDevice(f.ctx, "u1", "da"), heraldtype.ENOTFOUND)
		_, err = f.s.GetDevice(f.ctx, "da")
		wantCode(t, err, heraldtype.ENOTFOUND)

		if err := f.s.TouchDevice(f.ctx, "db", at(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		wantTime(t, "LastSeenAt", f.getDevice("db").LastSeenAt, at(48*time.Hour))
		wantCode(t, f.s.TouchDevice(f.ctx, "da", at(time.Hour)), heraldtype.ENOTFOUND)

		n, err := f.s.PruneDevices(f.ctx, at(24*time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("PruneDevices = %d, %v; want 2 (dc, dz)", n, err)
		}
		if _, err := f.s.GetDevice(f.ctx, "db"); err != nil {
			t.Fatalf("recently seen device pruned: %v", err)
		}
		_, err = f.s.GetDevice(f.ctx, "dc")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	testOwnDevices(t, newStore)
}
