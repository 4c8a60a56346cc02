package rules

import (
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Plan is what a trigger asks of each channel, decided from the trigger
// alone: the routing rules of store.EnqueueParams and store/channels.go.
// Every list is in trigger order.
type Plan struct {
	// Push are the notifications that fan out to their user's devices:
	// those with the push channel, when a platform is routed at all. The
	// devices that qualify, and each one's provider, are decided in SQL
	// (PushDeviceSQL, PushRoutes).
	Push []Route
	// Addressed are the sms and email deliveries: one per notification
	// and channel that has a provider, to the user's address (AddressSQL)
	// or skipped (SkipSQL). A channel without a provider gets none.
	Addressed []Route
	// InApp are the notifications with the in_app channel due now: one
	// inbox item and one delivery already sent each (InboxItemSQL,
	// InboxDeliverySQL), or, when the user's preferences refuse it, one
	// opted_out delivery and no item (InboxRefusalSQL, InboxRefusedSQL).
	InApp []Route
	// InAppLater are the notifications with the in_app channel scheduled
	// for later (SendAt after now): one pending delivery each, due at
	// SendAt, and no item until then (InboxPendingSQL, issue 22).
	InAppLater []Route
}

// Route is a notification's delivery (or fan-out) on one channel.
type Route struct {
	N       *heraldtype.Notification
	Channel heraldtype.Channel
	// Provider of an sms or email delivery; empty for push (by platform)
	// and in_app (store.InboxProvider).
	Provider string
	// RunAt is when the delivery is due (RunAt).
	RunAt time.Time
}

// addressed are the channels delivered to an address, in the order their
// deliveries are written.
var addressed = []heraldtype.Channel{heraldtype.ChannelSMS, heraldtype.ChannelEmail}

// PlanEnqueue decides the deliveries p asks for. The routes point into
// p.Notifications.
func PlanEnqueue(p store.EnqueueParams) Plan {
	var pl Plan
	for i := range p.Notifications {
		n := &p.Notifications[i]
		at := RunAt(*n, p.Now)
		if len(p.PushProviders) > 0 && slices.Contains(n.Channels, heraldtype.ChannelPush) {
			pl.Push = append(pl.Push, Route{N: n, Channel: heraldtype.ChannelPush, RunAt: at})
		}
		for _, ch := range addressed {
			if pr := p.ChannelProviders[ch]; pr != "" && slices.Contains(n.Channels, ch) {
				pl.Addressed = append(pl.Addressed, Route{N: n, Channel: ch, Provider: pr, RunAt: at})
			}
		}
		if slices.Contains(n.Channels, heraldtype.ChannelInApp) {
			r := Route{N: n, Channel: heraldtype.ChannelInApp, RunAt: at}
			if at.After(p.Now) {
				pl.InAppLater = append(pl.InAppLater, r)
			} else {
				pl.InApp = append(pl.InApp, r)
			}
		}
	}
	return pl
}

// RunAt is when a delivery of n becomes due: its SendAt, or now if that
// is unset or already past.
func RunAt(n heraldtype.Notification, now time.Time) time.Time {
	if n.SendAt.After(now) {
		return n.SendAt
	}
	return now
}

// PushRoutes is the push routing table as the rows of the relation the
// push statements join devices to, r (platform, provider), sorted by
// platform so that a statement built from it keeps one text (and one
// cached plan) per table. A platform missing from the table gets no push
// delivery.
func PushRoutes(providers map[heraldtype.Platform]string) (platforms, names []string) {
	platforms = make([]string, 0, len(providers))
	for pl := range providers {
		platforms = append(platforms, string(pl))
	}
	slices.Sort(platforms)
	names = make([]string, len(platforms))
	for i, pl := range platforms {
		names[i] = providers[heraldtype.Platform(pl)]
	}
	return platforms, names
}
