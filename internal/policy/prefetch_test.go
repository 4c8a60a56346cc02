package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// batchLimiter is a BatchLimiter in memory: per user and day, the set of
// owners counted. It records its calls.
type batchLimiter struct {
	mu              sync.Mutex // AcquireDedupe runs concurrently
	locks           map[string]string
	days            map[string]map[string]bool
	single, batches int
	items           []heraldtype.DailyCount
	err             error
}

func (l *batchLimiter) AcquireDedupe(_ context.Context, key, owner string, _ time.Duration, _ time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.locks == nil {
		l.locks = map[string]string{}
	}
	if held, ok := l.locks[key]; ok {
		return held == owner, nil
	}
	l.locks[key] = owner
	return true, nil
}

func (l *batchLimiter) CountDaily(_ context.Context, userID, day, owner string, limit int, _ time.Time) (bool, error) {
	l.single++
	return l.count(heraldtype.DailyCount{UserID: userID, Day: day, Owner: owner, Limit: limit}), nil
}

func (l *batchLimiter) CountDailyBatch(_ context.Context, items []heraldtype.DailyCount) ([]bool, error) {
	l.batches++
	l.items = append(l.items, items...)
	if l.err != nil {
		return nil, l.err
	}
	if err := heraldtype.CheckDailyCounts(items); err != nil {
		return nil, err
	}
	ok := make([]bool, len(items))
	for i, c := range items {
		ok[i] = l.count(c)
	}
	return ok, nil
}

func (l *batchLimiter) count(c heraldtype.DailyCount) bool {
	if l.days == nil {
		l.days = map[string]map[string]bool{}
	}
	k := c.UserID + "/" + c.Day
	owners := l.days[k]
	if owners == nil {
		owners = map[string]bool{}
		l.days[k] = owners
	}
	if owners[c.Owner] {
		return true
	}
	if len(owners) >= c.Limit {
		return false
	}
	owners[c.Owner] = true
	return true
}

var _ BatchLimiter = (*batchLimiter)(nil)

// Issue 39 item 3: with a BatchLimiter, Prefetch counts a batch's daily
// caps in one call, in the batch's order, and only for the deliveries the
// earlier steps let through (a dedupe key's lock taken first: a duplicate
// spends no slot); Check then answers those from the batch.
func TestPrefetchCountsTheBatch(t *testing.T) {
	t.Parallel()
	t.Run("locks_one_by_one", func(t *testing.T) { testPrefetchCountsTheBatch(t, &batchLimiter{}, nil) })
	l := &batchLimiter{}
	d := &dedupeBatcher{batchLimiter: l}
	t.Run("locks_at_once", func(t *testing.T) { testPrefetchCountsTheBatch(t, l, d) })
	// The batch's two keyed deliveries took their locks in one call.
	if d.calls != 1 || d.items != 2 {
		t.Fatalf("%d lock batches of %d items; want one of 2", d.calls, d.items)
	}
}

// dedupeBatcher is a batchLimiter with AcquireDedupeBatch (a
// DedupeBatchLimiter), recording its calls.
type dedupeBatcher struct {
	*batchLimiter
	calls, items int
	err          error
}

func (d *dedupeBatcher) AcquireDedupeBatch(ctx context.Context, items []heraldtype.DedupeLock, now time.Time) ([]bool, error) {
	d.calls++
	d.items += len(items)
	if d.err != nil {
		return nil, d.err
	}
	ok := make([]bool, len(items))
	for i, l := range items {
		ok[i], _ = d.AcquireDedupe(ctx, l.Key, l.Owner, l.Window, now)
	}
	return ok, nil
}

// testPrefetchCountsTheBatch runs TestPrefetchCountsTheBatch with l as
// the limiter, or with lim when it is not nil (l's counts under it).
func testPrefetchCountsTheBatch(t *testing.T, l *batchLimiter, lim Limiter) {
	if lim == nil {
		lim = l
	}
	quiet := &heraldtype.QuietHours{Start: "22:00", End: "08:00"} // Seoul; night() is 03:00 there
	src := &countingSource{prefs: map[string]heraldtype.Preferences{
		"u1":    {UserID: "u1", Timezone: "UTC", DailyCap: 2},
		"u2":    {UserID: "u2", Timezone: "UTC"},
		"off":   {UserID: "off", Timezone: "UTC", OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelPush}},
		"quiet": {UserID: "quiet", Timezone: "Asia/Seoul", QuietHours: quiet},
	}}
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{
		"promo": {CountsTowardCap: &capped, QuietHours: true}, "receipt": {},
	}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Types: cat, Source: src, Limiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	mk := func(user, notif, typ, key string, ch heraldtype.Channel) heraldtype.Job {
		id++
		return heraldtype.Job{Delivery: heraldtype.Delivery{ID: id, Channel: ch},
			Notification: &heraldtype.Notification{ID: notif, UserID: user, Type: typ, DedupeKey: key}}
	}
	push := heraldtype.ChannelPush
	jobs := []heraldtype.Job{
		mk("u1", "a", "promo", "", push),
		mk("u1", "a", "promo", "", push), // the same notification's second device: the same answer
		mk("u1", "b", "promo", "", push),
		mk("u1", "c", "promo", "", push), // the third of a cap of 2: blocked by the two before it
		mk("u2", "d", "promo", "", push),
		mk("u2", "e", "promo", "k", push),                   // a dedupe key: counted after its lock
		mk("u2", "e2", "promo", "k", push),                  // its duplicate: blocked, never counted
		mk("u2", "f", "receipt", "", push),                  // not capped
		mk("off", "g", "promo", "", push),                   // opted out: never counted
		mk("quiet", "h", "promo", "", push),                 // deferred: never counted
		mk("u2", "i", "promo", "", heraldtype.ChannelInApp), // the inbox spends no slot
		mk("nobody", "j", "promo", "", push),                // a user the read did not find
	}
	pre, err := e.Prefetch(t.Context(), jobs, night())
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, c := range l.items {
		owners = append(owners, c.Owner)
	}
	if l.batches != 1 || fmt.Sprint(owners) != "[a a b c d e]" || l.single != 0 {
		t.Fatalf("%d batch calls counting %v and %d single counts; want one batch of [a a b c d e]", l.batches, owners, l.single)
	}
	if c := l.items[0]; c.Day != "2026-06-01" || c.Limit != 2 || !c.ExpireAt.Equal(time.Date(2026, 6, 2, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("count %+v; want u1's cap of 2 on its UTC day, kept an hour past midnight", c)
	}
	later := night().Add(time.Minute)
	for i, want := range []struct {
		verdict Verdict
		code    string
	}{{Allow, ""}, {Allow, ""}, {Allow, ""}, {Block, CodeDailyCap}, {Allow, ""}, {Allow, ""}, {Block, CodeDuplicate},
		{Allow, ""}, {Block, CodeChannelOptedOut}, {Defer, CodeQuietHours}, {Allow, ""}} {
		d, err := e.Check(t.Context(), &jobs[i], later, pre)
		if err != nil || d.Verdict != want.verdict || d.Code != want.code {
			t.Fatalf("job %d (%s): Check = %+v, %v; want %d %q", i, jobs[i].Notification.ID, d, err, want.verdict, want.code)
		}
	}
	if l.single != 0 || l.batches != 1 {
		t.Fatalf("Check counted %d times on its own, %d batches in all; want none and one", l.single, l.batches)
	}
	if _, err := e.Check(t.Context(), &jobs[11], later, pre); err == nil {
		t.Fatal("Check of a user that does not exist succeeded")
	}
}

// A failed batch count keeps the preferences and leaves each Check to
// count on its own; the policy still decides, and still fails closed if
// the limiter is down.
func TestPrefetchCountFails(t *testing.T) {
	t.Parallel()
	src := &countingSource{prefs: map[string]heraldtype.Preferences{"u1": {UserID: "u1", Timezone: "UTC", DailyCap: 1}}}
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{"promo": {CountsTowardCap: &capped}}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	l := &batchLimiter{err: errors.New("connection reset")}
	e, err := New(Config{Types: cat, Source: src, Limiter: l})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []heraldtype.Job{
		{Delivery: heraldtype.Delivery{ID: 1}, Notification: &heraldtype.Notification{ID: "a", UserID: "u1", Type: "promo"}},
		{Delivery: heraldtype.Delivery{ID: 2}, Notification: &heraldtype.Notification{ID: "b", UserID: "u1", Type: "promo"}},
	}
	pre, err := e.Prefetch(t.Context(), jobs, night())
	if err == nil || pre == nil || len(pre.Preferences) != 1 {
		t.Fatalf("Prefetch = %+v, %v; want the preferences and the count's error", pre, err)
	}
	for i, want := range []Verdict{Allow, Block} {
		if d, err := e.Check(t.Context(), &jobs[i], night(), pre); err != nil || d.Verdict != want {
			t.Fatalf("job %d: Check = %+v, %v; want verdict %d", i, d, err, want)
		}
	}
	if l.single != 2 || src.single != 0 {
		t.Fatalf("%d single counts, %d single preference reads; want 2 and 0", l.single, src.single)
	}
}

// A failed batch of dedupe locks counts none of the keyed deliveries and
// leaves each to Check, which takes its lock and counts it on its own;
// the others are counted by the batch as before.
func TestPrefetchDedupeBatchFails(t *testing.T) {
	t.Parallel()
	src := &countingSource{prefs: map[string]heraldtype.Preferences{"u1": {UserID: "u1", Timezone: "UTC", DailyCap: 5}}}
	cat, err := NewCatalog(map[string]heraldtype.NotificationType{"promo": {CountsTowardCap: &capped}}, fakeTypes{})
	if err != nil {
		t.Fatal(err)
	}
	l := &batchLimiter{}
	d := &dedupeBatcher{batchLimiter: l, err: errors.New("connection reset")}
	e, err := New(Config{Types: cat, Source: src, Limiter: d})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []heraldtype.Job{
		{Delivery: heraldtype.Delivery{ID: 1}, Notification: &heraldtype.Notification{ID: "a", UserID: "u1", Type: "promo", DedupeKey: "k"}},
		{Delivery: heraldtype.Delivery{ID: 2}, Notification: &heraldtype.Notification{ID: "b", UserID: "u1", Type: "promo", DedupeKey: "k"}},
		{Delivery: heraldtype.Delivery{ID: 3}, Notification: &heraldtype.Notification{ID: "c", UserID: "u1", Type: "promo"}},
	}
	pre, err := e.Prefetch(t.Context(), jobs, night())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.items) != 1 || l.items[0].Owner != "c" {
		t.Fatalf("the batch counted %+v; want only the unkeyed c", l.items)
	}
	for i, want := range []struct {
		verdict Verdict
		code    string
	}{{Allow, ""}, {Block, CodeDuplicate}, {Allow, ""}} {
		if got, err := e.Check(t.Context(), &jobs[i], night(), pre); err != nil || got.Verdict != want.verdict || got.Code != want.code {
			t.Fatalf("job %d: Check = %+v, %v; want %d %q", i, got, err, want.verdict, want.code)
		}
	}
	if l.single != 1 {
		t.Fatalf("%d single counts; want 1 (a, after its own lock)", l.single)
	}
}
