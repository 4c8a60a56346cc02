package httpapi_test

import (
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// A user token reads and changes its own user's preferences (S3.11).
func TestPreferencesRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	alice := "Bearer " + userToken(t, "alice")
	body := map[string]any{
		"types":              map[string]any{"promo": map[string]any{"disabled": true}},
		"opted_out_channels": []string{"sms"},
		"quiet_hours":        map[string]string{"start": "22:00", "end": "08:00"},
		"daily_cap":          3,
	}
	var p herald.Preferences
	e.do("PUT", "/v1/users/alice/preferences", body, "Authorization", alice).expect(t, 200, &p)
	if !p.Types["promo"].Disabled || p.DailyCap != 3 || p.Timezone != "Asia/Seoul" || p.QuietHours.Start != "22:00" {
		t.Fatalf("PUT answered %+v", p)
	}
	var got herald.Preferences
	e.do("GET", "/v1/users/alice/preferences", nil, "Authorization", alice).expect(t, 200, &got)
	if !got.Types["promo"].Disabled || got.OptedOutChannels[0] != heraldtype.ChannelSMS {
		t.Fatalf("GET answered %+v", got)
	}
	r := e.do("PUT", "/v1/users/alice/preferences", map[string]any{"quiet_hours": map[string]string{"start": "22:00", "end": "22:00"}})
	if r.status != 400 || r.errorBody(t).Field != "quiet_hours" {
		t.Fatalf("an empty quiet window: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/users/nobody/preferences", nil); r.status != 404 {
		t.Fatalf("preferences of a missing user: %d", r.status)
	}
	// Issue 22: in_app is opted out like any channel, for every type or
	// per type.
	e.do("PUT", "/v1/users/alice/preferences", map[string]any{
		"types":              map[string]any{"promo": map[string]any{"channels": []string{"push"}}},
		"opted_out_channels": []string{"in_app"},
	}, "Authorization", alice).expect(t, 200, &p)
	if p.OptedOutChannels[0] != heraldtype.ChannelInApp || p.Types["promo"].Channels[0] != heraldtype.ChannelPush {
		t.Fatalf("in_app opt-out: PUT answered %+v", p)
	}
}

func TestTypeRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	var typ herald.NotificationType
	e.do("PUT", "/v1/types/price_drop", map[string]any{"dedupe_window": "2h", "counts_toward_cap": true}).expect(t, 200, &typ)
	if typ.DedupeWindow != "2h0m0s" || typ.CountsTowardCap == nil || !*typ.CountsTowardCap || typ.Source != herald.TypeSourceAPI {
		t.Fatalf("PUT answered %+v", typ)
	}
	e.do("GET", "/v1/types/anything", nil).expect(t, 200, &typ)
	if typ.Source != herald.TypeSourceDefault || typ.CountsTowardCap != nil {
		t.Fatalf("an undeclared type: %+v", typ)
	}
	var list struct{ Types []herald.NotificationType }
	e.do("GET", "/v1/types", nil).expect(t, 200, &list)
	if len(list.Types) != 1 || list.Types[0].Name != "price_drop" {
		t.Fatalf("GET /v1/types = %+v", list)
	}
	if r := e.do("PUT", "/v1/types/x", map[string]any{"guarantee": "exactly_once"}); r.status != 400 {
		t.Fatalf("a bad guarantee: %d", r.status)
	}
}

// The history lists each notification's outcome (S3.9).
func TestHistoryRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{userTokens: userTokens(t)})
	e.seedUser("alice")
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "promo", "title": "x"}).expect(t, 202, nil)
	var page herald.HistoryPage
	e.do("GET", "/v1/users/alice/notifications", nil, "Authorization", "Bearer "+userToken(t, "alice")).expect(t, 200, &page)
	if len(page.Notifications) != 1 || page.Notifications[0].Status != "PENDING" {
		t.Fatalf("alice's history = %+v", page)
	}
	e.do("GET", "/v1/notifications?type=promo&status=pending&limit=10", nil).expect(t, 200, &page)
	if len(page.Notifications) != 1 {
		t.Fatalf("filtered history = %+v", page)
	}
	e.do("GET", "/v1/notifications?status=SENT", nil).expect(t, 200, &page)
	if len(page.Notifications) != 0 {
		t.Fatalf("SENT history = %+v", page)
	}
	for _, q := range []string{"?status=LOST", "?sort=asc", "?limit=0", "?from=yesterday", "?cursor=zzz"} {
		if r := e.do("GET", "/v1/notifications"+q, nil); r.status != 400 {
			t.Errorf("GET /v1/notifications%s: %d, want 400", q, r.status)
		}
	}
}
