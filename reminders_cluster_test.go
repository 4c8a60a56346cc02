package herald

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/reminder"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

type okProvider struct{}

func (okProvider) Send(context.Context, *heraldtype.Message) (string, error) { return "id", nil }

// S2.4, issue 19 item 4: three schedulers on one PostgreSQL database,
// ticking at once over the same due reminders, enqueue every occurrence
// exactly once between them — and a scheduler restarted across the due
// time (a new owner, the old lease abandoned) repeats none.
func TestRemindersExactlyOnceAcrossSchedulersPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	instance := func(owner string) *Client {
		st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := NewClient(Config{Store: st, Providers: map[string]Provider{"fcm": okProvider{}}, Owner: owner,
			Types: map[string]TypeConfig{"nudge": {}}, Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
			Reminders: ReminderConfig{BatchSize: 16, Gap: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, c := instance("a"), instance("b"), instance("c")
	const users, perUser = 20, 10
	for u := range users {
		user := fmt.Sprintf("u%d", u)
		if _, err := a.PutUser(ctx, user, UserInput{}); err != nil {
			t.Fatal(err)
		}
		for i := range perUser {
			_, _, err := a.PutReminder(ctx, ReminderRequest{Key: fmt.Sprintf("%s-%d", user, i), UserID: user, Type: "nudge",
				Title: "hi", Channels: []heraldtype.Channel{heraldtype.ChannelInApp},
				Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Minute), Factor: 1, Max: heraldtype.Duration(time.Minute)}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	drain := func(clients ...*Client) {
		var wg sync.WaitGroup
		for _, cl := range clients {
			wg.Go(func() {
				for {
					counts, full, err := cl.scheduler.Tick(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					if !full && counts["claimed"] == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
	}
	for range 3 {
		clock.Advance(time.Minute)
		drain(a, b, c)
	}
	// A scheduler that claimed and died: its successor fires after the lease.
	clock.Advance(time.Minute)
	now := clock.Now()
	if _, err := a.store.ClaimReminders(ctx, claimAll("dead", now)); err != nil {
		t.Fatal(err)
	}
	drain(b, c) // the dead lease holds everything back
	clock.Advance(reminder.DefaultLease + time.Second)
	drain(a, b, c)

	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var total, keys int
	err = pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT idempotency_key) FROM `+schema+`.notifications`).Scan(&total, &keys)
	if err != nil {
		t.Fatal(err)
	}
	if want := users * perUser * 4; total != want || keys != want {
		t.Fatalf("%d notifications with %d distinct occurrence keys, want %d of each", total, keys, want)
	}
	page, err := a.ListReminders(ctx, ReminderFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Reminders {
		if r.SentCount != 4 {
			t.Fatalf("reminder %s sent %d, want 4", r.Key, r.SentCount)
		}
	}
}

func claimAll(owner string, now time.Time) store.ReminderClaimParams {
	return store.ReminderClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(reminder.DefaultLease), Limit: 1000}
}
