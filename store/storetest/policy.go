package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// testPolicy covers the store's side of the delivery policy (issue 4):
// types, preferences, the limiter rows' pruning, the dedupe key of a
// notification and the policy outcomes of Complete.
func testPolicy(t *testing.T, newStore NewStore) {
	t.Run("Types", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		// counts_toward_cap is kept as said: true, false, or unset (issue
		// 30 item 5: unset caps rules' and campaigns' notifications).
		yes, no := true, false
		_, err := f.s.GetType(f.ctx, "promo")
		wantCode(t, err, heraldtype.ENOTFOUND)
		promo := heraldtype.NotificationType{Name: "promo", Channels: []heraldtype.Channel{heraldtype.ChannelPush},
			Priority: heraldtype.PriorityLow, DedupeWindow: 2 * time.Hour, QuietHours: true, CountsTowardCap: &yes,
			Guarantee: heraldtype.AtMostOnce}
		if _, err := f.s.PutType(f.ctx, promo, base()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.PutType(f.ctx, heraldtype.NotificationType{Name: "alarm", Critical: true,
			Guarantee: heraldtype.AtLeastOnce}, base()); err != nil {
			t.Fatal(err)
		}
		got, err := f.s.GetType(f.ctx, "promo")
		if err != nil {
			t.Fatal(err)
		}
		wantTime(t, "updated_at", got.UpdatedAt, base())
		got.UpdatedAt = time.Time{}
		if !slices.Equal(got.Channels, promo.Channels) || got.DedupeWindow != promo.DedupeWindow ||
			got.CountsTowardCap == nil || !*got.CountsTowardCap || !got.QuietHours || got.Guarantee != heraldtype.AtMostOnce || got.Priority != heraldtype.PriorityLow {
			t.Fatalf("GetType = %+v, want %+v", got, promo)
		}
		promo.CountsTowardCap = &no
		if _, err := f.s.PutType(f.ctx, promo, at(time.Minute)); err != nil {
			t.Fatal(err)
		}
		all, err := f.s.ListTypes(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || all[0].Name != "alarm" || all[1].Name != "promo" || all[1].CountsTowardCap == nil || *all[1].CountsTowardCap || !all[0].Critical ||
			all[0].CountsTowardCap != nil {
			t.Fatalf("ListTypes = %+v", all)
		}
	})

	t.Run("Preferences", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		_, err := f.s.GetPreferences(f.ctx, "ghost")
		wantCode(t, err, heraldtype.ENOTFOUND)
		_, err = f.s.PutPreferences(f.ctx, heraldtype.Preferences{UserID: "ghost"}, base())
		wantCode(t, err, heraldtype.ENOTFOUND)
		f.user("u1")
		p, err := f.s.GetPreferences(f.ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		if p.UserID != "u1" || p.Timezone != "Asia/Seoul" || p.QuietHours != nil || len(p.Types) != 0 {
			t.Fatalf("preferences of a user who set none = %+v", p)
		}
		in := heraldtype.Preferences{UserID: "u1",
			Types: map[string]heraldtype.TypePreference{"promo": {Disabled: true},
				"order": {Channels: []heraldtype.Channel{heraldtype.ChannelEmail}}},
			OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelSMS},
			QuietHours:       &heraldtype.QuietHours{Start: "22:00", End: "08:00"}, DailyCap: 5}
		out, err := f.s.PutPreferences(f.ctx, in, base())
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.s.GetPreferences(f.ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []heraldtype.Preferences{out, got} {
			if p.Timezone != "Asia/Seoul" || !p.Types["promo"].Disabled || p.Types["order"].Channels[0] != heraldtype.ChannelEmail ||
				p.OptedOutChannels[0] != heraldtype.ChannelSMS || *p.QuietHours != *in.QuietHours || p.DailyCap != 5 {
				t.Fatalf("preferences = %+v, want %+v", p, in)
			}
			wantTime(t, "updated_at", p.UpdatedAt, base())
		}
		// The dispatcher's batched read: the same preferences, the user
		// without any gets empty ones, an unknown user is absent.
		f.user("u2")
		many, err := f.s.GetPreferencesMany(f.ctx, []string{"u1", "u2", "ghost"})
		if err != nil {
			t.Fatal(err)
		}
		if len(many) != 2 || !reflect.DeepEqual(many["u1"], got) || many["u2"].UserID != "u2" ||
			many["u2"].Timezone != "Asia/Seoul" || len(many["u2"].Types) != 0 {
			t.Fatalf("GetPreferencesMany = %+v, want u1 %+v and an empty u2", many, got)
		}
		if none, err := f.s.GetPreferencesMany(f.ctx, nil); err != nil || len(none) != 0 {
			t.Fatalf("GetPreferencesMany(nil) = %v, %v", none, err)
		}
	})

	t.Run("SwapPreferences", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		off := heraldtype.Preferences{UserID: "u1", OptedOutChannels: []heraldtype.Channel{heraldtype.ChannelSMS}}
		// None written yet: the swap from zero creates them, once.
		got, ok, err := f.s.SwapPreferences(f.ctx, off, time.Time{}, at(time.Minute))
		if err != nil || !ok || !got.UpdatedAt.Equal(at(time.Minute)) {
			t.Fatalf("swap from none = %+v, %v, %v", got, ok, err)
		}
		if _, ok, err := f.s.SwapPreferences(f.ctx, off, time.Time{}, at(2*time.Minute)); err != nil || ok {
			t.Fatalf("a second swap from none = %v, %v; want refused", ok, err)
		}
		// A write in between: the swap read before it writes nothing.
		if _, err := f.s.PutPreferences(f.ctx, heraldtype.Preferences{UserID: "u1"}, at(3*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := f.s.SwapPreferences(f.ctx, off, at(time.Minute), at(4*time.Minute)); err != nil || ok {
			t.Fatalf("swap over a newer write = %v, %v; want refused", ok, err)
		}
		if p, _ := f.s.GetPreferences(f.ctx, "u1"); len(p.OptedOutChannels) != 0 {
			t.Fatalf("the newer write was overwritten: %+v", p)
		}
		if _, ok, err := f.s.SwapPreferences(f.ctx, off, at(3*time.Minute), at(5*time.Minute)); err != nil || !ok {
			t.Fatalf("swap from the latest = %v, %v", ok, err)
		}
	})
	t.Run("PrunePolicy", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		if ok, err := f.s.AcquireDedupe(f.ctx, "k", "n1", time.Hour, base()); !ok || err != nil {
			t.Fatalf("AcquireDedupe = %v, %v", ok, err)
		}
		if ok, err := f.s.CountDaily(f.ctx, "u1", "2026-03-14", "n1", 10, at(2*time.Hour)); !ok || err != nil {
			t.Fatalf("CountDaily = %v, %v", ok, err)
		}
		for _, step := range []struct {
			now  time.Time
			want int
		}{{at(time.Hour - time.Second), 0}, {at(90 * time.Minute), 1}, {at(2 * time.Hour), 1}, {at(3 * time.Hour), 0}} {
			n, err := f.s.PrunePolicy(f.ctx, step.now)
			if err != nil || n != step.want {
				t.Fatalf("PrunePolicy(%s) = %d, %v; want %d", step.now, n, err, step.want)
			}
		}
		// A batch's counts expire like CountDaily's, each at its own time.
		ok, err := f.s.CountDailyBatch(f.ctx, []heraldtype.DailyCount{
			{UserID: "u2", Day: "2026-03-14", Owner: "n1", Limit: 2, ExpireAt: at(5 * time.Hour)},
			{UserID: "u2", Day: "2026-03-14", Owner: "n2", Limit: 2, ExpireAt: at(6 * time.Hour)},
			{UserID: "u2", Day: "2026-03-14", Owner: "n3", Limit: 2, ExpireAt: at(6 * time.Hour)},
		})
		if err != nil || len(ok) != 3 || !ok[0] || !ok[1] || ok[2] {
			t.Fatalf("CountDailyBatch = %v, %v; want [true true false]", ok, err)
		}
		if n, err := f.s.PrunePolicy(f.ctx, at(5*time.Hour)); err != nil || n != 1 {
			t.Fatalf("PrunePolicy at 5 h = %d, %v; want the batch's first count", n, err)
		}
		if ok, err := f.s.CountDaily(f.ctx, "u2", "2026-03-14", "n3", 2, at(6*time.Hour)); !ok || err != nil {
			t.Fatalf("CountDaily after the batch's first count expired = %v, %v", ok, err)
		}
		// The pruned count is forgotten: the day starts again.
		for _, owner := range []string{"n2", "n3"} {
			if ok, err := f.s.CountDaily(f.ctx, "u1", "2026-03-14", owner, 1, at(4*time.Hour)); (owner == "n2") != ok || err != nil {
				t.Fatalf("CountDaily(%s) after prune = %v, %v", owner, ok, err)
			}
		}
	})

	t.Run("DedupeKey", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, newStore)
		f.user("u1")
		f.device("u1", "d1", heraldtype.PlatformAndroid)
		n := f.notification("u1")
		n.DedupeKey = "product-7"
		f.enqueue(params(n))
		got, err := f.s.GetNotification(f.ctx, n.ID)
		if err != nil || got.DedupeKey != "product-7" {
			t.Fatalf("GetNotification = %+v, %v; want dedupe key product-7", got, err)
		}
		jobs := f.claim("w", base(), 10)
		if len(jobs) != 1 || jobs[0].Notification.DedupeKey != "product-7" {
			t.Fatalf("claimed %+v, want the dedupe key on the job's notification", jobs)
		}
	})

	t.Run("CompletePolicyOutcomes", func(t *testing.T) {
		t.Parallel()
		testCompletePolicy(t, newFixture(t, newStore))
	})
}

func testCompletePolicy(t *testing.T, f *fixture) {
	f.user("u1")
	f.device("u1", "d1", heraldtype.PlatformAndroid)
	ns := f.push("u1", "u1", "u1")
	jobs := f.claim("w", base(), 10)
	if len(jobs) != 3 {
		t.Fatalf("claimed %d, want 3", len(jobs))
	}
	now := at(time.Second)
	opted := outcome(jobs[0], store.OptedOut{ErrorCode: "type_disabled", Error: "the user turned promo off"}, now)
	limited := outcome(jobs[1], store.RateLimited{ErrorCode: "duplicate", Error: "already sent"}, now)
	release := store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: at(8 * time.Hour),
		ErrorCode: heraldtype.CodeQuietHours, Error: "quiet hours 22:00-08:00"}
	deferred := outcome(jobs[2], release, now)

	// A release with a reason must say deferred or policy_error.
	for _, reason := range []heraldtype.AttemptOutcome{"", heraldtype.OutcomeSent} {
		bad := release
		bad.Outcome = reason
		_, err := f.s.Complete(f.ctx, []store.Outcome{outcome(jobs[2], bad, now)})
		wantCode(t, err, heraldtype.EINVALID)
	}

	f.complete(3, opted, limited, deferred)
	for i, want := range []struct {
		state heraldtype.DeliveryState
		code  string
		out   heraldtype.AttemptOutcome
	}{
		{heraldtype.StateOptedOut, "type_disabled", heraldtype.OutcomeOptedOut},
		{heraldtype.StateRateLimited, "duplicate", heraldtype.OutcomeRateLimited},
		{heraldtype.StatePending, heraldtype.CodeQuietHours, heraldtype.OutcomeDeferred},
	} {
		d := f.delivery(ns[i].ID)
		if d.State != want.state || d.LastErrorCode != want.code || d.LastError == "" {
			t.Fatalf("delivery %d = %s/%s %q, want %s/%s", i, d.State, d.LastErrorCode, d.LastError, want.state, want.code)
		}
		wantOutcomes(t, d, want.out)
		if want.state.Final() != (d.FinishedAt != nil) {
			t.Fatalf("delivery %d: finished_at = %v with state %s", i, d.FinishedAt, d.State)
		}
		if want.state == heraldtype.StatePending {
			// Deferred: the attempt is not counted, the delivery is due at
			// the end of the window.
			if d.Attempt != 0 {
				t.Fatalf("deferred delivery attempt = %d, want 0", d.Attempt)
			}
			wantTime(t, "run_at", d.RunAt, at(8*time.Hour))
		}
	}
	st := f.stats()
	if st[heraldtype.StateOptedOut] != 1 || st[heraldtype.StateRateLimited] != 1 || st[heraldtype.StatePending] != 1 {
		t.Fatalf("stats = %v", st)
	}
	// The deferred delivery is claimed again when its window ends.
	if got := f.claim("w", at(8*time.Hour-time.Second), 10); len(got) != 0 {
		t.Fatalf("claimed %d before the window ended", len(got))
	}
	if got := f.claim("w", at(8*time.Hour), 10); len(got) != 1 || got[0].Delivery.Attempt != 1 {
		t.Fatalf("claim after the window = %+v", got)
	}
}
