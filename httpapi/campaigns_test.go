package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
)

// Issue 19 items 6, 9: PUT creates (201) then replaces (200), GET and the
// list read, POST …/run starts a manual run (202) and a re-run of it,
// …/runs lists them, DELETE removes (204, then 404); bad input is a 400
// naming the field.
func TestCampaignsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seedUser("u1")
	e.do("PUT", "/v1/types/recommendation", map[string]any{"channels": []string{"in_app"}}).expect(t, http.StatusOK, nil)
	// The README's example: the fetched items in the body and the data.
	body := map[string]any{"type": "recommendation", "title": "Your picks for today",
		"body":     "{{(index .Items 0).name}}, {{(index .Items 1).name}} and more",
		"data":     map[string]any{"product_id": "{{(index .Items 0).id}}"},
		"schedule": map[string]any{"cron": "0 9 * * *", "time_zone": "Asia/Seoul"},
		"audience": map[string]any{"active_within": "168h"},
		"fetch":    map[string]any{"url": "http://reco.internal/v1/recommendations", "timeout": "5s", "concurrency": 4}}
	var c herald.Campaign
	e.do("PUT", "/v1/campaigns/daily-reco", body).expect(t, http.StatusCreated, &c)
	if c.Name != "daily-reco" || c.NextAt.IsZero() || c.Fetch == nil || c.Fetch.Concurrency != 4 {
		t.Fatalf("created: %+v", c)
	}
	e.do("PUT", "/v1/campaigns/daily-reco", body).expect(t, http.StatusOK, &c)
	e.do("GET", "/v1/campaigns/daily-reco", nil).expect(t, http.StatusOK, &c)
	var page herald.CampaignPage
	e.do("GET", "/v1/campaigns?limit=10", nil).expect(t, http.StatusOK, &page)
	if len(page.Campaigns) != 1 {
		t.Fatalf("list: %+v", page)
	}
	var run herald.CampaignRun
	e.do("POST", "/v1/campaigns/daily-reco/run", nil).expect(t, http.StatusAccepted, &run)
	if run.State != "running" || run.Campaign != "daily-reco" {
		t.Fatalf("run: %+v", run)
	}
	e.do("POST", "/v1/campaigns/daily-reco/run", map[string]any{"run": run.ID}).expect(t, http.StatusConflict, nil)
	e.do("POST", "/v1/campaigns/daily-reco/run", map[string]any{"run": "manual-none"}).expect(t, http.StatusNotFound, nil)
	var runs herald.CampaignRunPage
	e.do("GET", "/v1/campaigns/daily-reco/runs", nil).expect(t, http.StatusOK, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != run.ID {
		t.Fatalf("runs: %+v", runs)
	}
	e.do("GET", "/v1/campaigns/daily-reco/runs?state=done", nil).expect(t, http.StatusBadRequest, nil)
	e.do("DELETE", "/v1/campaigns/daily-reco", nil).expect(t, http.StatusNoContent, nil)
	e.do("GET", "/v1/campaigns/daily-reco", nil).expect(t, http.StatusNotFound, nil)
	e.do("POST", "/v1/campaigns/daily-reco/run", nil).expect(t, http.StatusNotFound, nil)

	with := func(k string, v any) map[string]any {
		b := map[string]any{}
		for k, v := range body {
			b[k] = v
		}
		b[k] = v
		return b
	}
	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"template":     {with("body", "{{.User.ID"), "body"},
		"cron":         {with("schedule", map[string]any{"cron": "0 25 * * *"}), "schedule.cron"},
		"zone":         {with("schedule", map[string]any{"cron": "0 9 * * *", "time_zone": "Moon/Base"}), "schedule.time_zone"},
		"audience":     {with("audience", map[string]any{"active_within": "soon"}), "audience.active_within"},
		"fetch url":    {with("fetch", map[string]any{"url": "ftp://reco"}), "fetch.url"},
		"unknown type": {with("type", "nope"), "type"},
		"unknown key":  {with("colour", "red"), "colour"},
	} {
		res := e.do("PUT", "/v1/campaigns/bad", tc.body)
		if res.status != http.StatusBadRequest {
			t.Fatalf("%s: status %d %s", name, res.status, res.body)
		}
		if eb := res.errorBody(t); eb.Field != tc.field {
			t.Fatalf("%s: field %q, want %q (%s)", name, eb.Field, tc.field, res.body)
		}
	}
}

// The campaign endpoints need their own scopes.
func TestCampaignsScopes(t *testing.T) {
	e := newEnv(t, envOptions{})
	_, key, err := e.keys.Create(t.Context(), "reminders-only", []auth.Scope{auth.ScopeRemindersWrite, auth.ScopeRemindersRead})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/v1/campaigns/c"}, {"GET", "/v1/campaigns/c"}, {"DELETE", "/v1/campaigns/c"},
		{"GET", "/v1/campaigns"}, {"POST", "/v1/campaigns/c/run"}, {"GET", "/v1/campaigns/c/runs"},
	} {
		if r := e.do(c.method, c.path, nil, "Authorization", "Bearer "+key); r.status != http.StatusForbidden {
			t.Errorf("%s %s with a reminders key: %d, want 403", c.method, c.path, r.status)
		}
	}
}
