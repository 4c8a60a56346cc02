package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The scheduler's side of store.Reminders (issue 19 items 3 and 4; S2.4,
// S2.6): claims with leases, fires that enqueue an occurrence and
// advance its reminder in one transaction, guarded so that a reminder
// cancelled, updated or claimed by another scheduler after the claim
// gets nothing enqueued.

func (f *fixture) claimReminders(owner string, now time.Time, limit int) []store.ReminderClaim {
	f.t.Helper()
	return f.claimRemindersUntil(owner, now, now.Add(time.Minute), limit)
}

func (f *fixture) claimRemindersUntil(owner string, now, until time.Time, limit int) []store.ReminderClaim {
	f.t.Helper()
	cs, err := f.s.ClaimReminders(f.ctx, store.ReminderClaimParams{Owner: owner, Now: now, LeaseUntil: until, Limit: limit})
	if err != nil {
		f.t.Fatalf("ClaimReminders(%s): %v", owner, err)
	}
	return cs
}

func claimedKeys(cs []store.ReminderClaim) []string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.Key
	}
	return keys
}

// occurrence is the fire that sends c's next occurrence and makes it due
// again at next: one push notification with the occurrence's
// idempotency key, reminder:{id}:{occurrence} (S2.6).
func (f *fixture) occurrence(c store.ReminderClaim, next time.Time) store.ReminderFire {
	n := heraldtype.Notification{
		ID: occurrenceID(c.Reminder), UserID: c.UserID, Type: c.Type, Title: c.Title, Body: c.Body, Data: c.Data,
		Channels: c.Channels, Priority: c.Priority, PayloadMode: heraldtype.PayloadAlert,
		Guarantee: heraldtype.AtLeastOnce, CreatedAt: base(),
	}
	p := params(n)
	p.IdempotencyKey = fmt.Sprintf("reminder:%s:%d", c.ID, c.SentCount+1)
	p.RequestHash = "h"
	return store.ReminderFire{ID: c.ID, Version: c.Version, Enqueue: &p, Sends: 1, NextAt: next}
}

func (f *fixture) fireReminders(owner string, now time.Time, fires ...store.ReminderFire) []store.FireResult {
	f.t.Helper()
	rs, err := f.s.FireReminders(f.ctx, owner, fires, now)
	if err != nil {
		f.t.Fatalf("FireReminders: %v", err)
	}
	if len(rs) != len(fires) {
		f.t.Fatalf("FireReminders returned %d results for %d fires", len(rs), len(fires))
	}
	for i, r := range rs {
		if r.ID != fires[i].ID {
			f.t.Fatalf("FireReminders result %d is of %s, want %s", i, r.ID, fires[i].ID)
		}
	}
	return rs
}

// noNotification fails unless the notification does not exist.
func (f *fixture) noNotification(id string) {
	f.t.Helper()
	if _, err := f.s.GetNotification(f.ctx, id); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		f.t.Fatalf("notification %s exists (or %v), want none", id, err)
	}
}

// testReminderClaim: due reminders only, oldest next_at first, up to the
// limit; a live lease is honoured, an expired one is claimed again and
// marked Rescued; each claim carries its user's time zone and latest
// send from another reminder; claiming changes nothing a reader sees.
func testReminderClaim(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	if _, err := f.s.UpsertUser(f.ctx, heraldtype.User{ID: "u2", Timezone: "Europe/London"}, base()); err != nil {
		t.Fatal(err)
	}
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	// u1's earlier reminder, sent at base-5m: the collision gap's source.
	f.putReminder(reminder("sent", "u1", at(-10*time.Minute)), at(-time.Hour))
	c := f.claimReminders("s0", at(-10*time.Minute), 10)
	f.fireReminders("s0", at(-5*time.Minute), f.occurrence(c[0], at(2*time.Hour)))

	f.putReminder(reminder("r0", "u1", base()), at(-time.Hour))
	f.putReminder(reminder("r1", "u2", at(time.Minute)), at(-time.Hour))
	f.putReminder(reminder("r2", "u1", at(2*time.Minute)), at(-time.Hour))
	f.putReminder(reminder("future", "u1", at(time.Hour)), at(-time.Hour))
	f.putReminder(reminder("stopped", "u1", at(-time.Minute)), at(-time.Hour))
	f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout_completed", Data: map[string]string{"cart": "stopped"}},
		heraldtype.StopEvent, at(-time.Hour))
	before := f.getReminder("r0")

	now := at(2 * time.Minute)
	cs := f.claimReminders("s1", now, 2)
	if got := claimedKeys(cs); !slices.Equal(got, []string{"r0", "r1"}) {
		t.Fatalf("first claim = %q, want [r0 r1]", got)
	}
	for _, c := range cs {
		if c.Rescued {
			t.Fatalf("%s: Rescued on its first claim", c.Key)
		}
	}
	if cs[0].UserTimeZone != "Asia/Seoul" || !cs[0].UserLastSentAt.Equal(at(-5*time.Minute)) {
		t.Fatalf("r0 claimed with zone %q, last sent %v; want Asia/Seoul, %v", cs[0].UserTimeZone, cs[0].UserLastSentAt, at(-5*time.Minute))
	}
	if cs[1].UserTimeZone != "Europe/London" || !cs[1].UserLastSentAt.IsZero() {
		t.Fatalf("r1 claimed with zone %q, last sent %v; want Europe/London, none", cs[1].UserTimeZone, cs[1].UserLastSentAt)
	}
	// The claim carries the reminder as stored, and changed nothing of it.
	sameReminder(t, "claimed r0", cs[0].Reminder, before)
	sameReminder(t, "r0 after the claim", f.getReminder("r0"), before)

	if got := claimedKeys(f.claimReminders("s2", now, 10)); !slices.Equal(got, []string{"r2"}) {
		t.Fatalf("second claim = %q, want [r2]", got)
	}
	if got := f.claimReminders("s3", now.Add(59*time.Second), 10); len(got) != 0 {
		t.Fatalf("claim under live leases = %q, want none", claimedKeys(got))
	}
	// The leases end at now+1m: a successor takes all three back.
	cs = f.claimReminders("s4", now.Add(time.Minute), 10)
	if got := claimedKeys(cs); !slices.Equal(got, []string{"r0", "r1", "r2"}) {
		t.Fatalf("claim after the leases ended = %q, want [r0 r1 r2]", got)
	}
	for _, c := range cs {
		if !c.Rescued {
			t.Fatalf("%s: not Rescued after its lease expired", c.Key)
		}
	}
	// The collision source itself: its own last send is not "another's".
	cs = f.claimReminders("s5", at(2*time.Hour), 10)
	if got := claimedKeys(cs); !slices.Equal(got, []string{"r0", "r1", "r2", "future", "sent"}) {
		t.Fatalf("claim at +2h = %q, want [r0 r1 r2 future sent]", got)
	}
	if !cs[3].UserLastSentAt.Equal(at(-5*time.Minute)) || !cs[4].UserLastSentAt.IsZero() {
		t.Fatalf("last sent of others: future %v, sent %v", cs[3].UserLastSentAt, cs[4].UserLastSentAt)
	}
}

// testReminderConcurrentClaims: schedulers claiming at once get disjoint
// sets (FOR UPDATE SKIP LOCKED on PostgreSQL, S2.4), and between them
// every due reminder.
func testReminderConcurrentClaims(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	const n = 40
	for u := range 4 {
		f.user(fmt.Sprintf("u%d", u))
	}
	for i := range n {
		f.putReminder(reminder(fmt.Sprintf("r%02d", i), fmt.Sprintf("u%d", i%4), at(time.Duration(i)*time.Second)), base())
	}
	now := at(time.Minute)
	var wg sync.WaitGroup
	start := make(chan struct{})
	got := make([][]store.ReminderClaim, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			<-start
			got[i], errs[i] = f.s.ClaimReminders(f.ctx, store.ReminderClaimParams{
				Owner: fmt.Sprintf("s%d", i), Now: now, LeaseUntil: now.Add(time.Minute), Limit: 12})
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]string{}
	for i, cs := range got {
		if errs[i] != nil {
			t.Fatalf("claimer %d: %v", i, errs[i])
		}
		for _, c := range cs {
			if other, dup := seen[c.ID]; dup {
				t.Fatalf("%s claimed by s%d and %s", c.Key, i, other)
			}
			seen[c.ID] = fmt.Sprintf("s%d", i)
		}
	}
	for _, c := range f.claimReminders("rest", now, 100) {
		if other, dup := seen[c.ID]; dup {
			t.Fatalf("%s claimed again while %s holds it", c.Key, other)
		}
		seen[c.ID] = "rest"
	}
	if len(seen) != n {
		t.Fatalf("%d reminders claimed in all, want %d", len(seen), n)
	}
}

func testReminderRelease(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.putReminder(reminder("a", "u1", base()), base())
	cs := f.claimReminders("s1", base(), 10)
	ids := []string{cs[0].ID, "unknown"}
	// Another owner's release is ignored.
	if err := f.s.ReleaseReminders(f.ctx, "s2", ids); err != nil {
		t.Fatalf("ReleaseReminders: %v", err)
	}
	if got := f.claimReminders("s3", base(), 10); len(got) != 0 {
		t.Fatalf("claim after another owner's release = %q, want none", claimedKeys(got))
	}
	if err := f.s.ReleaseReminders(f.ctx, "s1", ids); err != nil {
		t.Fatalf("ReleaseReminders: %v", err)
	}
	got := f.claimReminders("s3", base(), 10)
	if len(got) != 1 || got[0].Rescued {
		t.Fatalf("claim after release = %+v, want a, not rescued", got)
	}
	if err := f.s.ReleaseReminders(f.ctx, "s3", nil); err != nil {
		t.Fatalf("ReleaseReminders(no ids): %v", err)
	}
}

// testNextReminderAt: the earliest next_at of an active reminder that no
// lease holds; a leased reminder counts from its lease's end (when a
// successor may rescue it); stopped ones never count.
func testNextReminderAt(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	next := func(want time.Time) {
		t.Helper()
		got, ok, err := f.s.NextReminderAt(f.ctx)
		if err != nil {
			t.Fatalf("NextReminderAt: %v", err)
		}
		if want.IsZero() {
			if ok {
				t.Fatalf("NextReminderAt = %v, want none", got)
			}
			return
		}
		if !ok || !got.Equal(want) {
			t.Fatalf("NextReminderAt = %v, %v; want %v", got, ok, want)
		}
	}
	next(time.Time{})
	f.putReminder(reminder("stopped", "u1", at(-time.Hour)), base())
	f.stopReminders(store.ReminderSelector{UserID: "u1"}, heraldtype.StopCancelled, base())
	next(time.Time{})
	f.putReminder(reminder("later", "u1", at(10*time.Minute)), base())
	f.putReminder(reminder("first", "u1", base()), base())
	next(base())
	// Leased until +20m: "first" is in a scheduler's hands; "later" is next.
	f.claimRemindersUntil("s1", base(), at(20*time.Minute), 1)
	next(at(10 * time.Minute))
	// Leased until +5m: its lease ends first, and counts once expired.
	if err := f.s.ReleaseReminders(f.ctx, "s1", []string{"rem-first"}); err != nil {
		t.Fatal(err)
	}
	f.claimRemindersUntil("s1", base(), at(5*time.Minute), 1)
	next(at(5 * time.Minute))
	// Fired: the lease is gone and the reminder is due at its new next_at.
	c := f.claimRemindersUntil("s2", at(6*time.Minute), at(7*time.Minute), 1)
	f.fireReminders("s2", at(6*time.Minute), store.ReminderFire{ID: c[0].ID, Version: c[0].Version, NextAt: at(time.Hour)})
	next(at(10 * time.Minute))
}

// testReminderFire: an applied fire enqueues the occurrence's
// notification and deliveries under its idempotency key and advances
// the reminder in the same transaction (S2.4, S2.6); a fire that is not
// sent only moves next_at; a stop reason stops the reminder.
func testReminderFire(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	f.putReminder(reminder("cart", "u1", base()), base())
	c := f.claimReminders("s1", base(), 10)[0]
	fire := f.occurrence(c, at(time.Hour))
	now := at(time.Second)
	res := f.fireReminders("s1", now, fire)[0]
	nid := fire.Enqueue.Notifications[0].ID
	if !res.Applied || res.Result.Replayed || len(res.Result.Notifications) != 1 ||
		res.Result.Notifications[0].ID != nid || res.Result.Notifications[0].Deliveries != 1 {
		t.Fatalf("fire = %+v, want applied with one notification and one delivery", res)
	}
	n, err := f.s.GetNotification(f.ctx, nid)
	if err != nil || n.IdempotencyKey != "reminder:rem-cart:1" || n.UserID != "u1" || n.Type != "cart_reminder" {
		t.Fatalf("GetNotification = %+v, %v; want the occurrence under reminder:rem-cart:1", n, err)
	}
	if d := f.delivery(nid); d.State != heraldtype.StatePending {
		t.Fatalf("delivery = %+v, want pending", d)
	}
	r := f.getReminder("cart")
	want := c.Reminder
	want.SentCount, want.LastNotificationID, want.LastSentAt, want.NextAt, want.UpdatedAt = 1, nid, now, at(time.Hour), now
	want.Version = r.Version
	sameReminder(t, "after the fire", r, want)
	if r.Version <= c.Version {
		t.Fatalf("fire left version %d, claimed %d", r.Version, c.Version)
	}
	// The lease is gone: due again at +1h, for anyone, not as a rescue.
	cs := f.claimReminders("s2", at(time.Hour), 10)
	if len(cs) != 1 || cs[0].Rescued || cs[0].SentCount != 1 {
		t.Fatalf("claim after the fire = %+v", cs)
	}

	// Not sent (moved by the collision gap, or skipped): next_at only.
	c = cs[0]
	res = f.fireReminders("s2", at(time.Hour), store.ReminderFire{ID: c.ID, Version: c.Version, NextAt: at(2 * time.Hour)})[0]
	if !res.Applied || len(res.Result.Notifications) != 0 {
		t.Fatalf("unsent fire = %+v", res)
	}
	r = f.getReminder("cart")
	if r.SentCount != 1 || r.LastNotificationID != nid || !r.LastSentAt.Equal(now) || !r.NextAt.Equal(at(2*time.Hour)) ||
		r.State != heraldtype.ReminderActive {
		t.Fatalf("after an unsent fire: %+v", r)
	}

	// The last occurrence stops it (max_sends), after enqueueing it.
	c = f.claimReminders("s1", at(2*time.Hour), 10)[0]
	last := f.occurrence(c, time.Time{})
	last.StopReason = heraldtype.StopMaxSends
	// In the same batch, a stale fire of the same reminder (the version
	// of the claim before) is not applied, and results keep fire order.
	stale := store.ReminderFire{ID: c.ID, Version: c.Version - 1, NextAt: at(3 * time.Hour)}
	rs := f.fireReminders("s1", at(2*time.Hour), stale, last)
	if rs[0].Applied || !rs[1].Applied {
		t.Fatalf("fires = %+v, want the stale one not applied and the last one applied", rs)
	}
	r = f.getReminder("cart")
	if r.State != heraldtype.ReminderStopped || r.StopReason != heraldtype.StopMaxSends || !r.StoppedAt.Equal(at(2*time.Hour)) ||
		!r.NextAt.IsZero() || r.SentCount != 2 || r.LastNotificationID != last.Enqueue.Notifications[0].ID {
		t.Fatalf("after the last fire: %+v", r)
	}
	f.delivery(last.Enqueue.Notifications[0].ID)
	if got := f.claimReminders("s1", at(10*time.Hour), 10); len(got) != 0 {
		t.Fatalf("a stopped reminder was claimed: %q", claimedKeys(got))
	}
}

// testReminderFireMovedOn: a fire whose reminder changed after the claim
// writes nothing and enqueues nothing — in particular, a cancel (delete
// or stop) committed between the claim and the fire means no further
// occurrence is sent (issue 19 item 3: cancellation is synchronous).
func testReminderFireMovedOn(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	for i, c := range []struct {
		name  string
		owner string
		move  func(key string, c store.ReminderClaim)
	}{
		{"cancel between claim and fire: deleted", "s1", func(key string, _ store.ReminderClaim) {
			if err := f.s.DeleteReminder(f.ctx, key); err != nil {
				t.Fatal(err)
			}
		}},
		{"cancel between claim and fire: stopped by user", "s1", func(string, store.ReminderClaim) {
			f.stopReminders(store.ReminderSelector{UserID: "u1"}, heraldtype.StopCancelled, at(time.Second))
		}},
		{"cancel between claim and fire: stopped by event", "s1", func(key string, _ store.ReminderClaim) {
			f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout_completed", Data: map[string]string{"cart": key}},
				heraldtype.StopEvent, at(time.Second))
		}},
		{"updated", "s1", func(key string, _ store.ReminderClaim) {
			f.putReminder(reminder(key, "u1", at(time.Hour)), at(time.Second))
		}},
		{"another owner", "s2", func(string, store.ReminderClaim) {}},
		{"released and claimed by another", "s1", func(_ string, c store.ReminderClaim) {
			if err := f.s.ReleaseReminders(f.ctx, "s1", []string{c.ID}); err != nil {
				t.Fatal(err)
			}
			f.claimReminders("s2", base(), 10)
		}},
		{"lease expired and rescued", "s1", func(string, store.ReminderClaim) {
			f.claimReminders("s2", at(time.Minute), 10)
		}},
	} {
		key := fmt.Sprintf("k%d", i)
		f.putReminder(reminder(key, "u1", base()), base())
		cs := f.claimReminders("s1", base(), 10)
		if len(cs) != 1 || cs[0].Key != key {
			t.Fatalf("%s: claimed %q", c.name, claimedKeys(cs))
		}
		before, _ := f.s.GetReminder(f.ctx, key)
		c.move(key, cs[0])
		moved, _ := f.s.GetReminder(f.ctx, key)
		fire := f.occurrence(cs[0], at(time.Hour))
		if res := f.fireReminders(c.owner, at(2*time.Second), fire)[0]; res.Applied || len(res.Result.Notifications) != 0 {
			t.Fatalf("%s: fire = %+v, want not applied", c.name, res)
		}
		f.noNotification(fire.Enqueue.Notifications[0].ID)
		after, err := f.s.GetReminder(f.ctx, key)
		if moved.Key != "" {
			sameReminder(t, c.name+": the fire changed the reminder", after, moved)
		} else if heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatalf("%s: deleted reminder is back: %+v, %v", c.name, after, err)
		}
		if before.SentCount != 0 || after.SentCount != 0 {
			t.Fatalf("%s: sent_count %d", c.name, after.SentCount)
		}
		// Out of the way of the next case.
		_ = f.s.DeleteReminder(f.ctx, key)
	}
}

// testReminderFireAllOrNothing: one bad fire (an unknown user in its
// enqueue) rolls the whole batch back: nothing enqueued, no reminder
// advanced, the leases still held (S2.4: a failed enqueue does not
// advance sent_count).
func testReminderFireAllOrNothing(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	f.putReminder(reminder("a", "u1", base()), base())
	f.putReminder(reminder("b", "u1", base()), base())
	cs := f.claimReminders("s1", base(), 10)
	if len(cs) != 2 {
		t.Fatalf("claimed %d, want 2", len(cs))
	}
	before := []heraldtype.Reminder{f.getReminder("a"), f.getReminder("b")}
	good := f.occurrence(cs[0], at(time.Hour))
	bad := f.occurrence(cs[1], at(time.Hour))
	bad.Enqueue.Notifications[0].UserID = "nobody"
	_, err := f.s.FireReminders(f.ctx, "s1", []store.ReminderFire{good, bad}, at(time.Second))
	wantCode(t, err, heraldtype.ENOTFOUND)
	f.noNotification(good.Enqueue.Notifications[0].ID)
	f.noNotification(bad.Enqueue.Notifications[0].ID)
	sameReminder(t, "a after the failed batch", f.getReminder("a"), before[0])
	sameReminder(t, "b after the failed batch", f.getReminder("b"), before[1])
	// The leases are still s1's: nobody else claims them, and s1's fire
	// of the good one alone applies.
	if got := f.claimReminders("s2", at(time.Second), 10); len(got) != 0 {
		t.Fatalf("claim after the failed batch = %q, want none", claimedKeys(got))
	}
	if res := f.fireReminders("s1", at(2*time.Second), good)[0]; !res.Applied {
		t.Fatalf("fire of the good one alone = %+v", res)
	}
	f.delivery(good.Enqueue.Notifications[0].ID)
}
