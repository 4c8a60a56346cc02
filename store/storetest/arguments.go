package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// testBadArguments covers every argument and filter check a store makes
// before it touches the database: each bad call is refused with EINVALID
// on the field at fault and the message the HTTP API shows, the same on
// every store (the checks are written once, in package store).
func testBadArguments(t *testing.T, newStore NewStore) {
	t.Parallel()
	f := newFixture(t, newStore)
	f.user("u1")
	list := func(df heraldtype.DeliveryFilter) error {
		_, _, err := f.s.ListDeliveries(f.ctx, df)
		return err
	}
	inbox := func(inf heraldtype.InboxFilter) error {
		_, _, _, err := f.s.ListInbox(f.ctx, "u1", inf)
		return err
	}
	history := func(hf heraldtype.HistoryFilter) error {
		_, _, err := f.s.ListHistory(f.ctx, hf, 0)
		return err
	}
	replay := func(df heraldtype.DeliveryFilter, max int) error {
		_, err := f.s.ReplayDeliveries(f.ctx, df, base(), max)
		return err
	}
	for _, c := range []struct {
		name, field, message string
		err                  error
	}{
		{"ListDeliveries limit", "limit", "limit: must not be negative", list(heraldtype.DeliveryFilter{Limit: -1})},
		{"ListDeliveries state", "state", `state: unknown state "lost"`, list(heraldtype.DeliveryFilter{State: "lost"})},
		{"ListDeliveries cursor", "cursor", "cursor: is not a cursor returned by a previous page",
			list(heraldtype.DeliveryFilter{Cursor: "not a cursor"})},
		{"ListDeliveries cursor of id 0", "cursor", "cursor: is not a cursor returned by a previous page",
			list(heraldtype.DeliveryFilter{Cursor: "MA"})},
		// The state is checked before the cursor, the cursor before the limit.
		{"ListDeliveries order", "state", `state: unknown state "lost"`,
			list(heraldtype.DeliveryFilter{State: "lost", Cursor: "x", Limit: -1})},
		{"ListDeliveries order 2", "cursor", "cursor: is not a cursor returned by a previous page",
			list(heraldtype.DeliveryFilter{Cursor: "x", Limit: -1})},
		{"ListInbox limit", "limit", "limit: must not be negative", inbox(heraldtype.InboxFilter{Limit: -1})},
		{"ListInbox cursor", "cursor", "cursor: is not a cursor returned by a previous page",
			inbox(heraldtype.InboxFilter{Cursor: "not a cursor"})},
		{"ListInbox order", "limit", "limit: must not be negative", inbox(heraldtype.InboxFilter{Cursor: "x", Limit: -1})},
		{"ListHistory limit", "limit", "limit: must not be negative", history(heraldtype.HistoryFilter{Limit: -1})},
		{"ListHistory cursor", "cursor", "cursor: is not a cursor returned by a previous page",
			history(heraldtype.HistoryFilter{Cursor: "not-a-cursor"})},
		{"ReplayDeliveries state", "state", `state: only dead or unknown deliveries can be replayed, not "sent"`,
			replay(heraldtype.DeliveryFilter{State: heraldtype.StateSent}, 10)},
		{"ReplayDeliveries unknown state", "state", `state: only dead or unknown deliveries can be replayed, not "lost"`,
			replay(heraldtype.DeliveryFilter{State: "lost"}, 10)},
		{"ReplayDeliveries max", "max", "max: must be at least 1", replay(heraldtype.DeliveryFilter{}, 0)},
		{"GetDelivery id", "id", "id: must be a positive delivery id", second(f.s.GetDelivery(f.ctx, 0))},
		{"PruneFinished limit", "limit", "limit: must be at least 1", second(f.s.PruneFinished(f.ctx, base(), 0))},
		{"TryLock name", "name", "name: must not be empty", second(f.s.TryLock(f.ctx, "", "a", base(), at(time.Minute)))},
		{"TryLock owner", "owner", "owner: must not be empty", second(f.s.TryLock(f.ctx, "x", "", base(), at(time.Minute)))},
		{"TryLock until", "until", "until: must be after now", second(f.s.TryLock(f.ctx, "x", "a", base(), base()))},
		{"Unlock name", "name", "name: must not be empty", f.s.Unlock(f.ctx, "", "a", base())},
		{"Unlock owner", "owner", "owner: must not be empty", f.s.Unlock(f.ctx, "x", "", base())},
		{"AcquireDedupe window", "window", "window: must be positive", second(f.s.AcquireDedupe(f.ctx, "k", "n1", 0, base()))},
		{"CountDaily limit", "limit", "limit: must be at least 1",
			second(f.s.CountDaily(f.ctx, "u1", "2026-03-14", "n1", 0, at(time.Hour)))},
		{"CountDailyBatch limit", "limit", "limit: must be at least 1",
			second(f.s.CountDailyBatch(f.ctx, []heraldtype.DailyCount{{UserID: "u1", Day: "2026-03-14", Owner: "n1", ExpireAt: at(time.Hour)}}))},
		{"CountDailyBatch limits", "limit", `limit: the counts of user "u1" on 2026-03-14 carry two limits, 10 and 5`,
			second(f.s.CountDailyBatch(f.ctx, []heraldtype.DailyCount{
				{UserID: "u1", Day: "2026-03-14", Owner: "n1", Limit: 10, ExpireAt: at(time.Hour)},
				{UserID: "u1", Day: "2026-03-14", Owner: "n2", Limit: 5, ExpireAt: at(time.Hour)}}))},
		{"PutType name", "name", "name: is required", second(f.s.PutType(f.ctx, heraldtype.NotificationType{}, base()))},
		{"InboxSince after_id", "after_id", "after_id: must not be negative", second(f.s.InboxSince(f.ctx, "u1", -1, 10))},
		{"InboxSince limit 0", "limit", "limit: must be between 1 and 1000", second(f.s.InboxSince(f.ctx, "u1", 0, 0))},
		{"InboxSince limit 1001", "limit", "limit: must be between 1 and 1000", second(f.s.InboxSince(f.ctx, "u1", 0, 1001))},
		{"ListSuppressions channel", "channel", `channel: must be sms or email, not "fax"`,
			second(f.s.ListSuppressions(f.ctx, "fax"))},
		{"DeleteSuppression channel", "channel", `channel: must be sms or email, not "push"`,
			f.s.DeleteSuppression(f.ctx, heraldtype.ChannelPush, "x")},
		{"DeleteSuppression address", "address", "address: must not be empty",
			f.s.DeleteSuppression(f.ctx, heraldtype.ChannelSMS, "")},
	} {
		var he *heraldtype.Error
		if !errors.As(c.err, &he) || he.Code != heraldtype.EINVALID || he.Field != c.field || he.Message != c.message {
			t.Errorf("%s: error = %#v, want %s on %q: %q", c.name, he, heraldtype.EINVALID, c.field, c.message)
		}
	}
}

// second is the error of a call that returns a value and an error.
func second[T any](_ T, err error) error { return err }
