package herald

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// BenchmarkReminderDrain measures issue 19 item 10's drain: b.N reminders
// all due at one instant are claimed, enqueued (one in-app notification
// each) and advanced by one scheduler; the figure is occurrences/s.
//
//	go test -run '^$' -bench ReminderDrain -benchtime 20000x .
func BenchmarkReminderDrain(b *testing.B) {
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			var st store.Store
			switch db {
			case "sqlite":
				s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "h.db"), sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				st = s
			default:
				dsn, schema := pgtest.NewSchema(b)
				s, err := postgres.Open(b.Context(), dsn, postgres.Options{Schema: schema})
				if err != nil {
					b.Fatal(err)
				}
				st = s
			}
			b.Cleanup(func() { st.Close() })
			if err := st.Migrate(b.Context()); err != nil {
				b.Fatal(err)
			}
			clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
			c, err := NewClient(Config{Store: st, Types: map[string]TypeConfig{"nudge": {}}, Now: clock.Now,
				Logger: slog.New(slog.DiscardHandler), Reminders: ReminderConfig{Gap: -1}, DisableWorkers: true})
			if err != nil {
				b.Fatal(err)
			}
			const users = 1000
			for u := range users {
				if _, err := c.PutUser(b.Context(), fmt.Sprintf("u%d", u), UserInput{}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range b.N {
				_, _, err := c.PutReminder(b.Context(), ReminderRequest{Key: fmt.Sprintf("r%d", i), UserID: fmt.Sprintf("u%d", i%users),
					Type: "nudge", Title: "hi", Channels: []heraldtype.Channel{heraldtype.ChannelInApp},
					Schedule: heraldtype.Schedule{Backoff: &heraldtype.Backoff{First: heraldtype.Duration(time.Minute), Factor: 2,
						Max: heraldtype.Duration(time.Hour)}}})
				if err != nil {
					b.Fatal(err)
				}
			}
			clock.Advance(time.Minute)
			b.ResetTimer()
			start := time.Now()
			sent := 0
			for {
				counts, full, err := c.scheduler.Tick(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				sent += counts["enqueued"]
				if !full && counts["claimed"] == 0 {
					break
				}
			}
			b.StopTimer()
			if sent != b.N {
				b.Fatalf("enqueued %d of %d", sent, b.N)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "occurrences/s")
		})
	}
}
