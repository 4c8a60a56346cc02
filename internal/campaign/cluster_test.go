package campaign

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// S3.7: two and three runners on one PostgreSQL database, ticking at once
// at the due time (as instances do around a leadership hand-over), start
// it once and reach each user once.
func TestRunnersOnOneDatabaseRunADueTimeOncePostgres(t *testing.T) {
	for _, runners := range []int{2, 3} {
		t.Run(fmt.Sprint(runners), func(t *testing.T) {
			dsn, schema := pgtest.NewSchema(t)
			e := newEnv(t) // its clock, ids and build; the store below replaces its SQLite one
			open := func() *postgres.Store {
				st, err := postgres.Open(e.ctx, dsn, postgres.Options{Schema: schema})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				if err := st.Migrate(e.ctx); err != nil {
					t.Fatal(err)
				}
				return st
			}
			e.st = open()
			const n = 40
			e.users(n)
			e.daily("daily", nil)
			var rs []*Runner
			for i := range runners {
				st := open()
				rs = append(rs, e.runner(fmt.Sprintf("r%d", i), func(c *Config) { c.Store = st; c.BatchSize = 7 }))
			}
			e.clock.Advance(time.Hour)
			for range 2 {
				var wg sync.WaitGroup
				for _, r := range rs {
					wg.Go(func() {
						if err := r.Tick(e.ctx); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				e.clock.Advance(DefaultLockAtLeast)
			}
			run := e.onlyRun("daily")
			if run.State != "done" || run.Enqueued != n || run.Skipped != 0 {
				t.Fatalf("run: %+v", run)
			}
			pool, err := pgxpool.New(e.ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			var total, distinct int
			if err := pool.QueryRow(e.ctx, `SELECT count(*), count(DISTINCT user_id) FROM `+schema+`.notifications`).Scan(&total, &distinct); err != nil {
				t.Fatal(err)
			}
			if total != n || distinct != n {
				t.Fatalf("%d notifications to %d users, want %d to %d", total, distinct, n, n)
			}
		})
	}
}
