package herald

// Campaigns through the Client (issue 19 item 6, S3.7): validation naming
// each field, a manual run and a re-run that reaches nobody twice, on the
// embedded store with an injected clock and the runner ticked by hand.

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/campaign"
)

func newCampaignPipeline(t *testing.T) *pipeline {
	t.Helper()
	p := newPipeline(t, func(c *Config) {
		c.Types["recommendation"] = TypeConfig{}
		c.Logger = slog.New(slog.DiscardHandler)
		c.Campaigns = CampaignConfig{Pause: -1}
		c.Callout.Allow = loopbackNets // the tests' fetch endpoints (issue 31 item 2)
	})
	// Noon in Seoul today: three hours from dailyReco's 09:00 there either
	// way, so a test that advances the clock by minutes never meets the
	// schedule's own run (one that ran near 00:00 UTC did: a scheduled run
	// reached everyone a second time, as it should).
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	now := p.clock.Now().In(seoul)
	p.clock.now = time.Date(now.Year(), now.Month(), now.Day(), 12, 0, 0, 0, seoul).UTC()
	return p
}

func dailyReco() CampaignRequest {
	return CampaignRequest{Name: "daily-reco", Type: "recommendation", Title: "Today's picks", Body: "For {{.User.ID}}",
		Schedule: heraldtype.Schedule{Cron: "0 9 * * *"}, Audience: heraldtype.Audience{ActiveWithin: heraldtype.Duration(168 * time.Hour)},
		Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
}

// Issue 19 item 9: bad input is invalid_argument naming the field.
func TestPutCampaignRefusesBadInputNamingTheField(t *testing.T) {
	p := newCampaignPipeline(t)
	cases := []struct {
		field string
		mod   func(*CampaignRequest)
	}{
		{"name", func(r *CampaignRequest) { r.Name = "Daily Reco" }},
		{"type", func(r *CampaignRequest) { r.Type = "undeclared" }},
		{"title", func(r *CampaignRequest) { r.Title = "{{.User.ID" }},
		{"body", func(r *CampaignRequest) { r.Body = "{{if}}" }},
		{"data.link", func(r *CampaignRequest) { r.Data = map[string]string{"link": "{{.Items"} }},
		{"channels", func(r *CampaignRequest) { r.Channels = []heraldtype.Channel{"pigeon"} }},
		{"schedule.cron", func(r *CampaignRequest) { r.Schedule.Cron = "61 9 * * *" }},
		{"schedule.time_zone", func(r *CampaignRequest) { r.Schedule.TimeZone = "Mars/Olympus" }},
		{"schedule.time_zone", func(r *CampaignRequest) { r.LocalTime, r.Schedule.TimeZone = true, "Asia/Seoul" }},
		{"schedule.backoff", func(r *CampaignRequest) {
			r.Schedule = heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Hour), Factor: 2, Max: heraldtype.Duration(2 * time.Hour)}}
		}},
		{"schedule.at", func(r *CampaignRequest) { r.Schedule = heraldtype.Schedule{At: p.clock.Now().Add(-time.Hour)} }},
		{"audience", func(r *CampaignRequest) { r.Audience = heraldtype.Audience{} }},
		{"audience", func(r *CampaignRequest) { r.Audience.All = true }},
		{"audience.active_within", func(r *CampaignRequest) { r.Audience.ActiveWithin = heraldtype.Duration(time.Minute) }},
		{"fetch.url", func(r *CampaignRequest) { r.Fetch = &heraldtype.CampaignFetch{URL: "file:///etc/passwd"} }},
		{"fetch.timeout", func(r *CampaignRequest) {
			r.Fetch = &heraldtype.CampaignFetch{URL: "http://reco.local/v1", Timeout: heraldtype.Duration(time.Hour)}
		}},
		{"fetch.concurrency", func(r *CampaignRequest) {
			r.Fetch = &heraldtype.CampaignFetch{URL: "http://reco.local/v1", Concurrency: 1000}
		}},
		{"fetch.batch_size", func(r *CampaignRequest) {
			r.Fetch = &heraldtype.CampaignFetch{URL: "http://reco.local/v1", BatchSize: -1}
		}},
	}
	for _, c := range cases {
		r := dailyReco()
		c.mod(&r)
		_, _, err := p.client.PutCampaign(p.ctx, r)
		var he *heraldtype.Error
		if !errors.As(err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field {
			t.Errorf("%s: got %v, want invalid_argument on %s", c.field, err, c.field)
		}
	}
	if _, err := p.client.GetCampaign(p.ctx, "daily-reco"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("a refused campaign was stored: %v", err)
	}
}

// S3.7: a manual run reaches the audience now; a re-run of it reaches
// nobody twice; a run still running cannot be asked for again.
func TestManualRunAndReRunSendNobodyTwice(t *testing.T) {
	p := newCampaignPipeline(t)
	for _, u := range []string{"u1", "u2", "u3"} {
		p.device(u, "d-"+u, "tok-"+u)
	}
	c, created, err := p.client.PutCampaign(p.ctx, dailyReco())
	if err != nil || !created || c.NextAt.IsZero() || c.Schedule.Cron != "0 9 * * *" {
		t.Fatalf("put: %+v %v %v", c, created, err)
	}
	run, err := p.client.RunCampaign(p.ctx, "daily-reco", "")
	if err != nil || !campaign.IsManual(run.ID) || run.State != heraldtype.RunRunning {
		t.Fatalf("run: %+v %v", run, err)
	}
	if _, err := p.client.RunCampaign(p.ctx, "daily-reco", run.ID); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT {
		t.Fatalf("re-run of a running run = %v, want conflict", err)
	}
	if err := p.client.campaigns.Tick(p.ctx); err != nil {
		t.Fatal(err)
	}
	got, err := p.client.GetCampaignRun(p.ctx, "daily-reco", run.ID)
	if err != nil || got.State != heraldtype.RunDone || got.Enqueued != 3 {
		t.Fatalf("after the tick: %+v %v", got, err)
	}
	if sent := p.work(); sent != 3 {
		t.Fatalf("sent %d, want 3", sent)
	}
	// Issue 19 item 8: the timeline names the campaign and the run.
	hist, err := p.client.ListHistory(p.ctx, HistoryFilter{UserID: "u1", Limit: 5})
	if err != nil || len(hist.Notifications) != 1 {
		t.Fatalf("u1's history: %+v %v", hist, err)
	}
	if n, _ := p.client.GetNotification(p.ctx, hist.Notifications[0].NotificationID); n.Source == nil ||
		*n.Source != (heraldtype.Source{Kind: heraldtype.SourceCampaign, ID: run.ID, Name: "daily-reco", Occurrence: run.ID}) {
		t.Fatalf("a campaign notification's source: %+v", n.Source)
	}
	if _, err := p.client.RunCampaign(p.ctx, "daily-reco", run.ID); err != nil {
		t.Fatal(err)
	}
	p.clock.Advance(campaign.DefaultLockAtLeast)
	if err := p.client.campaigns.Tick(p.ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = p.client.GetCampaignRun(p.ctx, "daily-reco", run.ID)
	if got.State != heraldtype.RunDone || got.Enqueued != 3 || got.Skipped != 3 || got.Restarts != 1 {
		t.Fatalf("after the re-run: %+v", got)
	}
	if sent := p.work(); sent != 0 {
		t.Fatalf("the re-run sent %d", sent)
	}
	if n := len(p.em.Messages()); n != 3 {
		t.Fatalf("the emulator got %d messages, want 3", n)
	}
	if msg := string(p.em.Messages()[0].Message); !strings.Contains(msg, `"For u`) {
		t.Fatalf("rendered message %s", msg)
	}
	page, err := p.client.ListCampaignRuns(p.ctx, CampaignRunFilter{Campaign: "daily-reco"})
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("runs: %+v %v", page, err)
	}
	if _, err := p.client.RunCampaign(p.ctx, "daily-reco", "manual-nope"); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("re-run of no run = %v, want not_found", err)
	}
	// Retention: the finished run goes, with its recipient records.
	p.clock.Advance(31 * 24 * time.Hour)
	if res, err := p.client.RunMaintenance(p.ctx); err != nil || res.CampaignRuns != 1 {
		t.Fatalf("RunMaintenance = %+v, %v; want one campaign run pruned", res, err)
	}
	if _, err := p.client.GetCampaignRun(p.ctx, "daily-reco", run.ID); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("pruned run = %v, want not_found", err)
	}
	if err := p.client.DeleteCampaign(p.ctx, "daily-reco"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.RunCampaign(p.ctx, "daily-reco", ""); heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
		t.Fatalf("run of a deleted campaign = %v, want not_found", err)
	}
}

// Seed 003's daily recommendations end to end (S3.7): at 09:00 Seoul the
// runner asks the recommendation API for each batch's users, renders three
// items per user, and the pipeline delivers them to the FCM emulator —
// once per user; a user the API has nothing for gets nothing and is
// counted.
func TestSeedDailyRecommendations(t *testing.T) {
	p := newCampaignPipeline(t)
	// 08:59:00 in Seoul, today.
	seoul, _ := time.LoadLocation("Asia/Seoul")
	now := p.clock.Now().In(seoul)
	p.clock.now = time.Date(now.Year(), now.Month(), now.Day(), 8, 59, 0, 0, seoul).UTC()
	for _, u := range []string{"u1", "u2", "u3"} {
		p.device(u, "d-"+u, "tok-"+u)
	}
	var calls atomic.Int64
	reco := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			UserIDs []string `json:"user_ids"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		users := map[string]any{}
		for _, u := range req.UserIDs {
			if u == "u3" {
				continue // nothing to recommend
			}
			users[u] = map[string]any{"items": []any{
				map[string]any{"id": "p1", "name": "Kettle"}, map[string]any{"id": "p2", "name": "Mug"},
				map[string]any{"id": "p3", "name": "Tea"}}, "fields": map[string]any{"strategy": "similar"}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"users": users})
	}))
	defer reco.Close()
	req := dailyReco()
	req.Fetch = &heraldtype.CampaignFetch{URL: reco.URL}
	req.Title = "오늘의 추천 상품"
	req.Body = "{{(index .Items 0).name}}, {{(index .Items 1).name}}, {{(index .Items 2).name}}을(를) 추천드려요!"
	req.Data = map[string]string{"strategy": "{{.Fields.strategy}}", "productIds": "{{range $i, $it := .Items}}{{if $i}},{{end}}{{$it.id}}{{end}}"}
	if _, _, err := p.client.PutCampaign(p.ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := p.client.campaigns.Tick(p.ctx); err != nil || calls.Load() != 0 {
		t.Fatalf("08:59: tick %v, %d calls", err, calls.Load())
	}
	p.clock.Advance(time.Minute)
	if err := p.client.campaigns.Tick(p.ctx); err != nil {
		t.Fatal(err)
	}
	page, err := p.client.ListCampaignRuns(p.ctx, CampaignRunFilter{Campaign: "daily-reco"})
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("runs: %+v %v", page, err)
	}
	run := page.Runs[0]
	if run.State != heraldtype.RunDone || run.Enqueued != 2 || run.FetchFailed != 1 || !strings.Contains(run.LastError, `"u3"`) {
		t.Fatalf("run: %+v", run)
	}
	if sent := p.work(); sent != 2 {
		t.Fatalf("sent %d, want 2", sent)
	}
	msgs := p.em.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages at the emulator", len(msgs))
	}
	for _, m := range msgs {
		body := string(m.Message)
		if !strings.Contains(body, "Kettle, Mug, Tea을(를) 추천드려요!") || !strings.Contains(body, `"productIds":"p1,p2,p3"`) ||
			!strings.Contains(body, `"strategy":"similar"`) {
			t.Fatalf("message %s", body)
		}
	}
	// The next tick, the same day: nothing more.
	if err := p.client.campaigns.Tick(p.ctx); err != nil || p.work() != 0 {
		t.Fatalf("a second tick sent again (%v)", err)
	}
}
