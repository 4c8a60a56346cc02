package campaign

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// BenchmarkCampaignRun measures one run's fan-out: an audience of 5,000
// active users, in batches of 500, each batch's recipient records,
// notifications (in-app) and cursor in one transaction. It reports
// recipients/s.
//
//	go test -run '^$' -bench BenchmarkCampaignRun -benchtime 3x ./internal/campaign
func BenchmarkCampaignRun(b *testing.B) {
	const users = 5000
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			e := newBenchEnv(b, db)
			e.users(users)
			for i := range b.N {
				e.daily(fmt.Sprintf("bench-%d", i), nil)
			}
			e.clock.Advance(time.Hour)
			r := e.runner("bench", func(c *Config) { c.BatchSize = 500 })
			b.ResetTimer()
			start := time.Now()
			if err := r.Tick(e.ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(users*b.N)/time.Since(start).Seconds(), "recipients/s")
		})
	}
}

func newBenchEnv(b *testing.B, db string) *env {
	e := newEnv(b)
	if db == "postgres" {
		dsn, schema := pgtest.NewSchema(b)
		st, err := postgres.Open(e.ctx, dsn, postgres.Options{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		if err := st.Migrate(e.ctx); err != nil {
			b.Fatal(err)
		}
		e.st = store.Store(st)
	}
	return e
}
