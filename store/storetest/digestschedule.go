package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testDigestSchedules covers users' digest schedules (issue 36 item 2): a
// scheduled user's notifications join their one digest of the type (no
// key), closed at the scheduled time rather than after the window; with
// ScheduledOnly the other users' notifications are written as plain ones
// in the same trigger.
func testDigestSchedules(t *testing.T, h Harness) {
	setup := func(t *testing.T) (*fixture, *digestIDs) {
		f := newFixture(t, h.New)
		f.user("u1")
		f.user("u2")
		f.device("u1", "d1", "android")
		f.device("u2", "d2", "android")
		return f, &digestIDs{}
	}
	sixPM := at(6 * time.Hour)
	t.Run("ScheduledOnly", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		trigger := func(after time.Duration) store.EnqueueResult {
			p := f.digestParams(ids, "", 10, false, after, "u1", "u2")
			p.Digest = &store.DigestParams{MaxItems: 10, NewID: ids.next, ScheduledOnly: true,
				Scheduled: map[string]time.Time{"u1": sixPM}}
			return f.enqueue(p)
		}
		first := trigger(0)
		second := trigger(time.Hour)
		for _, res := range []store.EnqueueResult{first, second} {
			u1, u2 := res.Notifications[0], res.Notifications[1]
			if u1.UserID != "u1" || u1.Digest == "" || u1.Deliveries != 0 {
				t.Fatalf("u1's notification = %+v, want it digested", u1)
			}
			if u2.UserID != "u2" || u2.Digest != "" || u2.Deliveries != 1 {
				t.Fatalf("u2's notification = %+v, want it plain", u2)
			}
			if _, err := f.s.GetNotification(f.ctx, u2.ID); err != nil {
				t.Fatalf("u2's plain notification: %v", err)
			}
		}
		id := first.Notifications[0].Digest
		if second.Notifications[0].Digest != id {
			t.Fatalf("u1's second trigger joined %s, want %s", second.Notifications[0].Digest, id)
		}
		if d := f.getDigest(id); !d.CloseAt.Equal(sixPM) || d.Items != 2 || d.Key != "" || d.State != store.DigestOpen {
			t.Fatalf("scheduled digest = %+v, want open until %s with 2 items", d, sixPM)
		}
		if got := f.claimDigests("w", sixPM.Add(-time.Second), 10); len(got) != 0 {
			t.Fatalf("claimed %d digests before the scheduled time", len(got))
		}
		if got := f.claimDigests("w", sixPM, 10); len(got) != 1 || got[0].ID != id {
			t.Fatalf("claimed %+v at the scheduled time, want %s", got, id)
		}
	})
	t.Run("ScheduleOverridesTheWindow", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		p := f.digestParams(ids, "post-1", 10, true, 0, "u1", "u2")
		p.Digest.Scheduled = map[string]time.Time{"u1": sixPM}
		res := f.enqueue(p)
		u1, u2 := res.Notifications[0], res.Notifications[1]
		// u1's schedule collects the first trigger too (never immediate)
		// in the digest with no key; u2 follows the type: immediate.
		if u1.Digest == "" || u1.Deliveries != 0 || u2.Digest != "" || u2.Deliveries != 1 {
			t.Fatalf("notifications = %+v, %+v", u1, u2)
		}
		if d := f.getDigest(u1.Digest); !d.CloseAt.Equal(sixPM) || d.Key != "" || d.Items != 1 {
			t.Fatalf("u1's digest = %+v, want its schedule's close and no key", d)
		}
	})
	t.Run("RefusesAPastSchedule", func(t *testing.T) {
		t.Parallel()
		f, ids := setup(t)
		p := f.digestParams(ids, "", 10, false, time.Hour, "u1")
		p.Digest = &store.DigestParams{MaxItems: 10, NewID: ids.next, ScheduledOnly: true,
			Scheduled: map[string]time.Time{"u1": at(time.Hour)}}
		_, err := f.s.Enqueue(f.ctx, p)
		wantCode(t, err, "invalid_argument")
	})
}

// testDigestScheduleTypes covers the types a trigger reads preferences
// for: a preference write adds the types it schedules, in its write; a
// failed or refused write adds none; a type stays listed after its last
// schedule is dropped.
func testDigestScheduleTypes(t *testing.T, h Harness) {
	f := newFixture(t, h.New)
	f.user("u1")
	daily := &heraldtype.DigestSchedule{Every: heraldtype.DigestEveryDay, At: "18:00"}
	want := func(types ...string) {
		t.Helper()
		got, err := f.s.DigestScheduleTypes(f.ctx)
		if err != nil || !slices.Equal(got, types) {
			t.Fatalf("DigestScheduleTypes = %q, %v; want %q", got, err, types)
		}
	}
	want()
	p, err := f.s.PutPreferences(f.ctx, heraldtype.Preferences{UserID: "u1", Types: map[string]heraldtype.TypePreference{
		"comment": {Digest: daily}, "like": {Disabled: true}}}, at(0))
	if err != nil {
		t.Fatal(err)
	}
	want("comment")
	_, err = f.s.PutPreferences(f.ctx, heraldtype.Preferences{UserID: "ghost", Types: map[string]heraldtype.TypePreference{
		"ghostly": {Digest: daily}}}, at(0))
	wantCode(t, err, heraldtype.ENOTFOUND)
	mention := heraldtype.Preferences{UserID: "u1", Types: map[string]heraldtype.TypePreference{"mention": {Digest: daily}}}
	if _, ok, err := f.s.SwapPreferences(f.ctx, mention, p.UpdatedAt.Add(-time.Second), at(time.Minute)); err != nil || ok {
		t.Fatalf("SwapPreferences with a stale guard = %v, %v; want refused", ok, err)
	}
	want("comment")
	if _, ok, err := f.s.SwapPreferences(f.ctx, mention, p.UpdatedAt, at(time.Minute)); err != nil || !ok {
		t.Fatalf("SwapPreferences = %v, %v", ok, err)
	}
	want("comment", "mention")
	f.user("u2")
	if _, ok, err := f.s.SwapPreferences(f.ctx, heraldtype.Preferences{UserID: "u2", Types: map[string]heraldtype.TypePreference{
		"alert": {Digest: daily}}}, time.Time{}, at(time.Minute)); err != nil || !ok {
		t.Fatalf("first SwapPreferences of u2 = %v, %v", ok, err)
	}
	want("alert", "comment", "mention")
}
