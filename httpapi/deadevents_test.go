package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

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
