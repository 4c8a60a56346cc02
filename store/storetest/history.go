package storetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// testHistory covers ListHistory (S3.9): each notification's outcome and
// reason, its filters and its cursor.
func testHistory(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	for _, u := range []string{"u1", "u2", "u3"} {
		f.user(u)
	}
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	f.device("u2", "d2", heraldtype.PlatformIOS)
	mk := func(i int, user, typ string) heraldtype.Notification {
		n := f.notification(user)
		n.Type, n.CreatedAt = typ, at(time.Duration(i)*time.Minute)
		return n
	}
	ns := []heraldtype.Notification{mk(1, "u1", "promo"), mk(2, "u1", "promo"), mk(3, "u1", "order"),
		mk(4, "u2", "promo"), mk(5, "u2", "order")}
	f.enqueue(params(ns...))
	jobs := map[string]heraldtype.Job{}
	for _, j := range f.claim("w", base(), 10) {
		jobs[j.Delivery.NotificationID] = j
	}
	now := at(10 * time.Minute)
	sent := outcome(jobs[ns[0].ID], store.Sent{}, now)
	limited := outcome(jobs[ns[1].ID], store.RateLimited{ErrorCode: "duplicate", Error: "a duplicate"}, now)
	opted := outcome(jobs[ns[2].ID], store.OptedOut{ErrorCode: "type_disabled", Error: "turned off"}, now)
	deferred := outcome(jobs[ns[3].ID], store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: at(8 * time.Hour),
		ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours"}, now)
	dead := outcome(jobs[ns[4].ID], store.Dead{Failure: store.Failure{ErrorCode: "INVALID_ARGUMENT", Error: "bad request"}}, now)
	f.complete(5, sent, limited, opted, deferred, dead)
	pending, orphan := mk(6, "u1", "order"), mk(7, "u3", "order")
	// A notification something other than a trigger made shows its source.
	pending.Source = &heraldtype.Source{Kind: heraldtype.SourceDigest, ID: "g1", Count: 3}
	f.enqueue(params(pending, orphan))

	list := func(filter heraldtype.HistoryFilter) []heraldtype.HistoryEntry {
		t.Helper()
		es, _, err := f.s.ListHistory(f.ctx, filter, 0)
		if err != nil {
			t.Fatalf("ListHistory(%+v): %v", filter, err)
		}
		return es
	}
	all := list(heraldtype.HistoryFilter{})
	want := []struct {
		id     string
		status heraldtype.HistoryStatus
		reason string
	}{
		{orphan.ID, heraldtype.HistoryFailed, "no_deliveries"},
		{pending.ID, heraldtype.HistoryPending, ""},
		{ns[4].ID, heraldtype.HistoryFailed, "INVALID_ARGUMENT"},
		{ns[3].ID, heraldtype.HistoryDeferred, heraldtype.CodeQuietHours},
		{ns[2].ID, heraldtype.HistoryOptedOut, "type_disabled"},
		{ns[1].ID, heraldtype.HistoryRateLimited, "duplicate"},
		{ns[0].ID, heraldtype.HistorySent, ""},
	}
	if len(all) != len(want) {
		t.Fatalf("history has %d entries, want %d: %+v", len(all), len(want), all)
	}
	for i, w := range want {
		e := all[i]
		if e.NotificationID != w.id || e.Status != w.status || e.Reason != w.reason {
			t.Fatalf("entry %d = %s %s %q, want %s %s %q", i, e.NotificationID, e.Status, e.Reason, w.id, w.status, w.reason)
		}
	}
	if e := all[6]; e.UserID != "u1" || e.Type != "promo" || e.Title != "Hello" || e.Deliveries[heraldtype.StateSent] != 1 {
		t.Fatalf("sent entry = %+v", e)
	}
	wantTime(t, "created_at", all[6].CreatedAt, at(time.Minute))
	if src := all[1].Source; src == nil || *src != *pending.Source || all[0].Source != nil {
		t.Fatalf("sources = %+v, %+v; want the digest's and none", src, all[0].Source)
	}

	idsOf := func(es []heraldtype.HistoryEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.NotificationID)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		filter heraldtype.HistoryFilter
		want   []string
	}{
		{"user", heraldtype.HistoryFilter{UserID: "u2"}, []string{ns[4].ID, ns[3].ID}},
		{"type", heraldtype.HistoryFilter{Type: "promo"}, []string{ns[3].ID, ns[1].ID, ns[0].ID}},
		{"status", heraldtype.HistoryFilter{Status: heraldtype.HistoryFailed}, []string{orphan.ID, ns[4].ID}},
		{"user and status", heraldtype.HistoryFilter{UserID: "u1", Status: heraldtype.HistoryRateLimited}, []string{ns[1].ID}},
		{"time", heraldtype.HistoryFilter{From: at(2 * time.Minute), To: at(4 * time.Minute)}, []string{ns[2].ID, ns[1].ID}},
	} {
		if got := idsOf(list(c.filter)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	// Pages of two walk the whole history, in order, once.
	var walked []string
	cursor := ""
	for range 10 {
		es, next, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 2, Cursor: cursor}, 0)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, idsOf(es)...)
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(walked, idsOf(all)) {
		t.Fatalf("paged walk = %v, want %v", walked, idsOf(all))
	}

	_, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Cursor: "not-a-cursor"}, 0)
	wantCode(t, err, heraldtype.EINVALID)
	_, _, err = f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Status: "LOST"}, 0)
	wantCode(t, err, heraldtype.EINVALID)
}

// testHistoryRules covers the precedence of the statuses when a
// notification's deliveries disagree, the deliveries that are final at
// enqueue (skipped, in_app), and each channel's status: the rule of
// store/rules.StatusRules (issue 22 item 1, S3.9). An in_app delivery is
// sent when written, so a notification whose push waits for quiet hours
// is DEFERRED, found by the DEFERRED filter, its in_app channel SENT.
func testHistoryRules(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.contact("u1", "+15550001", "")
	f.device("u1", "a1", heraldtype.PlatformAndroid)
	f.device("u1", "a2", heraldtype.PlatformAndroid)
	noEmail := f.on("u1", heraldtype.ChannelEmail)
	inApp := f.on("u1", heraldtype.ChannelInApp, heraldtype.ChannelEmail)
	sentAndDead := f.on("u1", heraldtype.ChannelPush)
	limitedAndOpted := f.on("u1", heraldtype.ChannelPush)
	pendingAndLimited := f.on("u1", heraldtype.ChannelPush)
	deadAndSkipped := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelEmail)
	inAppDeferred := f.on("u1", heraldtype.ChannelPush, heraldtype.ChannelInApp)
	for i, n := range []*heraldtype.Notification{&noEmail, &inApp, &sentAndDead, &limitedAndOpted, &pendingAndLimited, &deadAndSkipped, &inAppDeferred} {
		n.CreatedAt = at(time.Duration(i) * time.Minute)
	}
	f.enqueue(channelParams(noEmail, inApp, sentAndDead, limitedAndOpted, pendingAndLimited, deadAndSkipped, inAppDeferred))
	jobs := map[string][]heraldtype.Job{}
	for _, j := range f.claim("w", base(), 20) {
		jobs[j.Delivery.NotificationID] = append(jobs[j.Delivery.NotificationID], j)
	}
	now := at(10 * time.Minute)
	dead := store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED", Error: "UNREGISTERED"}}
	quiet := store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: at(8 * time.Hour),
		ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours"}
	f.complete(10,
		outcome(jobs[sentAndDead.ID][0], store.Sent{}, now),
		outcome(jobs[sentAndDead.ID][1], dead, now),
		outcome(jobs[limitedAndOpted.ID][0], store.OptedOut{ErrorCode: "channel_disabled", Error: "channel_disabled"}, now),
		outcome(jobs[limitedAndOpted.ID][1], store.RateLimited{ErrorCode: "daily_cap", Error: "daily_cap"}, now),
		outcome(jobs[pendingAndLimited.ID][0], store.Released{}, now),
		outcome(jobs[pendingAndLimited.ID][1], store.RateLimited{ErrorCode: "duplicate", Error: "duplicate"}, now),
		outcome(jobs[deadAndSkipped.ID][0], dead, now),
		outcome(jobs[deadAndSkipped.ID][1], dead, now),
		outcome(jobs[inAppDeferred.ID][0], quiet, now),
		outcome(jobs[inAppDeferred.ID][1], quiet, now),
	)
	es, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	type chs = map[heraldtype.Channel]heraldtype.HistoryStatus
	const (
		push, email, inAppCh = heraldtype.ChannelPush, heraldtype.ChannelEmail, heraldtype.ChannelInApp
	)
	want := []struct {
		id     string
		status heraldtype.HistoryStatus
		reason string
		perCh  chs
	}{
		{inAppDeferred.ID, heraldtype.HistoryDeferred, heraldtype.CodeQuietHours, chs{push: heraldtype.HistoryDeferred, inAppCh: heraldtype.HistorySent}},
		// The greatest code of the failed deliveries: no_address sorts
		// after UNREGISTERED.
		{deadAndSkipped.ID, heraldtype.HistoryFailed, store.CodeNoAddress, chs{push: heraldtype.HistoryFailed, email: heraldtype.HistoryFailed}},
		{pendingAndLimited.ID, heraldtype.HistoryPending, "", chs{push: heraldtype.HistoryPending}},
		{limitedAndOpted.ID, heraldtype.HistoryRateLimited, "daily_cap", chs{push: heraldtype.HistoryRateLimited}},
		{sentAndDead.ID, heraldtype.HistoryPartiallySent, "UNREGISTERED", chs{push: heraldtype.HistoryPartiallySent}},
		// A skipped sibling is a decision, not a failure of the send.
		{inApp.ID, heraldtype.HistorySent, "", chs{inAppCh: heraldtype.HistorySent, email: heraldtype.HistoryFailed}},
		{noEmail.ID, heraldtype.HistoryFailed, store.CodeNoAddress, chs{email: heraldtype.HistoryFailed}},
	}
	if len(es) != len(want) {
		t.Fatalf("history has %d entries, want %d: %+v", len(es), len(want), es)
	}
	for i, w := range want {
		e := es[i]
		if e.NotificationID != w.id || e.Status != w.status || e.Reason != w.reason || !maps.Equal(e.ChannelStatus, w.perCh) {
			t.Errorf("entry %d = %s %s %q %v, want %s %s %q %v", i, e.NotificationID, e.Status, e.Reason, e.ChannelStatus,
				w.id, w.status, w.reason, w.perCh)
		}
		// The list and the rule over the deliveries agree.
		n, err := f.s.GetNotification(f.ctx, e.NotificationID)
		if err != nil {
			t.Fatal(err)
		}
		st, reason, perCh := rules.DeliveriesStatus(n.Channels, f.deliveries(e.NotificationID))
		if st != e.Status || reason != e.Reason || !maps.Equal(perCh, e.ChannelStatus) || !slices.Equal(n.Channels, e.Channels) {
			t.Errorf("entry %d: the list says %s %q %v, the rule over its deliveries %s %q %v", i, e.Status, e.Reason,
				e.ChannelStatus, st, reason, perCh)
		}
	}
	if d := es[5].Deliveries; d[heraldtype.StateSent] != 1 || d[heraldtype.StateSkipped] != 1 {
		t.Errorf("in-app entry's deliveries = %v, want one sent and one skipped", d)
	}
	deferred, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Status: heraldtype.HistoryDeferred}, 0)
	if err != nil || len(deferred) != 1 || deferred[0].NotificationID != inAppDeferred.ID {
		t.Fatalf("DEFERRED = %+v, %v; want the in-app notification whose push waits for quiet hours", deferred, err)
	}
	partial, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Status: heraldtype.HistoryPartiallySent}, 0)
	if err != nil || len(partial) != 1 || partial[0].NotificationID != sentAndDead.ID {
		t.Fatalf("PARTIALLY_SENT = %+v, %v", partial, err)
	}
}
