package storetest

import (
	"testing"
	"time"

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
