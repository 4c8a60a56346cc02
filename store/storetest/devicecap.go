package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testDeviceCap: UpsertDevice with maxPerUser keeps the user's devices
// seen most recently, the registered one always, and deletes the rest in
// its own transaction, so concurrent registrations never leave more
// (issue 18, item 4).
func testDeviceCap(t *testing.T, newStore NewStore) {
	ids := func(f *fixture, user string) []string {
		f.t.Helper()
		ds, err := f.s.ListDevices(f.ctx, user)
		if err != nil {
			f.t.Fatal(err)
		}
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	upsert := func(f *fixture, user, id string, now time.Time) {
		f.t.Helper()
		d := heraldtype.Device{ID: id, UserID: user, Platform: "android", Token: "tok-" + id, PushOptIn: true}
		if _, err := f.s.UpsertDevice(f.ctx, d, now, 3); err != nil {
			f.t.Fatalf("UpsertDevice(%s): %v", id, err)
		}
	}
	t.Run("EvictsOldestSeen", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.user("u2")
		f.device("u2", "other", heraldtype.PlatformIOS)
		upsert(f, "u1", "d1", at(0))
		upsert(f, "u1", "d2", at(time.Hour))
		upsert(f, "u1", "d3", at(2*time.Hour))
		upsert(f, "u1", "d1", at(3*time.Hour)) // a refresh, not one more
		if got := ids(f, "u1"); !slices.Equal(got, []string{"d1", "d2", "d3"}) {
			t.Fatalf("at the cap: devices %v", got)
		}
		upsert(f, "u1", "d4", at(4*time.Hour))
		if got := ids(f, "u1"); !slices.Equal(got, []string{"d1", "d3", "d4"}) {
			t.Fatalf("over the cap: devices %v, want d2 (seen longest ago) evicted", got)
		}
		// The registered device stays even when its clock is behind.
		upsert(f, "u1", "d5", at(-time.Hour))
		if got := ids(f, "u1"); !slices.Equal(got, []string{"d1", "d4", "d5"}) {
			t.Fatalf("registered with an old clock: devices %v, want d3 evicted", got)
		}
		if got := ids(f, "u2"); !slices.Equal(got, []string{"other"}) {
			t.Fatalf("another user's devices: %v", got)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := range 12 {
			wg.Go(func() {
				d := heraldtype.Device{ID: fmt.Sprintf("c%02d", i), UserID: "u1", Platform: "android", Token: fmt.Sprintf("tok-c%02d", i)}
				if _, err := f.s.UpsertDevice(f.ctx, d, at(time.Duration(i)*time.Second), 3); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent UpsertDevice: %v", err)
		}
		if got := ids(f, "u1"); len(got) != 3 {
			t.Fatalf("after 12 concurrent registrations with a cap of 3: devices %v", got)
		}
	})
}
