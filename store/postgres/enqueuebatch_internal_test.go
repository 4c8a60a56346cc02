package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

var batchNow = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// batchStore opens a migrated store with the given EnqueueConcurrency and
// users u1…u<users>, each with one android device.
func batchStore(t *testing.T, concurrency, users int) *Store {
	t.Helper()
	dsn, schema := pgtest.NewSchema(t)
	s, err := Open(t.Context(), dsn, Options{Schema: schema, MaxConns: 8, EnqueueConcurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= users; i++ {
		u := fmt.Sprint("u", i)
		if _, err := s.UpsertUser(t.Context(), heraldtype.User{ID: u}, batchNow); err != nil {
			t.Fatal(err)
		}
		d := heraldtype.Device{ID: u + "-d", UserID: u, Platform: heraldtype.PlatformAndroid, Token: "tok-" + u, PushOptIn: true}
		if _, err := s.UpsertDevice(t.Context(), d, batchNow, 0); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// batchTrigger is a one-notification push trigger to user.
func batchTrigger(id, user, key string) store.EnqueueParams {
	n := heraldtype.Notification{ID: id, UserID: user, Type: "reservation", Title: "Booked",
		Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
		PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: batchNow}
	return store.EnqueueParams{IdempotencyKey: key, RequestHash: "hash-" + key, Notifications: []heraldtype.Notification{n},
		MaxAttempts: 3, PushProviders: storetest.Providers(), Now: batchNow}
}

// holdUser locks user's row FOR UPDATE until the returned function
// runs: an enqueue to that user waits on its users check (KEY SHARE), holding
// the only enqueue slot, so the calls after it queue up.
func holdUser(t *testing.T, s *Store, user string) (release func()) {
	t.Helper()
	tx, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), s.q(`SELECT 1 FROM {s}.users WHERE id = $1 FOR UPDATE`), user); err != nil {
		t.Fatal(err)
	}
	return func() { tx.Rollback(context.Background()) }
}

// waitQueued waits until n calls wait in the batcher's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	waitGroup(t, &s.batcher, fmt.Sprintf("%d queued", n), func(_, queued int) bool { return queued == n })
}

// waitLeading waits until a call leads (and, its user held, stays
// blocked), so the calls started next queue behind it.
func waitLeading(t *testing.T, s *Store) {
	t.Helper()
	waitGroup(t, &s.batcher, "one leading", func(running, _ int) bool { return running == 1 })
}

// waitGroup waits until g's leading and queued calls satisfy ok; want
// says what ok waits for.
func waitGroup[P, R any](t *testing.T, g *groupCommit[P, R], want string, ok func(running, queued int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		r, q := g.running, len(g.queue)
		g.mu.Unlock()
		if ok(r, q) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leading and %d queued, want %s", r, q, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// answer is what a call run by async returned.
type answer[R any] struct {
	res R
	err error
}

// async runs f(ctx, p) in a goroutine.
func async[P, R any](ctx context.Context, f func(context.Context, P) (R, error), p P) <-chan answer[R] {
	ch := make(chan answer[R], 1)
	go func() {
		res, err := f(ctx, p)
		ch <- answer[R]{res, err}
	}()
	return ch
}

type enqueueAnswer = answer[store.EnqueueResult]

// enqueueAsync runs Enqueue in a goroutine.
func enqueueAsync(ctx context.Context, s *Store, p store.EnqueueParams) <-chan enqueueAnswer {
	return async(ctx, s.Enqueue, p)
}

func deliveriesOf(t *testing.T, s *Store, notificationID string) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(t.Context(), s.q(`SELECT count(*) FROM {s}.deliveries WHERE notification_id = $1`),
		notificationID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEnqueueBatchCommitsWaitingCallsTogether: calls that wait for the
// enqueue slot are written by one transaction, each getting its own
// result; a batch that PostgreSQL rejects (an unknown user, a key already
// taken) is rolled back and every call runs again alone, so each gets the
// answer it would have got without batching.
func TestEnqueueBatchCommitsWaitingCallsTogether(t *testing.T) {
	s := batchStore(t, 1, 3)
	ctx := t.Context()

	// Round 1: three good calls queue behind a blocked one.
	release := holdUser(t, s, "u1")
	first := enqueueAsync(ctx, s, batchTrigger("n-a", "u1", ""))
	waitLeading(t, s) // the first leads at once…
	b := enqueueAsync(ctx, s, batchTrigger("n-b", "u2", ""))
	c := enqueueAsync(ctx, s, batchTrigger("n-c", "u3", "key-c"))
	d := enqueueAsync(ctx, s, batchTrigger("n-d", "u2", "key-d"))
	waitQueued(t, s, 3) // …and these wait for it
	release()
	for name, ch := range map[string]<-chan enqueueAnswer{"a": first, "b": b, "c": c, "d": d} {
		a := <-ch
		if a.err != nil {
			t.Fatalf("call %s: %v", name, a.err)
		}
		if len(a.res.Notifications) != 1 || a.res.Notifications[0].ID != "n-"+name || a.res.Notifications[0].Deliveries != 1 || a.res.Replayed {
			t.Errorf("call %s: result %+v", name, a.res)
		}
		if got := deliveriesOf(t, s, "n-"+name); got != 1 {
			t.Errorf("call %s: %d deliveries, want 1", name, got)
		}
	}
	if got, want := s.batcher.batches.Load(), int64(1); got != want {
		t.Fatalf("%d batch transactions, want %d", got, want)
	}
	if got := s.batcher.batched.Load(); got != 3 {
		t.Fatalf("%d calls batched, want 3", got)
	}

	// Round 2: one call names an unknown user and one replays key-c; the
	// batch is rolled back and each call runs alone.
	release = holdUser(t, s, "u1")
	first = enqueueAsync(ctx, s, batchTrigger("n-e", "u1", ""))
	waitLeading(t, s)
	bad := enqueueAsync(ctx, s, batchTrigger("n-f", "nobody", ""))
	good := enqueueAsync(ctx, s, batchTrigger("n-g", "u2", ""))
	replay := enqueueAsync(ctx, s, batchTrigger("n-other", "u3", "key-c"))
	waitQueued(t, s, 3)
	release()
	if a := <-first; a.err != nil {
		t.Fatal(a.err)
	}
	if a := <-bad; heraldtype.ErrorCode(a.err) != heraldtype.ENOTFOUND {
		t.Errorf("unknown user: err %v, want ENOTFOUND", a.err)
	}
	if a := <-good; a.err != nil || len(a.res.Notifications) != 1 || a.res.Notifications[0].Deliveries != 1 {
		t.Errorf("good call: %+v, %v", a.res, a.err)
	}
	if a := <-replay; a.err != nil || !a.res.Replayed || a.res.Notifications[0].ID != "n-c" {
		t.Errorf("replayed key: %+v, %v; want the original n-c", a.res, a.err)
	}
	for id, want := range map[string]int{"n-f": 0, "n-g": 1, "n-other": 0, "n-c": 1} {
		if got := deliveriesOf(t, s, id); got != want {
			t.Errorf("%s: %d deliveries, want %d", id, got, want)
		}
	}
	if got := s.batcher.batches.Load(); got != 2 {
		t.Fatalf("%d batch transactions, want 2", got)
	}

	// Round 3: in-app triggers share statements and each call gets its
	// own inbox items; a call with another attempt bound is written by
	// statements of its own in the same transaction.
	inApp := func(id, user string) store.EnqueueParams {
		p := batchTrigger(id, user, "")
		p.Notifications[0].Channels = []heraldtype.Channel{heraldtype.ChannelInApp, heraldtype.ChannelPush}
		return p
	}
	release = holdUser(t, s, "u1")
	first = enqueueAsync(ctx, s, batchTrigger("n-h", "u1", ""))
	waitLeading(t, s)
	i2 := enqueueAsync(ctx, s, inApp("n-i2", "u2"))
	i3 := enqueueAsync(ctx, s, inApp("n-i3", "u3"))
	waitQueued(t, s, 2)
	release()
	if a := <-first; a.err != nil {
		t.Fatal(a.err)
	}
	for user, ch := range map[string]<-chan enqueueAnswer{"u2": i2, "u3": i3} {
		a := <-ch
		if a.err != nil {
			t.Fatal(a.err)
		}
		if len(a.res.Inbox) != 1 || a.res.Inbox[0].UserID != user || a.res.Notifications[0].Deliveries != 2 {
			t.Errorf("%s: inbox %+v, result %+v; want its own item and 2 deliveries", user, a.res.Inbox, a.res.Notifications)
		}
	}

	release = holdUser(t, s, "u1")
	first = enqueueAsync(ctx, s, batchTrigger("n-j", "u1", ""))
	waitLeading(t, s)
	five := batchTrigger("n-k", "u2", "")
	five.MaxAttempts = 5
	k := enqueueAsync(ctx, s, five)
	l := enqueueAsync(ctx, s, batchTrigger("n-l", "u3", ""))
	waitQueued(t, s, 2)
	release()
	for _, ch := range []<-chan enqueueAnswer{first, k, l} {
		if a := <-ch; a.err != nil {
			t.Fatal(a.err)
		}
	}
	for id, want := range map[string]int{"n-k": 5, "n-l": 3} {
		var got int
		if err := s.pool.QueryRow(ctx, s.q(`SELECT max_attempts FROM {s}.deliveries WHERE notification_id = $1`), id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: max_attempts %d, want %d", id, got, want)
		}
	}
	if got := s.batcher.batches.Load(); got != 4 {
		t.Fatalf("%d batch transactions, want 4", got)
	}
}

// TestMergeCalls: calls merge only when they route and bound deliveries
// alike; the merged trigger keeps each notification's idempotency key and
// takes the latest time.
func TestMergeCalls(t *testing.T) {
	a, b := batchTrigger("n1", "u1", "k1"), batchTrigger("n2", "u2", "")
	b.Now = a.Now.Add(3 * time.Millisecond)
	m, ok := mergeCalls([]store.EnqueueParams{a, b})
	if !ok || len(m.Notifications) != 2 || !m.Now.Equal(b.Now) || m.IdempotencyKey != "" {
		t.Fatalf("merged %+v, %v", m, ok)
	}
	if m.Notifications[0].IdempotencyKey != "k1" || m.Notifications[1].IdempotencyKey != "" {
		t.Fatalf("keys %q %q", m.Notifications[0].IdempotencyKey, m.Notifications[1].IdempotencyKey)
	}
	if a.Notifications[0].IdempotencyKey != "" {
		t.Fatal("merging changed the caller's notification")
	}
	c := batchTrigger("n3", "u3", "")
	c.PushProviders = map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "other"}
	if _, ok := mergeCalls([]store.EnqueueParams{a, c}); ok {
		t.Fatal("calls with other push routing merged")
	}
}

// blockedEnqueue waits for a backend other than not that waits on a lock
// in this schema's users check (the KEY SHARE lock it takes, migration
// 0019), and returns its pid.
func blockedEnqueue(t *testing.T, s *Store, not int32) int32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pid int32
		err := s.pool.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND pid <> $2 AND strpos(query, $1) > 0 LIMIT 1`, s.prefix+"user_not_found", not).Scan(&pid)
		if err == nil {
			return pid
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("no enqueue waits on the held user")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEnqueueBatchUnknownOutcomeNotRerun: a batch whose connection dies
// mid-transaction may or may not have committed, as far as the caller can
// tell, so it is not run again alone: every call of it gets the error and
// none writes a second time (here, the transaction died, so nothing is
// written at all).
func TestEnqueueBatchUnknownOutcomeNotRerun(t *testing.T) {
	s := batchStore(t, 1, 3)
	ctx := t.Context()
	release := holdUser(t, s, "u1")
	defer release()
	first := enqueueAsync(ctx, s, batchTrigger("n-a", "u1", ""))
	waitLeading(t, s)
	b := enqueueAsync(ctx, s, batchTrigger("n-b", "u1", ""))
	c := enqueueAsync(ctx, s, batchTrigger("n-c", "u2", ""))
	waitQueued(t, s, 2)

	kill := func(pid int32) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
	}
	// The lone first call's connection dies; the batch of the other two
	// then waits on the same user, and its connection dies too.
	alone := blockedEnqueue(t, s, 0)
	kill(alone)
	if a := <-first; a.err == nil {
		t.Fatal("the first call succeeded on a terminated connection")
	}
	kill(blockedEnqueue(t, s, alone))
	for name, ch := range map[string]<-chan enqueueAnswer{"b": b, "c": c} {
		select {
		case a := <-ch:
			if a.err == nil {
				t.Errorf("call %s succeeded although its batch's connection died", name)
			}
		case <-time.After(10 * time.Second):
			// Run again alone, b waits on the held user.
			t.Fatalf("call %s did not answer: the batch was run again", name)
		}
	}
	release()
	// n-c's user was never held: run again alone, it would have been
	// written.
	for _, id := range []string{"n-a", "n-b", "n-c"} {
		if got := deliveriesOf(t, s, id); got != 0 {
			t.Errorf("%s: %d deliveries, want none", id, got)
		}
	}
	if got := s.batcher.batches.Load(); got != 1 {
		t.Fatalf("%d batch transactions, want 1", got)
	}
}

// TestEnqueueBatchCancelledWaiter: a call whose context ends while it
// waits leaves the queue with the context's error and writes nothing; the
// others are not held up.
func TestEnqueueBatchCancelledWaiter(t *testing.T) {
	s := batchStore(t, 1, 2)
	release := holdUser(t, s, "u1")
	first := enqueueAsync(t.Context(), s, batchTrigger("n-a", "u1", ""))
	waitLeading(t, s)
	cctx, cancel := context.WithCancel(t.Context())
	cancelled := enqueueAsync(cctx, s, batchTrigger("n-x", "u2", ""))
	other := enqueueAsync(t.Context(), s, batchTrigger("n-b", "u2", ""))
	waitQueued(t, s, 2)
	cancel()
	if a := <-cancelled; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("cancelled call: err %v, want context.Canceled", a.err)
	}
	waitQueued(t, s, 1)
	release()
	for _, ch := range []<-chan enqueueAnswer{first, other} {
		if a := <-ch; a.err != nil {
			t.Fatal(a.err)
		}
	}
	if got := deliveriesOf(t, s, "n-x"); got != 0 {
		t.Fatalf("the cancelled call wrote %d deliveries", got)
	}
	s.batcher.mu.Lock()
	defer s.batcher.mu.Unlock()
	if s.batcher.running != 0 || len(s.batcher.queue) != 0 {
		t.Fatalf("batcher left running %d, queue %d", s.batcher.running, len(s.batcher.queue))
	}
}

// TestEnqueueBatchConcurrent: many concurrent callers, some cancelling,
// some with unknown users: every call that returns nil wrote exactly its
// deliveries, every failed one nothing, and the batcher ends idle.
func TestEnqueueBatchConcurrent(t *testing.T) {
	s := batchStore(t, 2, 20)
	const callers, each = 16, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	for g := range callers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("n-%d-%d", g, i)
				user := fmt.Sprint("u", 1+rand.IntN(20))
				if i%10 == 7 {
					user = "nobody"
				}
				ctx, cancel := context.WithCancel(t.Context())
				if i%8 == 3 {
					time.AfterFunc(time.Duration(rand.IntN(2000))*time.Microsecond, cancel)
				}
				_, err := s.Enqueue(ctx, batchTrigger(id, user, ""))
				cancel()
				mu.Lock()
				errs[id] = err
				mu.Unlock()
				if err != nil && user != "nobody" && !errors.Is(err, context.Canceled) {
					t.Errorf("%s: %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	rows, err := s.pool.Query(t.Context(), s.q(`SELECT notification_id, count(*) FROM {s}.deliveries GROUP BY 1`))
	if err != nil {
		t.Fatal(err)
	}
	counts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		id string
		n  int
	}, error) {
		var v struct {
			id string
			n  int
		}
		return v, r.Scan(&v.id, &v.n)
	})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]int{}
	for _, c := range counts {
		written[c.id] = c.n
	}
	for id, err := range errs {
		switch {
		case err == nil && written[id] != 1:
			t.Errorf("%s succeeded with %d deliveries", id, written[id])
		// A call cancelled mid-transaction may have committed, as
		// without batching: only other failures must write nothing.
		case err != nil && !errors.Is(err, context.Canceled) && written[id] != 0:
			t.Errorf("%s failed (%v) but wrote %d deliveries", id, err, written[id])
		}
	}
	s.batcher.mu.Lock()
	defer s.batcher.mu.Unlock()
	if s.batcher.running != 0 || len(s.batcher.queue) != 0 {
		t.Fatalf("batcher left running %d, queue %d", s.batcher.running, len(s.batcher.queue))
	}
	t.Logf("%d batches of %d calls in all", s.batcher.batches.Load(), s.batcher.batched.Load())
}

// TestEnqueueBatchEndsAtItsCallsDeadlines: a batch whose every call has a
// deadline gives up at the latest of them, not after batchTimeout, so an
// API request bounded by its store timeout is answered in time when the
// database does not answer (issue 24 item 1).
func TestEnqueueBatchEndsAtItsCallsDeadlines(t *testing.T) {
	s := batchStore(t, 1, 2)
	release := holdUser(t, s, "u1")
	defer release()
	soon := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		t.Cleanup(cancel)
		return ctx
	}
	first := enqueueAsync(soon(300*time.Millisecond), s, batchTrigger("n-a", "u1", ""))
	waitLeading(t, s)
	start := time.Now()
	b := enqueueAsync(soon(time.Second), s, batchTrigger("n-b", "u1", ""))
	c := enqueueAsync(soon(time.Second), s, batchTrigger("n-c", "u2", ""))
	waitQueued(t, s, 2)
	for name, ch := range map[string]<-chan enqueueAnswer{"a": first, "b": b, "c": c} {
		select {
		case a := <-ch:
			if a.err == nil {
				t.Errorf("call %s succeeded although its user was held", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %s did not answer within 10 s: its batch outlived every deadline", name)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the batch answered after %s, want about 1 s", took)
	}
	if got := batchDeadline([]*enqueueCall{{ctx: t.Context()}}, batchNow); !got.Equal(batchNow.Add(batchTimeout)) {
		t.Errorf("a call without a deadline: batch deadline %s, want batchTimeout", got)
	}
}
