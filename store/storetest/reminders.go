package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The reminder rows (issue 19; S2.1-S2.6): what store.Reminders keeps,
// replaces, lists and stops. The scheduler's side (claim, fire, release)
// is in reminders_fire.go.

// reminder returns a reminder of userID under key due at next, with
// content, a schedule and stop conditions like the README's cart
// reminder.
func reminder(key, userID string, next time.Time) heraldtype.Reminder {
	expires := at(30 * 24 * time.Hour)
	return heraldtype.Reminder{
		Key: key, ID: "rem-" + key, UserID: userID,
		Type: "cart_reminder", Title: "Still thinking?", Body: "Your cart is waiting",
		Data:     map[string]string{"cart": key},
		Channels: []heraldtype.Channel{heraldtype.ChannelPush},
		Priority: heraldtype.PriorityNormal,
		Schedule: heraldtype.Schedule{
			Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(48 * time.Hour)},
		},
		Stop: heraldtype.ReminderStop{MaxSends: 5, ExpiresAt: expires, OnEvent: "checkout_completed",
			Match: map[string]string{"cart": key}},
		QuietHours: "defer",
		NextAt:     next,
	}
}

func (f *fixture) putReminder(r heraldtype.Reminder, now time.Time) (heraldtype.Reminder, bool) {
	f.t.Helper()
	out, created, err := f.s.PutReminder(f.ctx, r, now)
	if err != nil {
		f.t.Fatalf("PutReminder(%s): %v", r.Key, err)
	}
	return out, created
}

func (f *fixture) getReminder(key string) heraldtype.Reminder {
	f.t.Helper()
	r, err := f.s.GetReminder(f.ctx, key)
	if err != nil {
		f.t.Fatalf("GetReminder(%s): %v", key, err)
	}
	return r
}

func (f *fixture) stopReminders(sel store.ReminderSelector, reason string, now time.Time) int {
	f.t.Helper()
	n, err := f.s.StopReminders(f.ctx, sel, reason, now)
	if err != nil {
		f.t.Fatalf("StopReminders(%+v): %v", sel, err)
	}
	return n
}

// sameReminder compares reminders by their JSON (which every time is
// written in UTC) and their Version, which the JSON leaves out.
func sameReminder(t *testing.T, what string, got, want heraldtype.Reminder) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
	if got.Version != want.Version {
		t.Fatalf("%s: version %d, want %d", what, got.Version, want.Version)
	}
}

func testReminders(t *testing.T, h Harness) {
	t.Run("CreateUpdate", func(t *testing.T) { testReminderCreateUpdate(t, h.New) })
	t.Run("UnknownUser", func(t *testing.T) { testReminderUnknownUser(t, h.New) })
	t.Run("GetDelete", func(t *testing.T) { testReminderGetDelete(t, h.New) })
	t.Run("List", func(t *testing.T) { testReminderList(t, h.New) })
	t.Run("Tx", func(t *testing.T) { testReminderTx(t, h) })
	t.Run("Stop", func(t *testing.T) { testReminderStop(t, h.New) })
	t.Run("Prune", func(t *testing.T) { testReminderPrune(t, h.New) })
	t.Run("Claim", func(t *testing.T) { testReminderClaim(t, h.New) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testReminderConcurrentClaims(t, h.New) })
	t.Run("Release", func(t *testing.T) { testReminderRelease(t, h.New) })
	t.Run("NextReminderAt", func(t *testing.T) { testNextReminderAt(t, h.New) })
	t.Run("Fire", func(t *testing.T) { testReminderFire(t, h.New) })
	t.Run("FireMovedOn", func(t *testing.T) { testReminderFireMovedOn(t, h.New) })
	t.Run("FireAllOrNothing", func(t *testing.T) { testReminderFireAllOrNothing(t, h.New) })
	t.Run("FireBatchMixed", func(t *testing.T) { testReminderFireBatchMixed(t, h.New) })
	t.Run("FireBatchReplay", func(t *testing.T) { testReminderFireBatchReplay(t, h.New) })
	t.Run("FireBatchRollback", func(t *testing.T) { testReminderFireBatchRollback(t, h.New) })
	t.Run("Arguments", func(t *testing.T) { testReminderArguments(t, h.New) })
}

// testReminderCreateUpdate: a put creates, a put on the same key updates
// (S2.3): id, created_at, sent_count and the last send are kept; the
// content, schedule, stop conditions and next_at are replaced; a stopped
// reminder is active again.
func testReminderCreateUpdate(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	in := reminder("cart-42", "u1", at(time.Hour))
	in.Schedule.TimeZone = "Europe/London"
	in.DataOnly = true
	got, created := f.putReminder(in, base())
	if !created {
		t.Fatal("first PutReminder: created = false")
	}
	want := in
	want.State, want.CreatedAt, want.UpdatedAt, want.Version = heraldtype.ReminderActive, base(), base(), got.Version
	want.ScheduleStart = base()
	sameReminder(t, "created", got, want)
	sameReminder(t, "GetReminder", f.getReminder("cart-42"), got)

	// One occurrence sent, then stopped: the update keeps the first and
	// undoes the second.
	c := f.claimReminders("s1", at(time.Hour), 10)
	if len(c) != 1 {
		t.Fatalf("claimed %d reminders, want 1", len(c))
	}
	fire := f.occurrence(c[0], at(3*time.Hour))
	f.fireReminders("s1", at(time.Hour), fire)
	if n := f.stopReminders(store.ReminderSelector{UserID: "u1"}, heraldtype.StopCancelled, at(2*time.Hour)); n != 1 {
		t.Fatalf("StopReminders stopped %d, want 1", n)
	}
	before := f.getReminder("cart-42")

	up := reminder("cart-42", "u2", at(5*time.Hour))
	up.ID = "another-id" // ignored: the key's reminder keeps its id
	up.Type, up.Title, up.Body, up.Data, up.Channels = "digest", "New", "Body", map[string]string{"k": "v"}, nil
	up.Schedule = heraldtype.Schedule{RRule: "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"}
	up.Stop = heraldtype.ReminderStop{MaxSends: 2}
	up.QuietHours = "skip"
	got, created = f.putReminder(up, at(4*time.Hour))
	if created {
		t.Fatal("second PutReminder: created = true")
	}
	want = up
	want.ID, want.CreatedAt, want.UpdatedAt, want.ScheduleStart = in.ID, base(), at(4*time.Hour), at(4*time.Hour)
	want.State = heraldtype.ReminderActive
	want.SentCount, want.LastNotificationID, want.LastSentAt = 1, fire.Enqueue.Notifications[0].ID, at(time.Hour)
	want.Version = got.Version
	sameReminder(t, "updated", got, want)
	if got.Version <= before.Version {
		t.Fatalf("update left version %d, was %d", got.Version, before.Version)
	}
	sameReminder(t, "GetReminder after update", f.getReminder("cart-42"), got)
}

func testReminderUnknownUser(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	_, _, err := f.s.PutReminder(f.ctx, reminder("k", "nobody", base()), base())
	wantCode(t, err, heraldtype.ENOTFOUND)
	var he *heraldtype.Error
	if !errors.As(err, &he) || he.Field != "user_id" {
		t.Fatalf("PutReminder(unknown user) = %v, want ENOTFOUND naming user_id", err)
	}
	_, err = f.s.GetReminder(f.ctx, "k")
	wantCode(t, err, heraldtype.ENOTFOUND)
}

func testReminderGetDelete(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	_, err := f.s.GetReminder(f.ctx, "none")
	wantCode(t, err, heraldtype.ENOTFOUND)
	wantCode(t, f.s.DeleteReminder(f.ctx, "none"), heraldtype.ENOTFOUND)
	f.putReminder(reminder("a", "u1", base()), base())
	f.putReminder(reminder("b", "u1", base()), base())
	if err := f.s.DeleteReminder(f.ctx, "a"); err != nil {
		t.Fatalf("DeleteReminder: %v", err)
	}
	_, err = f.s.GetReminder(f.ctx, "a")
	wantCode(t, err, heraldtype.ENOTFOUND)
	wantCode(t, f.s.DeleteReminder(f.ctx, "a"), heraldtype.ENOTFOUND)
	f.getReminder("b")
	// The key can be used again, for a new reminder.
	if _, created := f.putReminder(reminder("a", "u1", base()), at(time.Minute)); !created {
		t.Fatal("PutReminder after delete: created = false")
	}
}

// keys lists the reminders f selects, page by page of size limit.
func (f *fixture) reminderKeys(filter heraldtype.ReminderFilter) []string {
	f.t.Helper()
	var keys []string
	for range 100 {
		rs, next, err := f.s.ListReminders(f.ctx, filter)
		if err != nil {
			f.t.Fatalf("ListReminders(%+v): %v", filter, err)
		}
		if filter.Limit > 0 && len(rs) > filter.Limit {
			f.t.Fatalf("ListReminders returned %d, limit %d", len(rs), filter.Limit)
		}
		for _, r := range rs {
			keys = append(keys, r.Key)
		}
		if next == "" {
			return keys
		}
		filter.Cursor = next
	}
	f.t.Fatal("ListReminders: more than 100 pages")
	return nil
}

func testReminderList(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.user("u3")
	// Keys whose byte order differs from a locale's: every store pages
	// in the same order.
	for i, k := range []string{"b", "a", "B", "c-1", "c_2", "d"} {
		u := "u1"
		if i%2 == 1 {
			u = "u2"
		}
		r := reminder(k, u, at(time.Duration(i)*time.Minute))
		if k == "d" {
			r.Type = "digest"
		}
		f.putReminder(r, base())
	}
	f.stopReminders(store.ReminderSelector{Type: "digest"}, heraldtype.StopCancelled, base())
	all := []string{"B", "a", "b", "c-1", "c_2", "d"}
	for _, c := range []struct {
		name   string
		filter heraldtype.ReminderFilter
		want   []string
	}{
		{"all", heraldtype.ReminderFilter{}, all},
		{"pages of 2", heraldtype.ReminderFilter{Limit: 2}, all},
		{"pages of 1", heraldtype.ReminderFilter{Limit: 1}, all},
		{"user", heraldtype.ReminderFilter{UserID: "u1"}, []string{"B", "b", "c_2"}},
		{"user, pages of 2", heraldtype.ReminderFilter{UserID: "u2", Limit: 2}, []string{"a", "c-1", "d"}},
		{"user without reminders", heraldtype.ReminderFilter{UserID: "u3"}, nil},
		{"type", heraldtype.ReminderFilter{Type: "digest"}, []string{"d"}},
		{"active", heraldtype.ReminderFilter{State: heraldtype.ReminderActive}, []string{"B", "a", "b", "c-1", "c_2"}},
		{"stopped", heraldtype.ReminderFilter{State: heraldtype.ReminderStopped}, []string{"d"}},
		// Due before 3m: next_at 0m (b), 1m (a), 2m (B); d (5m) is stopped.
		{"due before", heraldtype.ReminderFilter{DueBefore: at(3 * time.Minute)}, []string{"B", "a", "b"}},
		{"due before, stopped excluded", heraldtype.ReminderFilter{DueBefore: at(time.Hour), Limit: 2},
			[]string{"B", "a", "b", "c-1", "c_2"}},
	} {
		if got := f.reminderKeys(c.filter); !slices.Equal(got, c.want) {
			t.Errorf("%s: ListReminders = %q, want %q", c.name, got, c.want)
		}
	}
	rs, next, err := f.s.ListReminders(f.ctx, heraldtype.ReminderFilter{UserID: "u3"})
	if err != nil || len(rs) != 0 || next != "" {
		t.Fatalf("ListReminders(user without reminders) = %v, %q, %v", rs, next, err)
	}
	_, _, err = f.s.ListReminders(f.ctx, heraldtype.ReminderFilter{UserID: "nobody"})
	wantCode(t, err, heraldtype.ENOTFOUND)
	// A page holds the whole reminder.
	rs, _, err = f.s.ListReminders(f.ctx, heraldtype.ReminderFilter{Type: "digest"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("ListReminders(type digest) = %v, %v", rs, err)
	}
	sameReminder(t, "listed", rs[0], f.getReminder("d"))
}

// testReminderTx: PutReminderTx and DeleteReminderTx belong to the
// caller's transaction: seen once it commits, gone if it rolls back, and
// a failed call leaves the transaction usable.
func testReminderTx(t *testing.T, h Harness) {
	begin := func(f *fixture) (tx any, commit, rollback func() error) {
		tx, c, r := h.BeginTx(f.t, f.s)
		ended := false
		f.t.Cleanup(func() {
			if !ended {
				r()
			}
		})
		return tx, func() error { ended = true; return c() }, func() error { ended = true; return r() }
	}
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, h.New)
		f.user("u1")
		return f
	}
	t.Run("Commit", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		tx, commit, _ := begin(f)
		// A failed put (unknown user) leaves the transaction usable.
		_, _, err := f.s.PutReminderTx(f.ctx, tx, reminder("x", "nobody", base()), base())
		wantCode(t, err, heraldtype.ENOTFOUND)
		got, created, err := f.s.PutReminderTx(f.ctx, tx, reminder("a", "u1", at(time.Hour)), base())
		if err != nil || !created {
			t.Fatalf("PutReminderTx = %v, %v", created, err)
		}
		_, err = f.s.GetReminder(f.ctx, "a")
		wantCode(t, err, heraldtype.ENOTFOUND)
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		sameReminder(t, "committed", f.getReminder("a"), got)
		_, err = f.s.GetReminder(f.ctx, "x")
		wantCode(t, err, heraldtype.ENOTFOUND)

		tx, commit, _ = begin(f)
		if err := f.s.DeleteReminderTx(f.ctx, tx, "a"); err != nil {
			t.Fatalf("DeleteReminderTx: %v", err)
		}
		wantCode(t, f.s.DeleteReminderTx(f.ctx, tx, "a"), heraldtype.ENOTFOUND)
		if err := commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		_, err = f.s.GetReminder(f.ctx, "a")
		wantCode(t, err, heraldtype.ENOTFOUND)
	})
	t.Run("Rollback", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.putReminder(reminder("kept", "u1", at(time.Hour)), base())
		tx, _, rollback := begin(f)
		if _, _, err := f.s.PutReminderTx(f.ctx, tx, reminder("a", "u1", at(time.Hour)), base()); err != nil {
			t.Fatalf("PutReminderTx: %v", err)
		}
		if err := f.s.DeleteReminderTx(f.ctx, tx, "kept"); err != nil {
			t.Fatalf("DeleteReminderTx: %v", err)
		}
		if err := rollback(); err != nil {
			t.Fatalf("rollback: %v", err)
		}
		_, err := f.s.GetReminder(f.ctx, "a")
		wantCode(t, err, heraldtype.ENOTFOUND)
		f.getReminder("kept")
	})
	t.Run("NotATx", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		_, _, err := f.s.PutReminderTx(f.ctx, "not a tx", reminder("a", "u1", base()), base())
		wantCode(t, err, heraldtype.EINVALID)
		wantCode(t, f.s.DeleteReminderTx(f.ctx, 42, "a"), heraldtype.EINVALID)
	})
}

// testReminderStop: bulk cancel by user and by type, and the event stop
// with and without a match on the event's data (issue 19 item 3).
func testReminderStop(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	for _, u := range []string{"u1", "u2", "u3"} {
		f.user(u)
	}
	put := func(key, user, typ, event string, match map[string]string) {
		r := reminder(key, user, at(time.Hour))
		r.Type, r.Stop.OnEvent, r.Stop.Match = typ, event, match
		f.putReminder(r, base())
	}
	put("u1-cart-1", "u1", "cart", "checkout", map[string]string{"cart": "1"})
	put("u1-cart-2", "u1", "cart", "checkout", map[string]string{"cart": "2"})
	put("u1-any", "u1", "cart", "checkout", nil)
	put("u1-other-event", "u1", "cart", "login", nil)
	put("u2-cart-1", "u2", "cart", "checkout", map[string]string{"cart": "1"})
	put("u2-digest", "u2", "digest", "", nil)
	put("u3-digest", "u3", "digest", "", nil)
	put("u3-cart", "u3", "cart", "checkout", nil)

	stopped := func(key, reason string, at time.Time) {
		t.Helper()
		r := f.getReminder(key)
		if r.State != heraldtype.ReminderStopped || r.StopReason != reason || !r.StoppedAt.Equal(at) || !r.NextAt.IsZero() {
			t.Fatalf("%s = %s %q at %v next %v, want stopped %q at %v", key, r.State, r.StopReason, r.StoppedAt, r.NextAt, reason, at)
		}
	}
	active := func(keys ...string) {
		t.Helper()
		for _, k := range keys {
			if r := f.getReminder(k); r.State != heraldtype.ReminderActive || r.StopReason != "" || r.NextAt.IsZero() {
				t.Fatalf("%s = %+v, want active", k, r)
			}
		}
	}
	// An event of u1 with cart 1: the reminders matching it and those
	// without a match; not cart 2's, not another event's, not u2's.
	t1 := at(time.Minute)
	n := f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout", Data: map[string]string{"cart": "1", "x": "y"}},
		heraldtype.StopEvent, t1)
	if n != 2 {
		t.Fatalf("event stop stopped %d, want 2", n)
	}
	stopped("u1-cart-1", heraldtype.StopEvent, t1)
	stopped("u1-any", heraldtype.StopEvent, t1)
	active("u1-cart-2", "u1-other-event", "u2-cart-1", "u3-cart")
	// Again: nothing left to stop (stopped ones are not counted again).
	if n := f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout", Data: map[string]string{"cart": "1"}},
		heraldtype.StopEvent, at(2*time.Minute)); n != 0 {
		t.Fatalf("second event stop stopped %d, want 0", n)
	}
	stopped("u1-cart-1", heraldtype.StopEvent, t1)
	// An event without data stops only the reminders without a match.
	if n := f.stopReminders(store.ReminderSelector{UserID: "u1", Event: "checkout"}, heraldtype.StopEvent, t1); n != 0 {
		t.Fatalf("event stop without data stopped %d, want 0", n)
	}
	active("u1-cart-2")
	// By type, across users.
	t2 := at(3 * time.Minute)
	if n := f.stopReminders(store.ReminderSelector{Type: "digest"}, heraldtype.StopCancelled, t2); n != 2 {
		t.Fatalf("stop by type stopped %d, want 2", n)
	}
	stopped("u2-digest", heraldtype.StopCancelled, t2)
	stopped("u3-digest", heraldtype.StopCancelled, t2)
	active("u2-cart-1", "u3-cart")
	// By user.
	t3 := at(4 * time.Minute)
	if n := f.stopReminders(store.ReminderSelector{UserID: "u1"}, heraldtype.StopCancelled, t3); n != 2 {
		t.Fatalf("stop by user stopped %d, want 2", n)
	}
	stopped("u1-cart-2", heraldtype.StopCancelled, t3)
	stopped("u1-other-event", heraldtype.StopCancelled, t3)
	stopped("u1-cart-1", heraldtype.StopEvent, t1)
	active("u2-cart-1", "u3-cart")
	// User and type together.
	if n := f.stopReminders(store.ReminderSelector{UserID: "u3", Type: "digest"}, heraldtype.StopCancelled, t3); n != 0 {
		t.Fatalf("stop by user and type stopped %d, want 0", n)
	}
	// An event without a user reaches every user's reminders.
	if n := f.stopReminders(store.ReminderSelector{Event: "checkout", Data: map[string]string{"cart": "1"}},
		heraldtype.StopEvent, t3); n != 2 {
		t.Fatalf("event stop of every user stopped %d, want 2", n)
	}
	stopped("u2-cart-1", heraldtype.StopEvent, t3)
	stopped("u3-cart", heraldtype.StopEvent, t3)
}

func testReminderPrune(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	f.user("u2")
	f.user("u3")
	for _, u := range []string{"u1", "u2", "u3"} {
		f.putReminder(reminder(u+"-old", u, at(time.Hour)), base())
		f.putReminder(reminder(u+"-new", u, at(time.Hour)), base())
		f.putReminder(reminder(u+"-active", u, at(time.Hour)), base())
	}
	for _, u := range []string{"u1", "u2", "u3"} {
		f.stopReminders(store.ReminderSelector{UserID: u, Event: "checkout_completed", Data: map[string]string{"cart": u + "-old"}},
			heraldtype.StopEvent, at(time.Minute))
		f.stopReminders(store.ReminderSelector{UserID: u, Event: "checkout_completed", Data: map[string]string{"cart": u + "-new"}},
			heraldtype.StopEvent, at(2*time.Hour))
	}
	n, err := f.s.PruneReminders(f.ctx, at(time.Hour), 2)
	if err != nil || n != 2 {
		t.Fatalf("PruneReminders(limit 2) = %d, %v; want 2", n, err)
	}
	n, err = f.s.PruneReminders(f.ctx, at(time.Hour), 10)
	if err != nil || n != 1 {
		t.Fatalf("PruneReminders = %d, %v; want 1", n, err)
	}
	if got := f.reminderKeys(heraldtype.ReminderFilter{}); !slices.Equal(got, []string{
		"u1-active", "u1-new", "u2-active", "u2-new", "u3-active", "u3-new"}) {
		t.Fatalf("after prune: %q", got)
	}
}

// testReminderArguments: the argument checks of store.Reminders (written
// once in package store), the same on every store.
func testReminderArguments(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	put := func(mod func(r *heraldtype.Reminder)) error {
		r := reminder("k", "u1", base())
		mod(&r)
		_, _, err := f.s.PutReminder(f.ctx, r, base())
		return err
	}
	list := func(rf heraldtype.ReminderFilter) error { return third(f.s.ListReminders(f.ctx, rf)) }
	stop := func(sel store.ReminderSelector, reason string) error {
		return second(f.s.StopReminders(f.ctx, sel, reason, base()))
	}
	claim := func(p store.ReminderClaimParams) error { return second(f.s.ClaimReminders(f.ctx, p)) }
	fire := func(owner string, fs ...store.ReminderFire) error {
		return second(f.s.FireReminders(f.ctx, owner, fs, base()))
	}
	okClaim := store.ReminderClaimParams{Owner: "s1", Now: base(), LeaseUntil: at(time.Minute), Limit: 10}
	enq := params(f.notification("u1"))
	for _, c := range []struct {
		name, field, message string
		err                  error
	}{
		{"PutReminder key", "key", "key: must not be empty", put(func(r *heraldtype.Reminder) { r.Key = "" })},
		{"PutReminder id", "id", "id: must not be empty", put(func(r *heraldtype.Reminder) { r.ID = "" })},
		{"PutReminder user", "user_id", "user_id: must not be empty", put(func(r *heraldtype.Reminder) { r.UserID = "" })},
		{"PutReminder type", "type", "type: must not be empty", put(func(r *heraldtype.Reminder) { r.Type = "" })},
		{"PutReminder next_at", "next_at", "next_at: must be set", put(func(r *heraldtype.Reminder) { r.NextAt = time.Time{} })},
		{"PutReminder quiet_hours", "quiet_hours", `quiet_hours: must be "defer" or "skip", not "loud"`,
			put(func(r *heraldtype.Reminder) { r.QuietHours = "loud" })},
		{"PutReminder max_sends", "stop.max_sends", "stop.max_sends: must not be negative",
			put(func(r *heraldtype.Reminder) { r.Stop.MaxSends = -1 })},
		{"PutReminder match", "stop.match", "stop.match: needs stop.on_event",
			put(func(r *heraldtype.Reminder) { r.Stop.OnEvent = "" })},
		{"ListReminders limit", "limit", "limit: must not be negative", list(heraldtype.ReminderFilter{Limit: -1})},
		{"ListReminders state", "state", `state: unknown state "paused"`, list(heraldtype.ReminderFilter{State: "paused"})},
		{"ListReminders cursor", "cursor", "cursor: is not a cursor returned by a previous page",
			list(heraldtype.ReminderFilter{Cursor: "not a cursor!"})},
		{"ListReminders order", "state", `state: unknown state "paused"`,
			list(heraldtype.ReminderFilter{State: "paused", Cursor: "!", Limit: -1})},
		{"StopReminders selector", "selector", "selector: one of user_id, type and event is required",
			stop(store.ReminderSelector{}, heraldtype.StopCancelled)},
		{"StopReminders data", "data", "data: is only matched with an event",
			stop(store.ReminderSelector{UserID: "u1", Data: map[string]string{"a": "b"}}, heraldtype.StopCancelled)},
		{"StopReminders reason", "reason", "reason: must not be empty", stop(store.ReminderSelector{UserID: "u1"}, "")},
		{"ClaimReminders owner", "owner", "owner: must not be empty",
			claim(store.ReminderClaimParams{Now: base(), LeaseUntil: at(time.Minute), Limit: 1})},
		{"ClaimReminders lease", "lease_until", "lease_until: must be after now",
			claim(store.ReminderClaimParams{Owner: "s1", Now: base(), LeaseUntil: base(), Limit: 1})},
		{"ClaimReminders limit", "limit", "limit: must be at least 1",
			claim(store.ReminderClaimParams{Owner: "s1", Now: base(), LeaseUntil: at(time.Minute)})},
		{"FireReminders owner", "owner", "owner: must not be empty", fire("", store.ReminderFire{ID: "r", NextAt: base()})},
		{"FireReminders id", "fires[0].id", "fires[0].id: must not be empty", fire("s1", store.ReminderFire{NextAt: base()})},
		{"FireReminders sends", "fires[1].sends", "fires[1].sends: needs an enqueue",
			fire("s1", store.ReminderFire{ID: "r", NextAt: base()}, store.ReminderFire{ID: "r2", Sends: 1, NextAt: base()})},
		{"FireReminders next_at", "fires[0].next_at", "fires[0].next_at: must be set unless the fire stops the reminder",
			fire("s1", store.ReminderFire{ID: "r", Sends: 1, Enqueue: &enq})},
		{"ReleaseReminders owner", "owner", "owner: must not be empty", f.s.ReleaseReminders(f.ctx, "", []string{"r"})},
		{"PruneReminders limit", "limit", "limit: must be at least 1", second(f.s.PruneReminders(f.ctx, base(), 0))},
	} {
		var he *heraldtype.Error
		if !errors.As(c.err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field || he.Message != c.message {
			t.Errorf("%s = %v, want invalid_argument on %q: %q", c.name, c.err, c.field, c.message)
		}
	}
	// A fire whose enqueue CheckEnqueue refuses is refused whole.
	bad := params(f.notification("u1"))
	bad.MaxAttempts = 0
	wantCode(t, fire("s1", store.ReminderFire{ID: "r", Sends: 1, Enqueue: &bad, NextAt: base()}), heraldtype.EINVALID)
	// Nothing was written by any of them.
	if got := f.reminderKeys(heraldtype.ReminderFilter{}); len(got) != 0 {
		t.Fatalf("refused calls wrote reminders %q", got)
	}
	// The good claim is fine.
	if err := claim(okClaim); err != nil {
		t.Fatalf("ClaimReminders: %v", err)
	}
}

func third[A, B any](_ A, _ B, err error) error { return err }

// occurrenceID is the id of the notification of a reminder's occurrence
// in these tests.
func occurrenceID(r heraldtype.Reminder) string { return fmt.Sprintf("n-%s-%d", r.ID, r.SentCount+1) }
