package rules_test

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

func TestPlanEnqueue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	later := now.Add(time.Hour)
	on := func(id string, sendAt time.Time, chs ...heraldtype.Channel) heraldtype.Notification {
		return heraldtype.Notification{ID: id, UserID: "u1", Channels: chs, SendAt: sendAt}
	}
	ns := []heraldtype.Notification{
		on("all", time.Time{}, heraldtype.ChannelInApp, heraldtype.ChannelEmail, heraldtype.ChannelSMS, heraldtype.ChannelPush),
		on("later", later, heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelInApp),
		on("past", now.Add(-time.Hour), heraldtype.ChannelEmail),
		on("none", time.Time{}),
	}
	type route struct {
		id       string
		channel  heraldtype.Channel
		provider string
		runAt    time.Time
	}
	flat := func(rs []rules.Route) []route {
		out := []route{}
		for _, r := range rs {
			out = append(out, route{r.N.ID, r.Channel, r.Provider, r.RunAt})
		}
		return out
	}
	push := map[heraldtype.Platform]string{heraldtype.PlatformAndroid: "fcm"}
	for _, c := range []struct {
		name                  string
		push                  map[heraldtype.Platform]string
		channels              map[heraldtype.Channel]string
		wantPush, wantAddress []route
	}{
		{"every channel routed", push, map[heraldtype.Channel]string{heraldtype.ChannelSMS: "twilio", heraldtype.ChannelEmail: "smtp"},
			[]route{{"all", heraldtype.ChannelPush, "", now}, {"later", heraldtype.ChannelPush, "", later}},
			// sms before email, whatever the notification's order.
			[]route{{"all", heraldtype.ChannelSMS, "twilio", now}, {"all", heraldtype.ChannelEmail, "smtp", now},
				{"later", heraldtype.ChannelSMS, "twilio", later}, {"past", heraldtype.ChannelEmail, "smtp", now}}},
		{"no provider: no delivery", nil, map[heraldtype.Channel]string{heraldtype.ChannelEmail: "smtp"},
			[]route{},
			[]route{{"all", heraldtype.ChannelEmail, "smtp", now}, {"past", heraldtype.ChannelEmail, "smtp", now}}},
		{"an empty provider name routes nothing", push, map[heraldtype.Channel]string{heraldtype.ChannelSMS: ""},
			[]route{{"all", heraldtype.ChannelPush, "", now}, {"later", heraldtype.ChannelPush, "", later}},
			[]route{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := store.EnqueueParams{Notifications: slices.Clone(ns), PushProviders: c.push, ChannelProviders: c.channels, Now: now}
			pl := rules.PlanEnqueue(p)
			if got := flat(pl.Push); !slices.Equal(got, c.wantPush) {
				t.Errorf("Push = %v, want %v", got, c.wantPush)
			}
			if got := flat(pl.Addressed); !slices.Equal(got, c.wantAddress) {
				t.Errorf("Addressed = %v, want %v", got, c.wantAddress)
			}
			// in_app needs no provider; it is written now when due now, and
			// waits for its SendAt otherwise (issue 22).
			if got, want := flat(pl.InApp), []route{{"all", heraldtype.ChannelInApp, "", now}}; !slices.Equal(got, want) {
				t.Errorf("InApp = %v, want %v", got, want)
			}
			if got, want := flat(pl.InAppLater), []route{{"later", heraldtype.ChannelInApp, "", later}}; !slices.Equal(got, want) {
				t.Errorf("InAppLater = %v, want %v", got, want)
			}
			if len(pl.InApp) > 0 && pl.InApp[0].N != &p.Notifications[0] {
				t.Errorf("routes do not point into the trigger's notifications")
			}
		})
	}
}

func TestPushRoutes(t *testing.T) {
	t.Parallel()
	platforms, providers := rules.PushRoutes(map[heraldtype.Platform]string{
		heraldtype.PlatformWeb: "webpush", heraldtype.PlatformAndroid: "fcm", heraldtype.PlatformIOS: "apns",
	})
	if !slices.Equal(platforms, []string{"android", "ios", "web"}) || !slices.Equal(providers, []string{"fcm", "apns", "webpush"}) {
		t.Fatalf("PushRoutes = %v, %v; want sorted by platform", platforms, providers)
	}
	if platforms, providers := rules.PushRoutes(nil); len(platforms) != 0 || len(providers) != 0 {
		t.Fatalf("PushRoutes(nil) = %v, %v", platforms, providers)
	}
}
