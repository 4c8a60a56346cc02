package campaign

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/sqlite"
)

// The runner on the embedded store with an injected clock: failure paths
// first (a crash mid-run, a fetch endpoint that fails or hangs, a template
// that misses a key), then what must hold when nothing fails (one run per
// due time, catch-up, local time, a large audience in pages).

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	t     testing.TB
	ctx   context.Context
	st    store.Store
	db    *sql.DB
	clock *clock
	ids   atomic.Int64
}

// start is 2026-03-07 08:00 in Seoul.
var start = time.Date(2026, 3, 6, 23, 0, 0, 0, time.UTC)

func newEnv(t testing.TB) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "herald.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: t.Context(), st: st, db: st.DB(), clock: &clock{now: start}}
}

// build is a Build that makes an in-app notification (no provider needed).
func (e *env) build(_ context.Context, m Message) (store.EnqueueParams, error) {
	now := e.clock.Now().UTC()
	if m.Title == "" && m.Body == "" {
		return store.EnqueueParams{}, heraldtype.FieldErrorf("title", "empty")
	}
	return store.EnqueueParams{Notifications: []heraldtype.Notification{{
		ID: fmt.Sprintf("n%06d", e.ids.Add(1)), UserID: m.UserID, Type: m.Campaign.Type, Title: m.Title, Body: m.Body,
		Data: m.Data, Channels: []heraldtype.Channel{heraldtype.ChannelInApp}, Priority: heraldtype.PriorityNormal,
		PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, SendAt: m.SendAt, CreatedAt: now,
	}}, MaxAttempts: 3, Now: now}, nil
}

func (e *env) runner(owner string, mod func(*Config)) *Runner {
	e.t.Helper()
	cfg := Config{Store: e.st, Build: e.build, Owner: owner, Pause: -1, Now: e.clock.Now}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// users creates n users u0000… with a device seen now, and zones in turn.
func (e *env) users(n int, zones ...string) {
	e.t.Helper()
	for i := range n {
		id := fmt.Sprintf("u%04d", i)
		tz := "Asia/Seoul"
		if len(zones) > 0 {
			tz = zones[i%len(zones)]
		}
		if _, err := e.st.UpsertUser(e.ctx, heraldtype.User{ID: id, Timezone: tz}, e.clock.Now()); err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.st.UpsertDevice(e.ctx, heraldtype.Device{ID: "d" + id, UserID: id, Platform: heraldtype.PlatformAndroid,
			Token: "t" + id, PushOptIn: true}, e.clock.Now(), 0); err != nil {
			e.t.Fatal(err)
		}
	}
}

// daily puts a campaign at 09:00 Seoul every day, first due at 09:00 today.
func (e *env) daily(name string, mod func(*heraldtype.Campaign)) heraldtype.Campaign {
	e.t.Helper()
	c := heraldtype.Campaign{Name: name, Schedule: heraldtype.Schedule{Cron: "0 9 * * *"},
		Audience: heraldtype.Audience{ActiveWithin: heraldtype.Duration(7 * 24 * time.Hour)},
		Type:     "recommendation", Title: "Today's picks for {{.User.ID}}", Body: "See what's new"}
	if mod != nil {
		mod(&c)
	}
	c.UpdatedAt = e.clock.Now()
	plan, err := Plan(c, "Asia/Seoul")
	if err != nil {
		e.t.Fatal(err)
	}
	first, err := plan.CheckFirst(Anchor(c), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	c.NextAt, c.NextOccurrence = first.Due, first.At
	out, _, err := e.st.PutCampaign(e.ctx, c, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) tick(r *Runner) {
	e.t.Helper()
	if err := r.Tick(e.ctx); err != nil {
		e.t.Fatalf("tick: %v", err)
	}
}

// perUser counts the notifications of each user.
func (e *env) perUser() map[string]int {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, `SELECT user_id, count(*) FROM notifications GROUP BY user_id`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			e.t.Fatal(err)
		}
		out[u] = n
	}
	return out
}

// everyoneOnce fails unless each of n users has exactly want notifications.
func (e *env) everyoneHas(n, want int) {
	e.t.Helper()
	got := e.perUser()
	if want == 0 && len(got) == 0 {
		return
	}
	for i := range n {
		if u := fmt.Sprintf("u%04d", i); got[u] != want {
			e.t.Fatalf("user %s has %d notifications, want %d (all: %d users)", u, got[u], want, len(got))
		}
	}
	if len(got) != n {
		e.t.Fatalf("%d users have notifications, want %d", len(got), n)
	}
}

func (e *env) runs(name string) []heraldtype.CampaignRun {
	e.t.Helper()
	rs, _, err := e.st.ListCampaignRuns(e.ctx, heraldtype.CampaignRunFilter{Campaign: name, Limit: 200})
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

func (e *env) onlyRun(name string) heraldtype.CampaignRun {
	e.t.Helper()
	rs := e.runs(name)
	if len(rs) != 1 {
		e.t.Fatalf("%d runs of %s, want 1: %+v", len(rs), name, rs)
	}
	return rs[0]
}

// crashingStore fails AdvanceCampaignRun on its failAt-th call: before the
// commit (nothing written) or after it (written, the answer lost), as a
// runner killed on either side of the commit would see it.
type crashingStore struct {
	store.Store
	calls       atomic.Int64
	failAt      int64
	afterCommit bool
}

var errCrash = errors.New("crash")

func (s *crashingStore) AdvanceCampaignRun(ctx context.Context, b store.CampaignBatch) (store.CampaignBatchResult, error) {
	if s.calls.Add(1) != s.failAt {
		return s.Store.AdvanceCampaignRun(ctx, b)
	}
	if s.afterCommit {
		_, _ = s.Store.AdvanceCampaignRun(ctx, b)
	}
	return store.CampaignBatchResult{}, errCrash
}

// S3.5, issue 19 item 6: a run that crashes mid-way — before a batch's
// commit or after it — is resumed by another runner from its cursor, and
// no user gets two notifications of it.
func TestCrashMidRunResumesAndSendsNobodyTwice(t *testing.T) {
	for _, afterCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterCommit=%v", afterCommit), func(t *testing.T) {
			e := newEnv(t)
			const n = 50
			e.users(n)
			e.daily("daily", nil)
			crashing := &crashingStore{Store: e.st, failAt: 3, afterCommit: afterCommit}
			a := e.runner("a", func(c *Config) { c.Store = crashing; c.BatchSize = 10 })
			e.clock.Advance(time.Hour) // 09:00 Seoul
			if err := a.Tick(e.ctx); !errors.Is(err, errCrash) {
				t.Fatalf("tick = %v, want the crash", err)
			}
			run := e.onlyRun("daily")
			if run.State != heraldtype.RunRunning || run.Enqueued == 0 || run.Enqueued == n {
				t.Fatalf("after the crash: %+v", run)
			}
			// The crashed runner's lock is held for lock-at-least; a second
			// runner resumes the run once it is free.
			b := e.runner("b", func(c *Config) { c.BatchSize = 7 })
			e.tick(b)
			if r := e.onlyRun("daily"); r.State != heraldtype.RunRunning {
				t.Fatalf("run finished while the crashed runner's lock was held: %+v", r)
			}
			e.clock.Advance(DefaultLockAtLeast)
			e.tick(b)
			run = e.onlyRun("daily")
			if run.State != heraldtype.RunDone || run.Enqueued != n || run.Recipients < n {
				t.Fatalf("after the resumption: %+v", run)
			}
			e.everyoneHas(n, 1)
		})
	}
}

// S3.7: the fetch endpoint failing (500) or not answering within its
// timeout is recorded on the run — counts, last error, metric — never
// silently dropped; a re-run of that run after the endpoint recovers
// reaches exactly the users that were missed, fetching content for them
// alone, and ends with the counts of what it found and no error (issue 30
// item 6: not a sum of tries); a re-run that fails again counts its own
// failures once.
func TestFetchFailureIsRecordedAndReRunRecovers(t *testing.T) {
	e := newEnv(t)
	const n = 12
	e.users(n)
	var mode atomic.Value
	mode.Store("500")
	release := make(chan struct{})
	var askedMu sync.Mutex
	var asked []string // the user ids fetched, in calls' order
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req FetchRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		askedMu.Lock()
		asked = append(asked, req.UserIDs...)
		askedMu.Unlock()
		switch mode.Load() {
		case "500":
			if strings.HasSuffix(req.UserIDs[0], "0") { // the chunk starting at u0000
				http.Error(w, "boom", 500)
				return
			}
		case "hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		ans := FetchAnswer{Users: map[string]UserContent{}}
		for _, u := range req.UserIDs {
			ans.Users[u] = UserContent{Items: []any{map[string]any{"name": "item-" + u}, "b", "c"}}
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	defer srv.Close()
	defer close(release)
	e.daily("reco", func(c *heraldtype.Campaign) {
		c.Fetch = &heraldtype.CampaignFetch{URL: srv.URL, BatchSize: 4, Concurrency: 2, Timeout: heraldtype.Duration(200 * time.Millisecond)}
		c.Body = "{{(index .Items 0).name}}, {{index .Items 1}} and {{index .Items 2}}"
	})
	r := e.runner("a", nil)
	e.clock.Advance(time.Hour)
	e.tick(r)
	run := e.onlyRun("reco")
	// u0000-u0003 and u0008-u0011 start with …0 / …8: only the first chunk fails.
	if run.State != heraldtype.RunDone || run.FetchFailed != 4 || run.Enqueued != 8 || !strings.Contains(run.LastError, "status 500") {
		t.Fatalf("run with a failing chunk: %+v", run)
	}
	if got := e.perUser(); got["u0000"] != 0 || got["u0004"] != 1 {
		t.Fatalf("notifications: %v", got)
	}
	// Every call hangs past the timeout: every user fails, the run fails.
	mode.Store("hang")
	c2, _ := e.st.GetCampaign(e.ctx, "reco")
	started, err := e.st.StartCampaignRun(e.ctx, store.CampaignRunStart{Campaign: "reco", RunID: "manual-hang", Occurrence: e.clock.Now(), Now: e.clock.Now()})
	if err != nil || !started.Started {
		t.Fatal(started, err)
	}
	e.clock.Advance(DefaultLockAtLeast)
	e.tick(r)
	hang, _ := e.st.GetCampaignRun(e.ctx, "reco", "manual-hang")
	if hang.State != heraldtype.RunFailed || hang.FetchFailed != n || hang.Enqueued != 0 || !strings.Contains(hang.LastError, "no answer within 200ms") {
		t.Fatalf("run against a hanging endpoint: %+v (campaign %s)", hang, c2.Name)
	}
	// Still failing, the first run is run again: it asks only for the four
	// it missed, and counts them once.
	rerun := func() heraldtype.CampaignRun {
		t.Helper()
		askedMu.Lock()
		asked = nil
		askedMu.Unlock()
		if _, err := e.st.StartCampaignRun(e.ctx, store.CampaignRunStart{Campaign: "reco", RunID: run.ID, Occurrence: run.Occurrence, Now: e.clock.Now(), Restart: true}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(DefaultLockAtLeast)
		e.tick(r)
		askedMu.Lock()
		defer askedMu.Unlock()
		if got := strings.Join(asked, ","); got != "u0000,u0001,u0002,u0003" {
			t.Fatalf("re-run fetched %s, want the four users it had not reached", got)
		}
		again, _ := e.st.GetCampaignRun(e.ctx, "reco", run.ID)
		return again
	}
	mode.Store("500")
	failed := rerun()
	if failed.State != heraldtype.RunDone || failed.Recipients != n || failed.FetchFailed != 4 || failed.Enqueued != 8 ||
		failed.Skipped != 8 || failed.Restarts != 1 || !strings.Contains(failed.LastError, "status 500") {
		t.Fatalf("re-run against the failing endpoint: %+v", failed)
	}
	// The endpoint recovers; run again: only the four it missed get their
	// notification, and the run says so with no error.
	mode.Store("ok")
	again := rerun()
	if again.State != heraldtype.RunDone || again.Recipients != n || again.Enqueued != n || again.Skipped != 8 ||
		again.FetchFailed != 0 || again.LastError != "" || again.Restarts != 2 {
		t.Fatalf("re-run: %+v", again)
	}
	e.everyoneHas(n, 1)
	var body string
	if err := e.db.QueryRowContext(e.ctx, `SELECT body FROM notifications WHERE user_id = 'u0001'`).Scan(&body); err != nil || body != "item-u0001, b and c" {
		t.Fatalf("rendered body %q, %v", body, err)
	}
}

// A template that misses a key is an error for that user, counted on the
// run with the error — never "<no value>" in a notification.
func TestMissingKeyIsRenderFailedNeverNoValue(t *testing.T) {
	e := newEnv(t)
	e.users(3)
	e.daily("daily", func(c *heraldtype.Campaign) { c.Body = "Hello {{.Fields.name}}" })
	r := e.runner("a", nil)
	e.clock.Advance(time.Hour)
	e.tick(r)
	run := e.onlyRun("daily")
	if run.State != heraldtype.RunFailed || run.RenderFailed != 3 || run.Enqueued != 0 || !strings.Contains(run.LastError, "name") {
		t.Fatalf("run: %+v", run)
	}
	if got := e.perUser(); len(got) != 0 {
		t.Fatalf("notifications were written: %v", got)
	}
}

// S3.7: a due time starts one run, once, whatever the number of ticks;
// the next day's due time is the next run.
func TestDueTimeRunsOncePerDay(t *testing.T) {
	e := newEnv(t)
	e.users(5)
	c := e.daily("daily", nil)
	if want := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC); !c.NextAt.Equal(want) {
		t.Fatalf("first due %v, want %v (09:00 Seoul)", c.NextAt, want)
	}
	r := e.runner("a", nil)
	e.tick(r) // 08:00: nothing due
	if rs := e.runs("daily"); len(rs) != 0 {
		t.Fatalf("runs before the due time: %+v", rs)
	}
	e.clock.Advance(time.Hour)
	for range 3 {
		e.tick(r)
	}
	run := e.onlyRun("daily")
	if run.ID != "20260307T000000Z" || run.State != heraldtype.RunDone || run.Enqueued != 5 {
		t.Fatalf("run: %+v", run)
	}
	e.everyoneHas(5, 1)
	c, _ = e.st.GetCampaign(e.ctx, "daily")
	if want := time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC); !c.NextAt.Equal(want) || c.LastRunID != run.ID {
		t.Fatalf("campaign after the run: next %v last %q", c.NextAt, c.LastRunID)
	}
	e.clock.Advance(24 * time.Hour)
	e.tick(r)
	if rs := e.runs("daily"); len(rs) != 2 || rs[0].ID != "20260308T000000Z" {
		t.Fatalf("second day: %+v", rs)
	}
	e.everyoneHas(5, 2)
}

// Issue 19 item 7: after three days down, a daily campaign (catch_up once,
// window 24 h) runs once — the latest missed due time — and is next due
// tomorrow; with skip it runs none.
func TestCatchUpAfterDowntime(t *testing.T) {
	for _, policy := range []heraldtype.CatchUp{heraldtype.CatchUpOnce, heraldtype.CatchUpSkip} {
		t.Run(string(policy), func(t *testing.T) {
			e := newEnv(t)
			e.users(2)
			e.daily("daily", func(c *heraldtype.Campaign) { c.Schedule.CatchUp = policy })
			e.clock.Advance(time.Hour + 3*24*time.Hour + 2*time.Hour) // 11:00 on the fourth day
			r := e.runner("a", nil)
			e.tick(r)
			rs := e.runs("daily")
			c, _ := e.st.GetCampaign(e.ctx, "daily")
			if want := time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC); !c.NextAt.Equal(want) {
				t.Fatalf("next due %v, want %v", c.NextAt, want)
			}
			if policy == heraldtype.CatchUpSkip {
				if len(rs) != 0 {
					t.Fatalf("skip ran %+v", rs)
				}
				return
			}
			if len(rs) != 1 || rs[0].ID != "20260310T000000Z" || rs[0].State != heraldtype.RunDone {
				t.Fatalf("runs: %+v", rs)
			}
			e.everyoneHas(2, 1)
		})
	}
}

// "09:00 wherever they are": the run starts when UTC+14 reaches 09:00 and
// each notification is due at 09:00 in its user's own zone.
func TestLocalTimeSendAtPerZone(t *testing.T) {
	e := newEnv(t)
	zones := []string{"Asia/Seoul", "Europe/London", "America/New_York", "Pacific/Kiritimati"}
	e.users(4, zones...)
	c := e.daily("local", func(c *heraldtype.Campaign) { c.LocalTime = true })
	// start (23:00 UTC on 6 March) is 13:00 on the 7th in UTC+14, so the
	// first run starts at 09:00 on the 8th there: 19:00 UTC on the 7th.
	if want := time.Date(2026, 3, 7, 19, 0, 0, 0, time.UTC); !c.NextAt.Equal(want) {
		t.Fatalf("first due %v, want %v", c.NextAt, want)
	}
	e.clock.now = c.NextAt
	e.tick(e.runner("a", nil))
	if run := e.onlyRun("local"); run.State != heraldtype.RunDone || run.Enqueued != 4 {
		t.Fatalf("run: %+v", run)
	}
	want := map[string]time.Time{
		"u0000": time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC),  // Seoul
		"u0001": time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC),  // London
		"u0002": time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC), // New York, EDT since 02:00
		"u0003": time.Date(2026, 3, 7, 19, 0, 0, 0, time.UTC), // Kiritimati: now
	}
	rows, err := e.db.QueryContext(e.ctx, `SELECT user_id, send_at FROM notifications`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var u string
		var at sql.NullInt64
		if err := rows.Scan(&u, &at); err != nil {
			t.Fatal(err)
		}
		got := time.UnixMicro(at.Int64).UTC()
		if !at.Valid || !got.Equal(want[u]) {
			t.Errorf("%s: send_at %v (valid %v), want %v", u, got, at.Valid, want[u])
		}
		seen++
	}
	if seen != 4 {
		t.Fatalf("%d notifications", seen)
	}
}

// S3.3, S3.5: an audience of a few thousand users is paged in batches
// (never loaded at once), each user reached once; users without a recent
// device are not in an active_within audience.
func TestLargeAudienceInBatches(t *testing.T) {
	e := newEnv(t)
	const n = 2500
	e.users(n)
	// One more user, seen long ago: not active within 7 days.
	e.clock.Advance(-30 * 24 * time.Hour)
	if _, err := e.st.UpsertUser(e.ctx, heraldtype.User{ID: "zz-idle", Timezone: "Asia/Seoul"}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.UpsertDevice(e.ctx, heraldtype.Device{ID: "d-idle", UserID: "zz-idle", Platform: heraldtype.PlatformAndroid,
		Token: "t-idle", PushOptIn: true}, e.clock.Now(), 0); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(30 * 24 * time.Hour)
	e.daily("daily", nil)
	counting := &countingStore{Store: e.st}
	r := e.runner("a", func(c *Config) { c.Store = counting; c.BatchSize = 300 })
	e.clock.Advance(time.Hour)
	e.tick(r)
	run := e.onlyRun("daily")
	if run.State != heraldtype.RunDone || run.Recipients != n || run.Enqueued != n {
		t.Fatalf("run: %+v", run)
	}
	if pages := counting.pages.Load(); pages != n/300+2 { // 9 pages of users, the last short, then the empty one
		t.Fatalf("%d audience pages, want %d", pages, n/300+2)
	}
	if counting.largest.Load() > 300 {
		t.Fatalf("a page of %d users, above the batch size", counting.largest.Load())
	}
	e.everyoneHas(n, 1)
}

type countingStore struct {
	store.Store
	pages, largest atomic.Int64
}

func (s *countingStore) AudienceUsers(ctx context.Context, q store.AudienceQuery) ([]store.AudienceUser, error) {
	s.pages.Add(1)
	us, err := s.Store.AudienceUsers(ctx, q)
	if int64(len(us)) > s.largest.Load() {
		s.largest.Store(int64(len(us)))
	}
	return us, err
}

// A paused campaign does not run on its schedule; a manual run of it
// does, and a local-time campaign's manual run is due now, not at a wall
// time.
func TestPausedCampaignRunsOnlyByHand(t *testing.T) {
	e := newEnv(t)
	e.users(2, "America/New_York")
	e.daily("paused", func(c *heraldtype.Campaign) { c.Paused, c.LocalTime = true, true })
	r := e.runner("a", nil)
	e.clock.Advance(48 * time.Hour)
	e.tick(r)
	if rs := e.runs("paused"); len(rs) != 0 {
		t.Fatalf("a paused campaign ran: %+v", rs)
	}
	if _, err := e.st.StartCampaignRun(e.ctx, store.CampaignRunStart{Campaign: "paused", RunID: ManualPrefix + "1",
		Occurrence: e.clock.Now(), Now: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.tick(r)
	if run := e.onlyRun("paused"); run.State != heraldtype.RunDone || run.Enqueued != 2 {
		t.Fatalf("manual run: %+v", run)
	}
	var withSendAt int
	if err := e.db.QueryRowContext(e.ctx, `SELECT count(*) FROM notifications WHERE send_at IS NOT NULL`).Scan(&withSendAt); err != nil || withSendAt != 0 {
		t.Fatalf("%d notifications of a manual run have a send_at (%v)", withSendAt, err)
	}
}

// Issue 30 item 6: a re-run that crashes — before a batch's commit or
// after it — and is resumed by another runner still fetches content only
// for the users the run has not reached (a batch retried after a lost
// commit is fetched again, one whose commit landed is not), and its counts
// are the try's truth: every user considered once, nothing added twice.
func TestReRunResumedFetchesOnlyTheMissed(t *testing.T) {
	for _, afterCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("afterCommit=%v", afterCommit), func(t *testing.T) {
			e := newEnv(t)
			const n = 20
			e.users(n)
			var failing atomic.Bool
			failing.Store(true)
			var mu sync.Mutex
			asked := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req FetchRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					http.Error(w, err.Error(), 400)
					return
				}
				ans := FetchAnswer{Users: map[string]UserContent{}}
				mu.Lock()
				for _, u := range req.UserIDs {
					asked[u]++
					if !failing.Load() || u < "u0010" {
						ans.Users[u] = UserContent{Items: []any{"x"}}
					}
				}
				mu.Unlock()
				_ = json.NewEncoder(w).Encode(ans)
			}))
			defer srv.Close()
			e.daily("reco", func(c *heraldtype.Campaign) {
				c.Fetch = &heraldtype.CampaignFetch{URL: srv.URL, BatchSize: 5}
				c.Body = "{{index .Items 0}}"
			})
			first := e.runner("first", func(c *Config) { c.BatchSize = 5 })
			e.clock.Advance(time.Hour)
			e.tick(first)
			run := e.onlyRun("reco")
			if run.Enqueued != 10 || run.FetchFailed != 10 || run.LastError == "" {
				t.Fatalf("first try: %+v", run)
			}
			// The endpoint recovers; the re-run crashes at its third batch
			// (u0010–u0014) and another runner resumes it.
			failing.Store(false)
			mu.Lock()
			clear(asked)
			mu.Unlock()
			if _, err := e.st.StartCampaignRun(e.ctx, store.CampaignRunStart{Campaign: "reco", RunID: run.ID,
				Occurrence: run.Occurrence, Now: e.clock.Now(), Restart: true}); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(DefaultLockAtLeast)
			crashing := &crashingStore{Store: e.st, failAt: 3, afterCommit: afterCommit}
			a := e.runner("a", func(c *Config) { c.Store = crashing; c.BatchSize = 5 })
			if err := a.Tick(e.ctx); !errors.Is(err, errCrash) {
				t.Fatalf("tick = %v, want the crash", err)
			}
			b := e.runner("b", func(c *Config) { c.BatchSize = 5 })
			e.clock.Advance(DefaultLockAtLeast)
			e.tick(b)
			again := e.onlyRun("reco")
			if again.State != heraldtype.RunDone || again.Recipients != n || again.Enqueued != n || again.Skipped != 10 ||
				again.FetchFailed != 0 || again.LastError != "" || again.Restarts != 1 {
				t.Fatalf("resumed re-run: %+v", again)
			}
			e.everyoneHas(n, 1)
			mu.Lock()
			defer mu.Unlock()
			for i := range n {
				u := fmt.Sprintf("u%04d", i)
				want := 0
				switch {
				case i >= 15:
					want = 1
				case i >= 10 && afterCommit:
					want = 1 // its batch committed: not fetched again
				case i >= 10:
					want = 2 // its batch was lost: fetched again on resumption
				}
				if asked[u] != want {
					t.Fatalf("re-run fetched %s %d times, want %d (all: %v)", u, asked[u], want, asked)
				}
			}
		})
	}
}
