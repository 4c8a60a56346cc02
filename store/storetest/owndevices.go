package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testOwnDevices covers the ownership half of device registration (issue
// 18, issue 23): UpsertOwnDevice never moves another user's device, and
// UpsertDevice records the moves it makes.
func testOwnDevices(t *testing.T, newStore NewStore) {
	t.Run("OwnDeviceNeverMoves", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android") // token tok-d1
		// u2 names u1's device, even with the token it holds: nothing
		// is written, not even the detach of the token.
		_, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d1", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(time.Minute), 0, time.Time{})
		if !store.IsDeviceTaken(err) {
			t.Fatalf("UpsertOwnDevice of another user's device: %v, want the device_id conflict", err)
		}
		if d := f.getDevice("d1"); d.UserID != "u1" || d.Token != "tok-d1" || d.Status != heraldtype.DeviceActive {
			t.Fatalf("d1 after u2's attempt = %+v", d)
		}
		// A new device of u2 with that token detaches it from d1 once d1
		// is idle (last seen before the takeover cutoff, issue 23).
		d2, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d2", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(2*time.Minute), 0, at(time.Second))
		if err != nil || d2.UserID != "u2" || d2.Token != "tok-d1" {
			t.Fatalf("UpsertOwnDevice(d2, 0) = %+v, %v", d2, err)
		}
		if d := f.getDevice("d1"); d.UserID != "u1" || d.Token != "" || d.InvalidReason != "token_moved" {
			t.Fatalf("d1 after its token moved = %+v", d)
		}
		// Its own device is refreshed as UpsertDevice would.
		d1, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d1", UserID: "u1", Platform: "android", Token: "fresh", PushOptIn: true}, at(time.Hour), 0, time.Time{})
		if err != nil || d1.Token != "fresh" || d1.Status != heraldtype.DeviceActive || d1.PreviousUserID != "" || d1.ReassignedAt != nil {
			t.Fatalf("UpsertOwnDevice(own d1, 0) = %+v, %v", d1, err)
		}
		_, err = f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d9", UserID: "nobody", Platform: "android", Token: "t9"}, base(), 0, time.Time{})
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("OwnTokenTakeover", func(t *testing.T) {
		// Issue 23, S0.1: a user token takes another user's push token
		// only from a device idle since takeoverBefore (the phone changed
		// hands), never from one in use (a leaked token is no key).
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android") // token tok-d1, seen at base()
		f.upsertDevice(heraldtype.Device{ID: "d3", UserID: "u2", Platform: "android", Token: "tok-d3", PushOptIn: true}, base())
		if err := f.s.TouchDevice(f.ctx, "d1", at(time.Hour)); err != nil {
			t.Fatal(err)
		}
		// Abuse: d1 was seen at base()+1h, after the cutoff. Refused,
		// nothing written: not the new device, not the detach.
		_, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d2", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(2*time.Hour), 0, at(time.Hour))
		wantCode(t, err, heraldtype.ECONFLICT)
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Field != "token" || strings.Contains(he.Message, "u1") || strings.Contains(he.Message, "d1") {
			t.Fatalf("refusal = %v, want the token conflict naming no one", err)
		}
		if d := f.getDevice("d1"); d.UserID != "u1" || d.Token != "tok-d1" || d.Status != heraldtype.DeviceActive {
			t.Fatalf("d1 after the refused takeover = %+v", d)
		}
		if _, err := f.s.GetDevice(f.ctx, "d2"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("d2 after the refused takeover: %v, want not found", err)
		}
		// An existing device of u2 refreshing with that token: refused too.
		_, err = f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d3", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(2*time.Hour), 0, at(time.Hour))
		wantCode(t, err, heraldtype.ECONFLICT)
		if d := f.getDevice("d3"); d.Token != "tok-d3" {
			t.Fatalf("d3 after the refused takeover = %+v", d)
		}
		// The phone changed hands: d1 not seen since the cutoff. Moves.
		d2, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d2", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(26*time.Hour), 0, at(2*time.Hour))
		if err != nil || d2.UserID != "u2" || d2.Token != "tok-d1" {
			t.Fatalf("takeover from an idle device = %+v, %v", d2, err)
		}
		if d := f.getDevice("d1"); d.UserID != "u1" || d.Token != "" || d.InvalidReason != "token_moved" {
			t.Fatalf("d1 after its token moved = %+v", d)
		}
		// The user's own other device never blocks it, however recent.
		d3, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: "d3", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(27*time.Hour), 0, time.Time{})
		if err != nil || d3.Token != "tok-d1" {
			t.Fatalf("own device taking its user's token = %+v, %v", d3, err)
		}
	})
	t.Run("ReassignRecorded", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		if d := f.device("u1", "d1", "android"); d.PreviousUserID != "" || d.ReassignedAt != nil {
			t.Fatalf("new device carries a move: %+v", d)
		}
		moved := f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u2", Platform: "android", Token: "tok-d1", PushOptIn: true}, at(time.Minute))
		if moved.UserID != "u2" || moved.PreviousUserID != "u1" {
			t.Fatalf("moved device = %+v", moved)
		}
		wantTimePtr(t, "ReassignedAt", moved.ReassignedAt, at(time.Minute))
		// Refreshes by the new owner keep the record.
		f.upsertDevice(heraldtype.Device{ID: "d1", UserID: "u2", Platform: "android", Token: "tok-2", PushOptIn: true}, at(time.Hour))
		got := f.getDevice("d1")
		if got.PreviousUserID != "u1" {
			t.Fatalf("refreshed device = %+v", got)
		}
		wantTimePtr(t, "ReassignedAt", got.ReassignedAt, at(time.Minute))
	})
	// Two users racing for one new device id: exactly one gets it, the
	// other is told so; nobody silently loses the device (issue 23).
	t.Run("OwnDeviceRace", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		for round := range 20 {
			id := fmt.Sprintf("race-%d", round)
			var wg sync.WaitGroup
			errs := map[string]error{}
			var mu sync.Mutex
			for _, u := range []string{"u1", "u2"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.s.UpsertOwnDevice(f.ctx, heraldtype.Device{ID: id, UserID: u, Platform: "android",
						Token: "tok-" + id + "-" + u, PushOptIn: true}, base(), 0, time.Time{})
					mu.Lock()
					errs[u] = err
					mu.Unlock()
				}()
			}
			wg.Wait()
			var winner string
			for u, err := range errs {
				switch {
				case err == nil && winner == "":
					winner = u
				case err == nil:
					t.Fatalf("%s: both users got the device", id)
				case !store.IsDeviceTaken(err):
					t.Fatalf("%s: %s: %v", id, u, err)
				}
			}
			if winner == "" {
				t.Fatalf("%s: nobody got the device: %v", id, errs)
			}
			if d := f.getDevice(id); d.UserID != winner || d.Token != "tok-"+id+"-"+winner {
				t.Fatalf("%s: winner %s, device %+v", id, winner, d)
			}
		}
	})
}
