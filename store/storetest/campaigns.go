package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The campaigns (issue 19 item 6, S3.7): what store.Campaigns keeps, how a
// due time starts once, how a batch writes its recipients, notifications
// and cursor together, and how an audience pages.

func campaign(name string, next time.Time) heraldtype.Campaign {
	return heraldtype.Campaign{
		Name:     name,
		Schedule: heraldtype.Schedule{Cron: "0 9 * * *", TimeZone: "Asia/Seoul"},
		Audience: heraldtype.Audience{ActiveWithin: heraldtype.Duration(7 * 24 * time.Hour)},
		Type:     "recommendation", Title: "Today's picks", Body: "{{index .Items 0}}",
		Data:     map[string]string{"k": "v"},
		Channels: []heraldtype.Channel{heraldtype.ChannelPush},
		Fetch:    &heraldtype.CampaignFetch{URL: "http://reco.example/v1", Concurrency: 4},
		NextAt:   next, NextOccurrence: next,
	}
}

func (f *fixture) putCampaign(c heraldtype.Campaign, now time.Time) (heraldtype.Campaign, bool) {
	f.t.Helper()
	out, created, err := f.s.PutCampaign(f.ctx, c, now)
	if err != nil {
		f.t.Fatalf("PutCampaign(%s): %v", c.Name, err)
	}
	return out, created
}

func (f *fixture) startRun(p store.CampaignRunStart) store.CampaignRunStarted {
	f.t.Helper()
	out, err := f.s.StartCampaignRun(f.ctx, p)
	if err != nil {
		f.t.Fatalf("StartCampaignRun(%s/%s): %v", p.Campaign, p.RunID, err)
	}
	return out
}

func (f *fixture) advance(b store.CampaignBatch) store.CampaignBatchResult {
	f.t.Helper()
	out, err := f.s.AdvanceCampaignRun(f.ctx, b)
	if err != nil {
		f.t.Fatalf("AdvanceCampaignRun(%s/%s): %v", b.Campaign, b.RunID, err)
	}
	return out
}

// batchOf is a batch of one notification per user.
func (f *fixture) batchOf(c, run string, version int64, users ...string) store.CampaignBatch {
	var ns []heraldtype.Notification
	for _, u := range users {
		ns = append(ns, f.notification(u))
	}
	p := params(ns...)
	return store.CampaignBatch{Campaign: c, RunID: run, Version: version, Cursor: users[len(users)-1],
		Enqueue: &p, Recipients: len(users), Now: at(time.Minute)}
}

func testCampaigns(t *testing.T, newStore NewStore) {
	t.Run("PutGetListDelete", func(t *testing.T) { testCampaignRows(t, newStore) })
	t.Run("StartOnce", func(t *testing.T) { testCampaignStartOnce(t, newStore) })
	t.Run("Batches", func(t *testing.T) { testCampaignBatches(t, newStore) })
	t.Run("Audience", func(t *testing.T) { testCampaignAudience(t, newStore) })
	t.Run("Prune", func(t *testing.T) { testCampaignPrune(t, newStore) })
}

func testCampaignRows(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	c := campaign("daily", at(time.Hour))
	got, created := f.putCampaign(c, base())
	if !created || got.Version != 1 || !got.CreatedAt.Equal(base()) || !got.NextAt.Equal(at(time.Hour)) {
		t.Fatalf("created = %v, campaign = %+v", created, got)
	}
	if got.Fetch == nil || got.Fetch.URL != c.Fetch.URL || got.Body != c.Body || got.Audience != c.Audience ||
		got.Schedule.Cron != "0 9 * * *" || got.Data["k"] != "v" {
		t.Fatalf("definition not kept: %+v", got)
	}
	c.Paused, c.Title = true, "New"
	upd, created := f.putCampaign(c, at(time.Minute))
	if created || upd.Version != 2 || !upd.CreatedAt.Equal(base()) || !upd.UpdatedAt.Equal(at(time.Minute)) || !upd.Paused || upd.Title != "New" {
		t.Fatalf("update: created = %v, campaign = %+v", created, upd)
	}
	if g, err := f.s.GetCampaign(f.ctx, "daily"); err != nil || g.Title != "New" {
		t.Fatalf("GetCampaign = %+v, %v", g, err)
	}
	if _, err := f.s.GetCampaign(f.ctx, "nope"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("GetCampaign(nope) = %v, want not_found", err)
	}
	for i := range 3 {
		f.putCampaign(campaign(fmt.Sprintf("c%d", i), at(time.Hour)), base())
	}
	var names []string
	cursor := ""
	for {
		cs, next, err := f.s.ListCampaigns(f.ctx, heraldtype.CampaignFilter{Cursor: cursor, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			names = append(names, c.Name)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if want := []string{"c0", "c1", "c2", "daily"}; !slices.Equal(names, want) {
		t.Fatalf("list = %v, want %v", names, want)
	}
	f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "manual-1", Occurrence: base(), Now: base()})
	if err := f.s.DeleteCampaign(f.ctx, "daily"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteCampaign(f.ctx, "daily"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("second delete = %v, want not_found", err)
	}
	if _, err := f.s.GetCampaignRun(f.ctx, "daily", "manual-1"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("a deleted campaign's run = %v, want not_found", err)
	}
	// The paused campaign is not due; the others are, by next_at.
	f.putCampaign(campaign("paused", base()), base())
	p := campaign("paused", base())
	p.Paused = true
	f.putCampaign(p, base())
	due, err := f.s.DueCampaigns(f.ctx, at(time.Hour), 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("DueCampaigns = %d campaigns, %v; want c0, c1, c2", len(due), err)
	}
	if next, ok, err := f.s.NextCampaignAt(f.ctx); err != nil || !ok || !next.Equal(at(time.Hour)) {
		t.Fatalf("NextCampaignAt = %v, %v, %v", next, ok, err)
	}
	if _, err := f.s.DueCampaigns(f.ctx, base(), 0); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("DueCampaigns(limit 0) = %v, want invalid_argument", err)
	}
}

// testCampaignStartOnce: two runners that read the same campaign start its
// due time once; the run row is the once.
func testCampaignStartOnce(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	c, _ := f.putCampaign(campaign("daily", at(time.Hour)), base())
	adv := &store.CampaignAdvance{Version: c.Version, NextAt: at(25 * time.Hour), NextOccurrence: at(25 * time.Hour)}
	start := store.CampaignRunStart{Campaign: "daily", RunID: "20260315T000000Z", Occurrence: at(time.Hour), Advance: adv, Now: at(time.Hour)}
	a := f.startRun(start)
	b := f.startRun(start)
	if !a.Started || !a.Created || !a.Advanced || b.Started || b.Advanced {
		t.Fatalf("first start %+v, second %+v: want exactly the first", a, b)
	}
	if a.Run.State != heraldtype.RunRunning || a.Run.Version != 1 || !a.Run.Occurrence.Equal(at(time.Hour)) {
		t.Fatalf("run = %+v", a.Run)
	}
	got, _ := f.s.GetCampaign(f.ctx, "daily")
	if !got.NextAt.Equal(at(25*time.Hour)) || got.LastRunID != start.RunID || got.Version != c.Version+1 {
		t.Fatalf("campaign after start = %+v", got)
	}
	// A due time the catch-up passed over moves the schedule on, no run.
	skip := f.startRun(store.CampaignRunStart{Campaign: "daily", Advance: &store.CampaignAdvance{Version: got.Version,
		NextAt: at(49 * time.Hour), NextOccurrence: at(49 * time.Hour)}, Now: at(26 * time.Hour)})
	if !skip.Advanced || skip.Started {
		t.Fatalf("advance without a run = %+v", skip)
	}
	if got, _ := f.s.GetCampaign(f.ctx, "daily"); !got.NextAt.Equal(at(49*time.Hour)) || got.LastRunID != start.RunID || !got.UpdatedAt.Equal(base()) {
		t.Fatalf("campaign after a passed-over due time = %+v", got)
	}
	running, err := f.s.RunningCampaignRuns(f.ctx, 10)
	if err != nil || len(running) != 1 || running[0].ID != start.RunID {
		t.Fatalf("RunningCampaignRuns = %+v, %v", running, err)
	}
	// A manual start of an existing run does nothing unless it restarts,
	// and a running run is not restarted.
	m := store.CampaignRunStart{Campaign: "daily", RunID: start.RunID, Occurrence: at(time.Hour), Now: at(2 * time.Hour), Restart: true}
	if r := f.startRun(m); r.Started || r.Created {
		t.Fatalf("restart of a running run = %+v", r)
	}
	if _, err := f.s.StartCampaignRun(f.ctx, store.CampaignRunStart{Campaign: "nope", RunID: "manual-x", Occurrence: base(), Now: base()}); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("a run of no campaign = %v, want not_found", err)
	}
}

// testCampaignBatches: a batch writes its recipients, notifications and
// cursor in one transaction, guarded by the run's version; a restarted
// run skips whom it reached.
func testCampaignBatches(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	for _, u := range []string{"u1", "u2", "u3"} {
		f.user(u)
		f.device(u, "d-"+u, heraldtype.PlatformAndroid)
	}
	f.putCampaign(campaign("daily", at(time.Hour)), base())
	run := f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "manual-1", Occurrence: base(), Now: base()}).Run

	b := f.batchOf("daily", "manual-1", run.Version, "u1", "u2")
	b.FetchFailed, b.LastError = 1, "reco: 500"
	r1 := f.advance(b)
	if !r1.Applied || r1.Enqueued != 2 || r1.Skipped != 0 || len(r1.Result.Notifications) != 2 {
		t.Fatalf("first batch = %+v", r1)
	}
	if r1.Run.Cursor != "u2" || r1.Run.Recipients != 2 || r1.Run.Enqueued != 2 || r1.Run.FetchFailed != 1 ||
		r1.Run.LastError != "reco: 500" || r1.Run.Version != run.Version+1 {
		t.Fatalf("run after the first batch = %+v", r1.Run)
	}
	// A stale writer (the version it saw is gone) writes nothing.
	stale := f.batchOf("daily", "manual-1", run.Version, "u3")
	if r := f.advance(stale); r.Applied {
		t.Fatalf("a stale batch applied: %+v", r)
	}
	f.noNotification(stale.Enqueue.Notifications[0].ID)
	// The last batch finishes the run.
	last := f.batchOf("daily", "manual-1", r1.Run.Version, "u3")
	last.Finish = heraldtype.RunDone
	r2 := f.advance(last)
	if !r2.Applied || r2.Run.State != heraldtype.RunDone || r2.Run.FinishedAt.IsZero() || r2.Run.Enqueued != 3 || r2.Run.LastError != "reco: 500" {
		t.Fatalf("last batch = %+v", r2)
	}
	// A finished run takes no batch.
	if r := f.advance(f.batchOf("daily", "manual-1", r2.Run.Version, "u3")); r.Applied {
		t.Fatalf("a finished run took a batch: %+v", r)
	}
	// Issue 30 item 6: the run says whom it reached, so a re-run fetches
	// content for the others alone.
	if got, err := f.s.ReachedRecipients(f.ctx, "daily", "manual-1", []string{"u1", "u3", "u9"}); err != nil ||
		len(got) != 2 || !got["u1"] || !got["u3"] {
		t.Fatalf("ReachedRecipients = %v, %v", got, err)
	}
	if got, err := f.s.ReachedRecipients(f.ctx, "daily", "manual-2", []string{"u1"}); err != nil || len(got) != 0 {
		t.Fatalf("ReachedRecipients of another run = %v, %v", got, err)
	}
	if _, err := f.s.ReachedRecipients(f.ctx, "daily", "", nil); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("ReachedRecipients without a run = %v", err)
	}
	// Restarted, it reaches nobody twice: every user is skipped. The
	// restart keeps whom the run reached and starts the new try's counts
	// and error afresh: counts are the last try's truth, not a sum.
	re := f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "manual-1", Occurrence: base(), Now: at(time.Hour), Restart: true})
	if !re.Started || re.Created || re.Run.Cursor != "" || re.Run.Restarts != 1 || re.Run.State != heraldtype.RunRunning ||
		re.Run.Enqueued != 3 || re.Run.Recipients != 0 || re.Run.FetchFailed != 0 || re.Run.LastError != "" {
		t.Fatalf("restart = %+v", re)
	}
	again := f.batchOf("daily", "manual-1", re.Run.Version, "u1", "u2")
	r3 := f.advance(again)
	if !r3.Applied || r3.Enqueued != 0 || r3.Skipped != 2 || r3.Run.Skipped != 2 || r3.Run.Enqueued != 3 || r3.Run.Recipients != 2 {
		t.Fatalf("re-run batch = %+v", r3)
	}
	// A user the runner left out as reached counts skipped with them.
	left := store.CampaignBatch{Campaign: "daily", RunID: "manual-1", Version: r3.Run.Version, Cursor: "u3",
		Recipients: 1, Skipped: 1, Finish: heraldtype.RunDone, Now: at(time.Hour)}
	r4 := f.advance(left)
	if !r4.Applied || r4.Skipped != 1 || r4.Run.Skipped != 3 || r4.Run.Recipients != 3 || r4.Run.Enqueued != 3 || r4.Run.LastError != "" {
		t.Fatalf("re-run's last batch = %+v", r4)
	}
	for _, n := range again.Enqueue.Notifications {
		f.noNotification(n.ID)
	}
	// Another run of the same campaign is a new set of recipients.
	other := f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "manual-2", Occurrence: base(), Now: at(time.Hour)}).Run
	if r := f.advance(f.batchOf("daily", "manual-2", other.Version, "u1")); r.Enqueued != 1 {
		t.Fatalf("another run = %+v", r)
	}
	runs, next, err := f.s.ListCampaignRuns(f.ctx, heraldtype.CampaignRunFilter{Campaign: "daily", Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].ID != "manual-2" || next == "" {
		t.Fatalf("ListCampaignRuns page 1 = %+v, %q, %v", runs, next, err)
	}
	runs, next, err = f.s.ListCampaignRuns(f.ctx, heraldtype.CampaignRunFilter{Campaign: "daily", Cursor: next, Limit: 1})
	if err != nil || len(runs) != 1 || runs[0].ID != "manual-1" || next != "" {
		t.Fatalf("ListCampaignRuns page 2 = %+v, %q, %v", runs, next, err)
	}
	// An unknown user fails the whole batch: nothing advances.
	bad := f.batchOf("daily", "manual-2", other.Version+1, "ghost")
	if _, err := f.s.AdvanceCampaignRun(f.ctx, bad); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("a batch to an unknown user = %v, want not_found", err)
	}
	if r, _ := f.s.GetCampaignRun(f.ctx, "daily", "manual-2"); r.Cursor != "u1" || r.Version != other.Version+1 {
		t.Fatalf("a failed batch advanced the run: %+v", r)
	}
}

// testCampaignAudience: keyset pages of all users, and of those with a
// device seen since a time.
func testCampaignAudience(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	for i := range 7 {
		u := fmt.Sprintf("u%02d", i)
		f.user(u)
		if i%2 == 0 {
			f.upsertDevice(heraldtype.Device{ID: "d" + u, UserID: u, Platform: heraldtype.PlatformAndroid, Token: "t" + u, PushOptIn: true},
				at(time.Duration(i)*time.Hour))
		}
	}
	page := func(q store.AudienceQuery) []string {
		t.Helper()
		var ids []string
		for {
			us, err := f.s.AudienceUsers(f.ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(us) == 0 {
				return ids
			}
			for _, u := range us {
				ids = append(ids, u.ID)
				if u.Timezone != "Asia/Seoul" {
					t.Fatalf("user %s zone %q", u.ID, u.Timezone)
				}
			}
			q.After = us[len(us)-1].ID
		}
	}
	if got, want := page(store.AudienceQuery{Limit: 3}), []string{"u00", "u01", "u02", "u03", "u04", "u05", "u06"}; !slices.Equal(got, want) {
		t.Fatalf("all users = %v, want %v", got, want)
	}
	if got, want := page(store.AudienceQuery{Limit: 2, ActiveSince: at(2 * time.Hour)}), []string{"u02", "u04", "u06"}; !slices.Equal(got, want) {
		t.Fatalf("active users = %v, want %v", got, want)
	}
	if _, err := f.s.AudienceUsers(f.ctx, store.AudienceQuery{}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("AudienceUsers(limit 0) = %v, want invalid_argument", err)
	}
}

// testCampaignPrune: finished runs past the cutoff go with their
// recipient records, oldest first, at most limit; running ones stay.
func testCampaignPrune(t *testing.T, newStore NewStore) {
	f := newFixture(t, newStore)
	f.user("u1")
	f.putCampaign(campaign("daily", at(time.Hour)), base())
	finish := func(id string, at time.Time) {
		run := f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: id, Occurrence: base(), Now: base()}).Run
		b := f.batchOf("daily", id, run.Version, "u1")
		b.Finish, b.Now = heraldtype.RunDone, at
		if r := f.advance(b); !r.Applied || r.Enqueued != 1 {
			t.Fatalf("finish %s: %+v", id, r)
		}
	}
	finish("r1", at(time.Hour))
	finish("r2", at(2*time.Hour))
	finish("r3", at(3*time.Hour))
	f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "r4", Occurrence: base(), Now: base()})
	n, err := f.s.PruneCampaignRuns(f.ctx, at(3*time.Hour), 1)
	if err != nil || n != 1 {
		t.Fatalf("PruneCampaignRuns(limit 1) = %d, %v", n, err)
	}
	if _, err := f.s.GetCampaignRun(f.ctx, "daily", "r1"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("the oldest run was not pruned: %v", err)
	}
	if n, err = f.s.PruneCampaignRuns(f.ctx, at(10*time.Hour), 10); err != nil || n != 2 {
		t.Fatalf("PruneCampaignRuns = %d, %v; want r2 and r3", n, err)
	}
	if _, err := f.s.GetCampaignRun(f.ctx, "daily", "r4"); err != nil {
		t.Fatalf("the running run was pruned: %v", err)
	}
	// The recipient records went with r1: running r1 again would reach u1.
	re := f.startRun(store.CampaignRunStart{Campaign: "daily", RunID: "r1", Occurrence: base(), Now: at(11 * time.Hour)})
	if r := f.advance(f.batchOf("daily", "r1", re.Run.Version, "u1")); r.Enqueued != 1 {
		t.Fatalf("recipient records survived their run: %+v", r)
	}
	if _, err := f.s.PruneCampaignRuns(f.ctx, base(), 0); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("limit 0 = %v, want invalid_argument", err)
	}
}
