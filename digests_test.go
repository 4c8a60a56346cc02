package herald

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// commentDigest is the digest type of these tests: a minute's comments on
// one post.
func commentDigest(mod func(*DigestConfig)) TypeConfig {
	d := &DigestConfig{Window: "1m", Key: "{{.post_id}}",
		Title: "{{.Count}} new comments", Body: "{{range .Items}}{{.Data.author}} {{end}}"}
	if mod != nil {
		mod(d)
	}
	return TypeConfig{Digest: d}
}

func comment(user, post string, i int) Request {
	return Request{UserID: user, Type: "comment", Title: "New comment",
		Data: map[string]string{"post_id": post, "author": fmt.Sprintf("a%d", i)}}
}

// pgInstance is one Herald instance on the PostgreSQL schema of dsn with
// conns connections, the comment type as digest (with mod), on clock.
func pgInstance(t *testing.T, dsn, schema string, conns int32, mod func(*Config)) *Client {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema, MaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Store: st, Providers: map[string]Provider{"fcm": okProvider{}},
		Types: map[string]TypeConfig{"comment": commentDigest(nil)}, Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 36 item 1: 100 triggers for one user and key within one second,
// from 4 goroutines on each of 2 instances sharing PostgreSQL, give
// exactly one digest with all 100 items — and 100 for a second key,
// interleaved with them, another, keys never mixing; the two instances'
// workers, run at once when the window ends, send each digest once.
func TestDigestExactlyOnceAcrossInstancesPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	instance := func(owner string) *Client {
		return pgInstance(t, dsn, schema, 6, func(c *Config) { c.Owner, c.Now = owner, clock.Now })
	}
	a, b := instance("a"), instance("b")
	if _, err := a.PutUser(ctx, "u1", UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterDevice(ctx, "u1", DeviceInput{DeviceID: "d1", Token: "tok", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	const perKey, goroutines = 100, 4
	var mu sync.Mutex
	digests := map[string]map[string]bool{} // post → digest ids
	var wg sync.WaitGroup
	for ci, c := range []*Client{a, b} {
		for g := range goroutines {
			wg.Go(func() {
				worker := ci*goroutines + g
				for i := worker; i < 2*perKey; i += 2 * goroutines {
					post := []string{"p1", "p2"}[i%2]
					res, err := c.Enqueue(ctx, comment("u1", post, i))
					if err != nil {
						t.Error(err)
						return
					}
					n := res.Notifications[0]
					if n.Digest == "" || n.Deliveries != 0 {
						t.Errorf("trigger %d = %+v, want an item of a digest", i, n)
						return
					}
					mu.Lock()
					if digests[post] == nil {
						digests[post] = map[string]bool{}
					}
					digests[post][n.Digest] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(digests["p1"]) != 1 || len(digests["p2"]) != 1 {
		t.Fatalf("digests by key = %v, want one per key", digests)
	}
	clock.Advance(time.Minute)
	var claimed [2]int
	for i, c := range []*Client{a, b} {
		wg.Go(func() {
			n, err := c.runDigestsOnce(ctx)
			if err != nil {
				t.Error(err)
			}
			claimed[i] = n
		})
	}
	wg.Wait()
	if claimed[0]+claimed[1] != 2 {
		t.Fatalf("the two workers claimed %v digests, want 2 between them", claimed)
	}
	for post, ids := range digests {
		for id := range ids {
			d, err := a.GetDigest(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if d.State != store.DigestSent || d.Items != perKey || d.Key != post || d.NotificationID == "" {
				t.Fatalf("digest of %s = %+v, want sent with %d items", post, d, perKey)
			}
			n, err := a.GetNotification(ctx, d.NotificationID)
			if err != nil {
				t.Fatal(err)
			}
			if n.Title != "100 new comments" || n.Source == nil || n.Source.Kind != heraldtype.SourceDigest ||
				n.Source.ID != id || n.Source.Count != perKey || len(n.Deliveries) != 1 {
				t.Fatalf("digest notification = %+v (source %+v)", n, n.Source)
			}
			// Keys never mix: every author of the body is one of this
			// post's triggers (even numbers for p1, odd for p2).
			authors := strings.Fields(n.Body)
			if len(authors) != perKey {
				t.Fatalf("body names %d authors, want %d", len(authors), perKey)
			}
			for _, au := range authors {
				var i int
				fmt.Sscanf(au, "a%d", &i)
				if []string{"p1", "p2"}[i%2] != post {
					t.Fatalf("digest of %s holds %s's trigger %s", post, []string{"p1", "p2"}[i%2], au)
				}
			}
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var notifications, items int
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s.notifications WHERE user_id = 'u1'),
	(SELECT count(*) FROM %[1]s.digest_items)`, pgx.Identifier{schema}.Sanitize())).Scan(&notifications, &items); err != nil {
		t.Fatal(err)
	}
	if notifications != 2 || items != 2*perKey {
		t.Fatalf("%d notifications and %d items, want 2 and %d", notifications, items, 2*perKey)
	}
}

// Issue 36 item 6: triggers of many users each (one statement joins them
// on PostgreSQL) from 3 goroutines on each of 2 instances, naming
// overlapping users in different orders, neither deadlock nor lose an
// item: each user ends with one digest holding every trigger that named
// them, and a max items of 7 closes and reopens them on the way.
func TestDigestManyUsersAcrossInstancesPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	instance := func(owner string) *Client {
		return pgInstance(t, dsn, schema, 4, func(c *Config) {
			c.Owner, c.Now, c.DisableWorkers = owner, clock.Now, true
			c.Types = map[string]TypeConfig{"comment": commentDigest(func(d *DigestConfig) { d.MaxItems = 7 })}
		})
	}
	a, b := instance("a"), instance("b")
	const users, perTrigger, triggers, goroutines = 24, 8, 60, 3
	for u := range users {
		if _, err := a.PutUser(ctx, fmt.Sprintf("u%02d", u), UserInput{}); err != nil {
			t.Fatal(err)
		}
	}
	// Trigger i names perTrigger users from a rotating start, every other
	// trigger in reverse order.
	named := func(i int) []string {
		out := make([]string, perTrigger)
		for k := range out {
			out[k] = fmt.Sprintf("u%02d", (i*5+k*3)%users)
		}
		if i%2 == 1 {
			slices.Reverse(out)
		}
		return out
	}
	want := map[string]int{}
	for i := range triggers {
		for _, u := range named(i) {
			want[u]++
		}
	}
	var mu sync.Mutex
	got := map[string]map[string]bool{} // user → digests joined
	var wg sync.WaitGroup
	for ci, c := range []*Client{a, b} {
		for g := range goroutines {
			wg.Go(func() {
				for i := ci*goroutines + g; i < triggers; i += 2 * goroutines {
					res, err := c.Enqueue(ctx, Request{UserIDs: named(i), Type: "comment", Title: "New comment",
						Data: map[string]string{"post_id": "p1", "author": fmt.Sprintf("a%d", i)}})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, n := range res.Notifications {
						if n.Digest == "" || n.Deliveries != 0 {
							t.Errorf("trigger %d: %+v, want an item of a digest", i, n)
						}
						if got[n.UserID] == nil {
							got[n.UserID] = map[string]bool{}
						}
						got[n.UserID][n.Digest] = true
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for user, n := range want {
		items := 0
		for id := range got[user] {
			d, err := a.GetDigest(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if d.UserID != user || len(d.Entries) != d.Items || d.Items > 7 || (d.Items < 7 && d.State != store.DigestOpen) {
				t.Fatalf("%s's digest %s = %+v with %d entries", user, id, d.DigestInfo, len(d.Entries))
			}
			items += d.Items
		}
		if items != n || len(got[user]) != (n+6)/7 {
			t.Fatalf("%s: %d items in %d digests, want %d in %d", user, items, len(got[user]), n, (n+6)/7)
		}
	}
}

// A worker that claims a digest and dies before its fire (SIGKILL between
// the window's close and the send) leaves it leased; once the lease ends
// another claims it and sends it — one notification, delivered through
// the pipeline.
func TestDigestCrashBetweenClaimAndSend(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{"comment": commentDigest(nil)}
		c.Digests.Lease = 30 * time.Second
	})
	p.device("u1", "d1", "tok-1")
	var item string
	for i := range 3 {
		item = p.enqueue(comment("u1", "p1", i)).Notifications[0].Digest
	}
	p.clock.Advance(time.Minute)
	dead, err := p.store.ClaimDigests(p.ctx, store.DigestClaimParams{Owner: "dead", Now: p.clock.Now(),
		LeaseUntil: p.clock.Now().Add(30 * time.Second), Limit: 10})
	if err != nil || len(dead) != 1 {
		t.Fatalf("the doomed claim = %v, %v", dead, err)
	}
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 0 {
		t.Fatalf("a worker under the dead lease claimed %d (%v)", n, err)
	}
	p.clock.Advance(30 * time.Second)
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("after the lease: claimed %d (%v), want 1", n, err)
	}
	// The dead worker comes back and fires what it claimed: refused.
	if fired, _, err := p.store.FireDigest(p.ctx, store.DigestFire{ID: item, Owner: "dead", Now: p.clock.Now()}); err != nil || fired {
		t.Fatalf("the dead worker's late fire = %v, %v", fired, err)
	}
	if n, _ := p.client.runDigestsOnce(p.ctx); n != 0 {
		t.Fatalf("a sent digest was claimed again")
	}
	d, err := p.client.GetDigest(p.ctx, item)
	if err != nil || d.State != store.DigestSent {
		t.Fatalf("digest = %+v, %v", d, err)
	}
	if sent := p.work(); sent != 1 {
		t.Fatalf("the workers sent %d deliveries, want the digest's one", sent)
	}
	n := p.status(d.NotificationID)
	if n.Status != heraldtype.HistorySent || n.Title != "3 new comments" || n.Body != "a0 a1 a2 " {
		t.Fatalf("digest notification = %+v", n)
	}
}

// max_items sends a digest as soon as it is full, a trigger after it opens
// the next; first: immediate sends the first trigger at once; a critical
// type bypasses its digest; a scheduled trigger is not digested.
func TestDigestMaxItemsImmediateAndBypass(t *testing.T) {
	p := newPipeline(t, func(c *Config) {
		c.Types = map[string]TypeConfig{
			"comment": commentDigest(func(d *DigestConfig) { d.MaxItems = 2 }),
			"like":    commentDigest(func(d *DigestConfig) { d.First = "immediate" }),
			"alarm":   {Critical: true, Digest: &DigestConfig{Window: "1m", Title: "{{.Count}}"}},
		}
	})
	p.device("u1", "d1", "tok-1")
	first := p.enqueue(comment("u1", "p1", 0)).Notifications[0].Digest
	if second := p.enqueue(comment("u1", "p1", 1)).Notifications[0].Digest; second != first {
		t.Fatalf("second trigger joined %s, want %s", second, first)
	}
	if third := p.enqueue(comment("u1", "p1", 2)).Notifications[0].Digest; third == first {
		t.Fatal("a trigger after max_items joined the full digest")
	}
	// Sent without waiting for the window.
	if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 1 {
		t.Fatalf("claimed %d (%v), want the full digest", n, err)
	}
	if d, _ := p.client.GetDigest(p.ctx, first); d.State != store.DigestSent || d.Items != 2 {
		t.Fatalf("full digest = %+v", d)
	}

	like := func(i int) EnqueuedNotification {
		r := comment("u1", "p9", i)
		r.Type = "like"
		return p.enqueue(r).Notifications[0]
	}
	if n := like(0); n.Digest != "" || n.Deliveries != 1 {
		t.Fatalf("first like = %+v, want sent at once", n)
	}
	if n := like(1); n.Digest == "" || n.Deliveries != 0 {
		t.Fatalf("second like = %+v, want digested", n)
	}

	alarm := comment("u1", "p1", 0)
	alarm.Type = "alarm"
	if n := p.enqueue(alarm).Notifications[0]; n.Digest != "" || n.Deliveries != 1 {
		t.Fatalf("critical trigger = %+v, want a plain notification", n)
	}
	later := comment("u1", "p1", 5)
	at := p.clock.Now().Add(time.Hour)
	later.SendAt = &at
	if n := p.enqueue(later).Notifications[0]; n.Digest != "" || n.Deliveries != 1 {
		t.Fatalf("scheduled trigger = %+v, want a plain notification", n)
	}
	// A trigger without the data its key needs is refused naming data.
	_, err := p.client.Enqueue(p.ctx, Request{UserID: "u1", Type: "comment", Title: "x"})
	if heraldtype.ErrorCode(err) != heraldtype.EINVALID || !strings.Contains(err.Error(), "data") {
		t.Fatalf("trigger without post_id: %v", err)
	}
}

// A type's digest is validated field by field.
func TestDigestTypeValidation(t *testing.T) {
	p := newPipeline(t, nil)
	for _, tc := range []struct {
		d     DigestConfig
		field string
	}{
		{DigestConfig{Title: "x"}, "digest.window"},
		{DigestConfig{Window: "soon", Title: "x"}, "digest.window"},
		{DigestConfig{Window: "10ms", Title: "x"}, "digest.window"},
		{DigestConfig{Window: "1m", Title: "x", MaxItems: 1001}, "digest.max_items"},
		{DigestConfig{Window: "1m", Title: "x", MaxItems: -1}, "digest.max_items"},
		{DigestConfig{Window: "1m", Title: "x", First: "later"}, "digest.first"},
		{DigestConfig{Window: "1m"}, "digest.title"},
		{DigestConfig{Window: "1m", Title: "{{.Count"}, "digest.title"},
		{DigestConfig{Window: "1m", Title: "x", Body: `{{define "a"}}{{end}}`}, "digest.body"},
		{DigestConfig{Window: "1m", Title: "x", Key: "{{range 99999999}}{{end}}"}, "digest.key"},
		{DigestConfig{Window: "1m", Title: "x", Key: strings.Repeat("k", 256)}, "digest.key"},
	} {
		_, err := p.client.PutType(p.ctx, "comment", TypeConfig{Digest: &tc.d})
		var he *heraldtype.Error
		if heraldtype.ErrorCode(err) != heraldtype.EINVALID || !errors.As(err, &he) || he.Field != tc.field {
			t.Errorf("PutType(%+v) = %v, want invalid_argument on %s", tc.d, err, tc.field)
		}
	}
	got, err := p.client.PutType(p.ctx, "comment", TypeConfig{Digest: &DigestConfig{Window: "10m", Title: "{{.Count}}"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Digest; d == nil || d.Window != "10m0s" || d.MaxItems != DefaultMaxDigestItems || d.First != "collect" {
		t.Fatalf("stored digest = %+v", got.Digest)
	}
}

// The delivery policy applies to a digest's one notification when it is
// sent (issue 36 item 1): quiet hours defer the digest, not its items (the
// triggers before them joined it); the daily cap counts a digest of three
// triggers once; preferences are read when the digest is sent.
func TestDigestPolicyAtSendTime(t *testing.T) {
	yes := true
	p := newPolicyPipeline(t, func(c *Config) {
		tc := commentDigest(nil)
		tc.CountsTowardCap = &yes
		c.Types = map[string]TypeConfig{"comment": tc}
		c.DailyCap = 1
	})
	p.user("u1", "America/New_York", "tok-1")
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{QuietHours: &QuietHours{Start: "22:00", End: "08:00"}}); err != nil {
		t.Fatal(err)
	}
	p.setClock(time.Date(2026, 1, 15, 2, 59, 30, 0, time.UTC)) // 21:59:30 EST, Jan 14
	for i := range 3 {
		p.enqueue(comment("u1", "p1", i))
	}
	p.clock.Advance(time.Minute) // the window ends inside quiet hours
	digestNotification := func() string {
		t.Helper()
		if n, err := p.client.runDigestsOnce(p.ctx); err != nil || n != 1 {
			t.Fatalf("digest worker claimed %d (%v), want 1", n, err)
		}
		h := p.history(HistoryFilter{UserID: "u1", Type: "comment"})
		return h[0].NotificationID
	}
	first := digestNotification()
	p.work()
	if st := p.status(first); st.Status != heraldtype.HistoryDeferred || st.Source.Count != 3 {
		t.Fatalf("digest in quiet hours = %s (source %+v), want DEFERRED with its 3 items", st.Status, st.Source)
	}
	p.setClock(time.Date(2026, 1, 15, 13, 0, 0, 0, time.UTC)) // 08:00 EST
	p.work()
	if st := p.status(first); st.Status != heraldtype.HistorySent {
		t.Fatalf("digest after quiet hours = %s, want SENT", st.Status)
	}
	// The cap (1 a day) counted that digest once: the next one is over it.
	for i := range 2 {
		p.enqueue(comment("u1", "p2", i))
	}
	p.clock.Advance(time.Minute)
	second := digestNotification()
	p.work()
	if st := p.status(second); st.Status != heraldtype.HistoryRateLimited || st.Reason != "daily_cap" {
		t.Fatalf("second digest of the day = %s/%s, want RATE_LIMITED/daily_cap", st.Status, st.Reason)
	}
	// Preferences changed after the triggers are the ones that decide.
	p.enqueue(comment("u1", "p3", 0))
	if _, err := p.client.PutPreferences(p.ctx, "u1", Preferences{Types: map[string]TypePreference{"comment": {Disabled: true}}}); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(time.Minute)
	third := digestNotification()
	p.work()
	if st := p.status(third); st.Status != heraldtype.HistoryOptedOut {
		t.Fatalf("digest of a type the user turned off since = %s, want USER_OPTED_OUT", st.Status)
	}
	if got := len(p.em.MessagesTo("tok-1")); got != 1 {
		t.Fatalf("the phone got %d pushes, want the first digest's one", got)
	}
}

// Issue 36 item 1 on PostgreSQL: a rule's notification of a digest type
// applied with its event (the inline path's set-based write) joins the
// digest, as a trigger's does.
func TestRuleNotificationsJoinTheDigestPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	c := pgInstance(t, dsn, schema, 4, func(c *Config) { c.Rules, c.DisableWorkers = RuleConfig{Pause: -1}, true })
	if _, err := c.PutUser(ctx, "u1", UserInput{}); err != nil {
		t.Fatal(err)
	}
	r := Rule{Name: "comments", When: heraldtype.RuleWhen{Event: "comment_added"},
		Audience: heraldtype.RuleAudience{EventUser: true},
		Notify:   heraldtype.RuleNotify{Type: "comment", Title: "New comment", Data: map[string]string{"post_id": "p1", "author": "{{.who}}"}}}
	if _, _, err := c.PutRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	for i, who := range []string{"ann", "bo", "cy"} {
		if _, err := c.Track(ctx, Event{ID: fmt.Sprint("c", i), Name: "comment_added", UserID: "u1",
			Subject: fmt.Sprint("comment:", i), Data: map[string]string{"who": who}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ruleRunner.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := c.ListDigests(ctx, DigestFilter{UserID: "u1"})
	if err != nil || len(page.Digests) != 1 || page.Digests[0].Items != 3 {
		t.Fatalf("digests = %+v, %v; want one of 3 items", page.Digests, err)
	}
	h, err := c.ListHistory(ctx, HistoryFilter{UserID: "u1"})
	if err != nil || len(h.Notifications) != 0 {
		t.Fatalf("history = %+v, %v; want no plain notification", h.Notifications, err)
	}
}
