package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// Issue 20 item 5: the dead events are listed and read, replayed one by
// one or in bulk (with a dry-run count), and need their scopes.
func TestDeadEventsAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := t.Context()
	ids := map[string]int64{}
	for i, payload := range []string{`{"user_id":"u1","subject":"product:42","kind":"VIEW"}`, ``} {
		d := heraldtype.DeadEvent{Topic: "herald.interests", Partition: 0, Offset: int64(i), Kind: herald.RecordInterests,
			Value: []byte("x"), Error: "user not found", Attempts: 4}
		if payload != "" {
			d.Payload = []byte(payload)
		}
		id, err := e.client.RecordDeadEvent(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		ids[fmt.Sprint(i)] = id
	}
	var page herald.DeadEventPage
	e.do("GET", "/v1/events/dead?topic=herald.interests", nil).expect(t, http.StatusOK, &page)
	if len(page.DeadEvents) != 2 || page.DeadEvents[0].Attempts != 4 {
		t.Fatalf("list: %+v", page)
	}
	var d herald.DeadEvent
	e.do("GET", fmt.Sprintf("/v1/events/dead/%d", ids["0"]), nil).expect(t, http.StatusOK, &d)
	var bulk herald.DeadEventReplay
	e.do("POST", "/v1/events/dead/replay", map[string]any{"dry_run": true}).expect(t, http.StatusOK, &bulk)
	if bulk.Matched != 2 || bulk.Skipped != 1 || bulk.Replayed != 0 {
		t.Fatalf("dry run: %+v", bulk)
	}
	e.do("POST", fmt.Sprintf("/v1/events/dead/%d/replay", ids["0"]), nil).expect(t, http.StatusOK, &d)
	if d.ReplayedAt == nil {
		t.Fatalf("replayed: %+v", d)
	}
	e.do("POST", fmt.Sprintf("/v1/events/dead/%d/replay", ids["1"]), nil).expect(t, http.StatusConflict, nil)
	e.do("GET", "/v1/events/dead/999999", nil).expect(t, http.StatusNotFound, nil)
	e.do("GET", "/v1/events/dead/abc", nil).expect(t, http.StatusBadRequest, nil)
	e.do("GET", "/v1/events/dead?replayed=maybe", nil).expect(t, http.StatusBadRequest, nil)
	// By when Herald gave up on them (issue 34 item 2).
	created := page.DeadEvents[0].CreatedAt
	q := func(k string, t time.Time) string { return k + "=" + url.QueryEscape(t.Format(time.RFC3339Nano)) }
	e.do("GET", "/v1/events/dead?"+q("from", created.Add(-time.Minute)), nil).expect(t, http.StatusOK, &page)
	if len(page.DeadEvents) != 2 {
		t.Fatalf("since a minute before: %+v", page)
	}
	e.do("GET", "/v1/events/dead?"+q("to", created.Add(-time.Minute)), nil).expect(t, http.StatusOK, &page)
	if len(page.DeadEvents) != 0 {
		t.Fatalf("before a minute before: %+v", page)
	}
	if r := e.do("GET", "/v1/events/dead?from=yesterday", nil); r.status != http.StatusBadRequest || r.errorBody(t).Field != "from" {
		t.Fatalf("a bad from: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/events/dead?"+q("from", created)+"&"+q("to", created), nil); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "from" {
		t.Fatalf("from not before to: %d %s", r.status, r.body)
	}
	e.do("POST", "/v1/events/dead/replay", map[string]any{"dry_run": true, "to": created.Add(-time.Minute).Format(time.RFC3339Nano)}).
		expect(t, http.StatusOK, &bulk)
	if bulk.Matched != 0 {
		t.Fatalf("a dry run of none: %+v", bulk)
	}
	if r := e.do("POST", "/v1/events/dead/replay", map[string]any{"dry_run": true, "from": "soon"}); r.status != http.StatusBadRequest ||
		r.errorBody(t).Field != "from" {
		t.Fatalf("a replay's bad from: %d %s", r.status, r.body)
	}

	_, key, err := e.keys.Create(ctx, "notify-only", []auth.Scope{auth.ScopeNotificationsWrite})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/events/dead"}, {"GET", "/v1/events/dead/1"}, {"POST", "/v1/events/dead/1/replay"}, {"POST", "/v1/events/dead/replay"},
	} {
		if res := e.do(c.method, c.path, map[string]any{}, "Authorization", "Bearer "+key); res.status != http.StatusForbidden {
			t.Fatalf("%s %s with notifications:write: %d", c.method, c.path, res.status)
		}
	}
}
