package httpapi_test

import (
	"encoding/json"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// clock is a settable clock for the Client.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// One truth about a notification's status (issue 22 item 1, S3.9): the
// inbox has it at once, the phone waits for quiet hours to end. The
// detail and the history say the same — DEFERRED, with in_app SENT and
// push DEFERRED — and ?status=DEFERRED finds it; when quiet hours end,
// both say SENT.
func TestStatusOneTruthDetailAndHistory(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 14, 14, 0, 0, 0, time.UTC)} // 23:00 in Seoul
	e := newEnv(t, envOptions{workers: true, now: clk.Now})
	e.seedUser("alice")
	e.do("PUT", "/v1/users/alice/preferences", map[string]any{
		"quiet_hours": map[string]string{"start": "22:00", "end": "08:00"},
	}).expect(t, 200, nil)
	var trig struct{ ID string }
	e.do("POST", "/v1/notifications", map[string]any{"user_id": "alice", "type": "promo", "title": "Sale",
		"channels": []string{"push", "in_app"}}).expect(t, 202, &trig)

	var st herald.NotificationStatus
	waitFor(t, "the push to be deferred", func() bool {
		e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
		for _, d := range st.Deliveries {
			if d.Channel == heraldtype.ChannelPush && d.LastErrorCode == heraldtype.CodeQuietHours {
				return true
			}
		}
		return false
	})
	type chs = map[heraldtype.Channel]heraldtype.HistoryStatus
	deferred := chs{heraldtype.ChannelPush: heraldtype.HistoryDeferred, heraldtype.ChannelInApp: heraldtype.HistorySent}
	if st.Status != heraldtype.HistoryDeferred || st.Reason != heraldtype.CodeQuietHours || !maps.Equal(st.ChannelStatus, deferred) {
		t.Fatalf("detail = %s %q %v, want DEFERRED quiet_hours %v", st.Status, st.Reason, st.ChannelStatus, deferred)
	}
	// The wire form: upper case, per channel.
	var raw map[string]json.RawMessage
	e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &raw)
	if string(raw["status"]) != `"DEFERRED"` || string(raw["channel_status"]) != `{"in_app":"SENT","push":"DEFERRED"}` {
		t.Fatalf("detail JSON status %s, channel_status %s", raw["status"], raw["channel_status"])
	}

	list := func(query string) []herald.HistoryEntry {
		t.Helper()
		var page herald.HistoryPage
		e.do("GET", "/v1/notifications"+query, nil).expect(t, 200, &page)
		return page.Notifications
	}
	for _, q := range []string{"?status=DEFERRED", "?status=deferred", "", "?status=PENDING&limit=1"} {
		es := list(q)
		if q == "?status=PENDING&limit=1" {
			if len(es) != 0 {
				t.Errorf("PENDING lists %+v", es)
			}
			continue
		}
		if len(es) != 1 || es[0].NotificationID != trig.ID || es[0].Status != st.Status || es[0].Reason != st.Reason ||
			!maps.Equal(es[0].ChannelStatus, st.ChannelStatus) {
			t.Fatalf("GET /v1/notifications%s = %+v; the detail says %s %q %v", q, es, st.Status, st.Reason, st.ChannelStatus)
		}
	}
	if es := list("?status=SENT"); len(es) != 0 {
		t.Fatalf("SENT lists %+v while the push waits for quiet hours", es)
	}

	clk.set(time.Date(2026, 3, 14, 23, 0, 0, 0, time.UTC)) // 08:00 in Seoul
	waitFor(t, "the push to be sent at the end of quiet hours", func() bool {
		e.do("GET", "/v1/notifications/"+trig.ID, nil).expect(t, 200, &st)
		return st.Status == heraldtype.HistorySent
	})
	sent := chs{heraldtype.ChannelPush: heraldtype.HistorySent, heraldtype.ChannelInApp: heraldtype.HistorySent}
	if es := list("?status=SENT"); len(es) != 1 || !maps.Equal(es[0].ChannelStatus, sent) || !maps.Equal(st.ChannelStatus, sent) {
		t.Fatalf("after quiet hours: list %+v, detail %v", es, st.ChannelStatus)
	}
}
