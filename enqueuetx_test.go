package herald_test

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

type stubProvider struct{}

func (stubProvider) Send(context.Context, *heraldtype.Message) (string, error) { return "id", nil }

// TestEnqueueTxPostgres proves S4.1 on PostgreSQL through the Client, for
// both transaction types an application may hold: the notification exists
// if and only if the business transaction commits.
func TestEnqueueTxPostgres(t *testing.T) {
	dsn, schema := pgtest.NewSchema(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	client, err := herald.NewClient(herald.Config{Store: st, Providers: map[string]herald.Provider{"fcm": stubProvider{}},
		DisableWorkers: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RegisterDevice(ctx, "u1", herald.DeviceInput{DeviceID: "d1", Token: "t1", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "reservations"}.Sanitize()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, `CREATE TABLE `+table+` (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	req := func(id string) herald.Request {
		return herald.Request{IdempotencyKey: "reservation-" + id, UserID: "u1", Type: "reservation_confirmed", Title: "Booked " + id}
	}
	book := map[string]func(id string, commit bool) error{
		"pgx.Tx": func(id string, commit bool) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `INSERT INTO `+table+` VALUES ($1)`, id); err != nil {
				return err
			}
			if _, err := client.EnqueueTx(ctx, tx, req(id)); err != nil {
				return err
			}
			if commit {
				return tx.Commit(ctx)
			}
			return nil
		},
		"*sql.Tx": func(id string, commit bool) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` VALUES ($1)`, id); err != nil {
				return err
			}
			if _, err := client.EnqueueTx(ctx, tx, req(id)); err != nil {
				return err
			}
			if commit {
				return tx.Commit()
			}
			return nil
		},
	}
	for name, fn := range book {
		t.Run(name, func(t *testing.T) {
			committed, rolledBack := name+"-commit", name+"-rollback"
			if err := fn(committed, true); err != nil {
				t.Fatal(err)
			}
			if err := fn(rolledBack, false); err != nil {
				t.Fatal(err)
			}
			for id, want := range map[string]int{committed: 1, rolledBack: 0} {
				var rows int
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&rows); err != nil {
					t.Fatal(err)
				}
				// Replaying the key tells whether the trigger exists: a
				// committed one is replayed, a rolled-back one is new.
				res, err := client.Enqueue(ctx, req(id))
				if err != nil {
					t.Fatal(err)
				}
				if rows != want || res.Replayed != (want == 1) {
					t.Errorf("%s: %d reservation rows, trigger existed %v; want %d and %v", id, rows, res.Replayed, want, want == 1)
				}
			}
		})
	}
	if _, err := client.EnqueueTx(ctx, "not a tx", req("x")); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Fatalf("EnqueueTx with a string: %v, want invalid_argument", err)
	}
}
