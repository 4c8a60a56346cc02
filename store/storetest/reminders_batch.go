package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// A batch of fires is written set-based (issue 19 item 10): one guarded
// statement for all its reminders, one write of all its notifications.
// These cases hold that every guarantee of a fire alone still holds for
// each fire of a mixed batch.

// claimAll claims n reminders as owner and returns them by key.
func (f *fixture) claimAll(owner string, now time.Time, n int) map[string]store.ReminderClaim {
	f.t.Helper()
	cs := f.claimReminders(owner, now, n+1)
	if len(cs) != n {
		f.t.Fatalf("claimed %q, want %d reminders", claimedKeys(cs), n)
	}
	byKey := make(map[string]store.ReminderClaim, n)
	for _, c := range cs {
		byKey[c.Key] = c
	}
	return byKey
}

// testReminderFireBatchMixed: in one batch, given out of id order, fires
// that apply (sent, unsent, stopping) and fires the guard refuses (a
// reminder deleted, one stopped, one updated since the claim, a stale
// version, a repeat of an applied fire) each get their own result, in the
// order of the fires; only the applied ones write.
func testReminderFireBatchMixed(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	keys := []string{"a", "b", "c", "d", "e", "g", "h"}
	for _, k := range keys {
		f.putReminder(reminder(k, "u1", base()), base())
	}
	cs := f.claimAll("s1", base(), len(keys))
	// Moved on after the claim: d deleted, e stopped, g updated.
	if err := f.s.DeleteReminder(f.ctx, "d"); err != nil {
		t.Fatal(err)
	}
	f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout_completed", Data: map[string]string{"cart": "e"}},
		heraldtype.StopEvent, at(time.Second))
	f.putReminder(reminder("g", "u1", at(time.Hour)), at(time.Second))
	moved := map[string]heraldtype.Reminder{"e": f.getReminder("e"), "g": f.getReminder("g")}

	sent := f.occurrence(cs["c"], at(time.Hour))
	unsent := store.ReminderFire{ID: cs["a"].ID, Version: cs["a"].Version, NextAt: at(2 * time.Hour)}
	last := f.occurrence(cs["h"], time.Time{})
	last.StopReason = heraldtype.StopMaxSends
	stale := f.occurrence(cs["b"], at(time.Hour))
	stale.Version--
	deleted, stopped, updated := f.occurrence(cs["d"], at(time.Hour)), f.occurrence(cs["e"], at(time.Hour)), f.occurrence(cs["g"], at(time.Hour))
	repeat := sent
	repeat.NextAt = at(3 * time.Hour)
	fires := []store.ReminderFire{updated, sent, stale, last, deleted, unsent, repeat, stopped}
	want := []bool{false, true, false, true, false, true, false, false}
	now := at(2 * time.Second)
	rs := f.fireReminders("s1", now, fires...)
	for i, r := range rs {
		if r.Applied != want[i] {
			t.Fatalf("fire %d (%s): applied %v, want %v; results %+v", i, fires[i].ID, r.Applied, want[i], rs)
		}
		if !r.Applied && len(r.Result.Notifications) != 0 {
			t.Fatalf("fire %d (%s) not applied but enqueued %+v", i, fires[i].ID, r.Result)
		}
	}
	for _, i := range []int{1, 3} {
		res := rs[i].Result
		nid := fires[i].Enqueue.Notifications[0].ID
		if res.Replayed || len(res.Notifications) != 1 || res.Notifications[0].ID != nid || res.Notifications[0].Deliveries != 1 {
			t.Fatalf("fire %d (%s) = %+v, want its notification with one delivery", i, fires[i].ID, res)
		}
		if d := f.delivery(nid); d.State != heraldtype.StatePending {
			t.Fatalf("delivery of %s = %+v, want pending", fires[i].ID, d)
		}
	}
	for _, i := range []int{0, 2, 4, 7} {
		f.noNotification(fires[i].Enqueue.Notifications[0].ID)
	}
	if r := f.getReminder("c"); r.SentCount != 1 || r.LastNotificationID != sent.Enqueue.Notifications[0].ID ||
		!r.LastSentAt.Equal(now) || !r.NextAt.Equal(at(time.Hour)) || r.State != heraldtype.ReminderActive {
		t.Fatalf("c after its fire (the repeat refused): %+v", r)
	}
	if r := f.getReminder("a"); r.SentCount != 0 || !r.NextAt.Equal(at(2*time.Hour)) || r.LastNotificationID != "" ||
		!r.LastSentAt.IsZero() || r.State != heraldtype.ReminderActive {
		t.Fatalf("a after an unsent fire: %+v", r)
	}
	if r := f.getReminder("h"); r.State != heraldtype.ReminderStopped || r.StopReason != heraldtype.StopMaxSends ||
		!r.StoppedAt.Equal(now) || !r.NextAt.IsZero() || r.SentCount != 1 {
		t.Fatalf("h after its last fire: %+v", r)
	}
	if r := f.getReminder("b"); r.SentCount != 0 || r.Version != cs["b"].Version {
		t.Fatalf("b after a stale fire: %+v", r)
	}
	sameReminder(t, "e after a refused fire", f.getReminder("e"), moved["e"])
	sameReminder(t, "g after a refused fire", f.getReminder("g"), moved["g"])
	if _, err := f.s.GetReminder(f.ctx, "d"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("deleted reminder d: %v", err)
	}
	// Before b's lease ends, nobody else takes it; after, it is a rescue.
	// The applied ones are no longer leased; the stopped ones are not
	// claimable.
	if got := f.claimReminders("s2", at(30*time.Second), 10); len(got) != 0 {
		t.Fatalf("claim during b's lease = %q, want none", claimedKeys(got))
	}
	got := f.claimReminders("s2", at(3*time.Hour), 10)
	if len(got) != 4 {
		t.Fatalf("claim after the batch = %q, want a, b, c and g", claimedKeys(got))
	}
	for _, c := range got {
		if c.Rescued != (c.Key == "b") {
			t.Fatalf("claim of %s: rescued %v", c.Key, c.Rescued)
		}
	}
}

// testReminderFireBatchReplay: an occurrence whose idempotency key an
// earlier enqueue already took (S2.6) replays it inside a batch: the
// fire applies, the reminder advances and points at the earlier
// notification, and nothing new is written for it, while the batch's
// other fire writes its own notification.
func testReminderFireBatchReplay(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	f.putReminder(reminder("a", "u1", base()), base())
	f.putReminder(reminder("b", "u1", base()), base())
	cs := f.claimAll("s1", base(), 2)
	replay, fresh := f.occurrence(cs["a"], at(time.Hour)), f.occurrence(cs["b"], at(time.Hour))
	// The earlier enqueue of a's occurrence, under its key and with the
	// same request, wrote another notification.
	earlier := *replay.Enqueue
	earlier.Notifications = []heraldtype.Notification{replay.Enqueue.Notifications[0]}
	earlier.Notifications[0].ID = "n-earlier"
	f.enqueue(earlier)

	rs := f.fireReminders("s1", at(time.Second), replay, fresh)
	if !rs[0].Applied || !rs[0].Result.Replayed || len(rs[0].Result.Notifications) != 1 ||
		rs[0].Result.Notifications[0].ID != "n-earlier" || rs[0].Result.Notifications[0].Deliveries != 1 {
		t.Fatalf("replayed fire = %+v, want applied, replaying n-earlier", rs[0])
	}
	f.noNotification(replay.Enqueue.Notifications[0].ID)
	if r := f.getReminder("a"); r.SentCount != 1 || r.LastNotificationID != "n-earlier" || !r.NextAt.Equal(at(time.Hour)) {
		t.Fatalf("a after the replay: %+v, want sent once, pointing at n-earlier", r)
	}
	nid := fresh.Enqueue.Notifications[0].ID
	if !rs[1].Applied || rs[1].Result.Replayed || len(rs[1].Result.Notifications) != 1 || rs[1].Result.Notifications[0].ID != nid {
		t.Fatalf("fresh fire = %+v", rs[1])
	}
	f.delivery(nid)
	if r := f.getReminder("b"); r.SentCount != 1 || r.LastNotificationID != nid {
		t.Fatalf("b after its fire: %+v", r)
	}

	// A batch whose only sent occurrence is a replay writes no
	// notification at all.
	f.putReminder(reminder("c", "u1", at(time.Hour)), at(time.Second))
	c := f.claimAll("s1", at(time.Hour), 3)["c"]
	only := f.occurrence(c, at(2*time.Hour))
	earlier = *only.Enqueue
	earlier.Notifications = []heraldtype.Notification{only.Enqueue.Notifications[0]}
	earlier.Notifications[0].ID = "n-earlier-c"
	f.enqueue(earlier)
	res := f.fireReminders("s1", at(time.Hour), only)[0]
	if !res.Applied || !res.Result.Replayed || res.Result.Notifications[0].ID != "n-earlier-c" {
		t.Fatalf("lone replayed fire = %+v", res)
	}
	f.noNotification(only.Enqueue.Notifications[0].ID)
	if r := f.getReminder("c"); r.SentCount != 1 || r.LastNotificationID != "n-earlier-c" {
		t.Fatalf("c after its replayed fire: %+v", r)
	}
}

// testReminderFireBatchRollback: a fire whose occurrence cannot be
// enqueued — its key taken by a different request — fails the whole
// batch: nothing is enqueued, no sent_count advances, the leases stay
// (S2.4), and each good fire applies alone afterwards.
func testReminderFireBatchRollback(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	keys := []string{"a", "b", "c"}
	for _, k := range keys {
		f.putReminder(reminder(k, "u1", base()), base())
	}
	cs := f.claimAll("s1", base(), len(keys))
	before := map[string]heraldtype.Reminder{}
	var fires []store.ReminderFire
	for _, k := range keys {
		before[k] = f.getReminder(k)
		fires = append(fires, f.occurrence(cs[k], at(time.Hour)))
	}
	other := *fires[1].Enqueue
	other.RequestHash = "another request"
	other.Notifications = []heraldtype.Notification{fires[1].Enqueue.Notifications[0]}
	other.Notifications[0].ID = "n-other"
	f.enqueue(other)

	_, err := f.s.FireReminders(f.ctx, "s1", fires, at(time.Second))
	wantCode(t, err, heraldtype.ECONFLICT)
	for i, k := range keys {
		f.noNotification(fires[i].Enqueue.Notifications[0].ID)
		sameReminder(t, fmt.Sprintf("%s after the failed batch", k), f.getReminder(k), before[k])
	}
	if got := f.claimReminders("s2", at(time.Second), 10); len(got) != 0 {
		t.Fatalf("claim after the failed batch = %q, want none", claimedKeys(got))
	}
	for _, i := range []int{0, 2} {
		if res := f.fireReminders("s1", at(2*time.Second), fires[i])[0]; !res.Applied {
			t.Fatalf("fire of %s alone = %+v", keys[i], res)
		}
		f.delivery(fires[i].Enqueue.Notifications[0].ID)
	}
}
