package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/storetest"
)

var now = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// seed creates user u1 with one android device.
func seed(t *testing.T, s store.Store) {
	t.Helper()
	if _, err := s.UpsertUser(t.Context(), heraldtype.User{ID: "u1", Timezone: "Asia/Seoul"}, now); err != nil {
		t.Fatal(err)
	}
	d := heraldtype.Device{ID: "d1", UserID: "u1", Platform: heraldtype.PlatformAndroid, Token: "tok", PushOptIn: true}
	if _, err := s.UpsertDevice(t.Context(), d, now, 0); err != nil {
		t.Fatal(err)
	}
}

func trigger(ids ...string) store.EnqueueParams {
	var ns []heraldtype.Notification
	for _, id := range ids {
		ns = append(ns, heraldtype.Notification{ID: id, UserID: "u1", Type: "reservation", Title: "Booked",
			Channels: []heraldtype.Channel{heraldtype.ChannelPush}, Priority: heraldtype.PriorityNormal,
			PayloadMode: heraldtype.PayloadAlert, Guarantee: heraldtype.AtLeastOnce, CreatedAt: now})
	}
	return store.EnqueueParams{Notifications: ns, MaxAttempts: 3, PushProviders: storetest.Providers(), Now: now}
}

// TestMigrateConcurrently starts four instances with pools of their own on
// one fresh schema at once: the advisory lock lets one migrate and the
// others find nothing left to do.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	stores := make([]*postgres.Store, 4)
	for i := range stores {
		stores[i] = openStore(t, dsn, schema)
	}
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate %d: %v", i, err)
		}
	}
	files, err := fs.Glob(postgres.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = stores[0].Pool().QueryRow(t.Context(), `SELECT count(*) FROM `+schema+`.schema_migrations`).Scan(&n)
	if err != nil || n != len(files) {
		t.Fatalf("schema_migrations has %d rows (%v), want %d", n, err, len(files))
	}
	seed(t, stores[3])
}

func TestOpenRejectsBadInput(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	for _, schema := range []string{"Herald", "a-b", "1x", `x"; DROP`, "abcdefghijklmnopqrstuvwxyz_abcdefghijklmnopqrstuvwxyz"} {
		if _, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("Open with schema %q = %v, want invalid_argument", schema, err)
		}
	}
	if _, err := postgres.Open(t.Context(), "postgres://x:secret@[::1", postgres.Options{}); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
		t.Errorf("Open with a malformed URL = %v, want invalid_argument", err)
	}
}

// TestEnqueueTxBusiness is the transactional outbox (S4.1) as an embedder
// uses it: a reservation row and its notification in one transaction, on
// a pgx.Tx of Herald's pool and on a *sql.Tx of the embedder's own
// database/sql pool (whose search_path knows nothing of Herald's schema).
func TestEnqueueTxBusiness(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	seed(t, s)
	ctx := t.Context()
	table := s.Schema() + ".reservations"
	if _, err := s.Pool().Exec(ctx, `CREATE TABLE `+table+` (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kinds := map[string]func(t *testing.T) (tx any, exec func(string, ...any) error, commit, rollback func() error){
		"pgx": func(t *testing.T) (any, func(string, ...any) error, func() error, func() error) {
			tx, err := s.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tx.Rollback(context.Background()) })
			exec := func(q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err }
			return tx, exec, func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }
		},
		"database/sql": func(t *testing.T) (any, func(string, ...any) error, func() error, func() error) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tx.Rollback() })
			exec := func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err }
			return tx, exec, tx.Commit, tx.Rollback
		},
	}
	exists := func(t *testing.T, reservation, notification string) (bool, bool) {
		var n int
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE id = $1`, reservation).Scan(&n); err != nil {
			t.Fatal(err)
		}
		_, err := s.GetNotification(ctx, notification)
		if err != nil && heraldtype.ErrorCode(err) != heraldtype.ENOTFOUND {
			t.Fatal(err)
		}
		return n == 1, err == nil
	}
	for kind, begin := range kinds {
		t.Run(kind, func(t *testing.T) {
			for _, commit := range []bool{true, false} {
				id := fmt.Sprintf("%s-%v", kind, commit)
				tx, exec, doCommit, doRollback := begin(t)
				if err := exec(`INSERT INTO `+table+` (id) VALUES ($1)`, id); err != nil {
					t.Fatal(err)
				}
				res, err := s.EnqueueTx(ctx, tx, trigger("n-"+id))
				if err != nil || res.Notifications[0].Deliveries != 1 {
					t.Fatalf("EnqueueTx = %+v, %v", res, err)
				}
				end := doRollback
				if commit {
					end = doCommit
				}
				if err := end(); err != nil {
					t.Fatal(err)
				}
				r, n := exists(t, id, "n-"+id)
				if r != commit || n != commit {
					t.Fatalf("commit=%v: reservation exists %v, notification exists %v", commit, r, n)
				}
			}
		})
	}
}

// TestNotifications checks the wake-ups between instances (S4.2): an
// enqueue on one store wakes the listener of another on the same schema;
// a listener whose connection is killed comes back and still hears; and
// the channel is the schema's own.
func TestNotifications(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.NewSchema(t)
	a, b := openStore(t, dsn, schema), openStore(t, dsn, schema)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	seed(t, b)
	ctx, cancel := context.WithCancel(t.Context())
	ch := a.Notifications(ctx)
	wait := func(what string) {
		t.Helper()
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatalf("%s: channel closed", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no signal within 10 s", what)
		}
	}
	wait("first connect")
	if _, err := b.Enqueue(t.Context(), trigger("n1")); err != nil {
		t.Fatal(err)
	}
	wait("enqueue on another instance")

	// Kill the listener's backend: it reconnects and signals once.
	tag, err := b.Pool().Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE application_name = $1`, postgres.ListenerApplicationName(schema))
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminate listener: %v (%d backends)", err, tag.RowsAffected())
	}
	wait("reconnect")
	if _, err := b.Enqueue(t.Context(), trigger("n2")); err != nil {
		t.Fatal(err)
	}
	wait("enqueue after the reconnect")

	cancel()
	for range ch {
	}
}

// TestNotifyChannelPerSchema: an enqueue in another schema notifies that
// schema's channel only. Notifications reach a listener in commit order,
// so the marker sent after the other schema's enqueue is the first thing
// this schema's listener hears.
func TestNotifyChannelPerSchema(t *testing.T) {
	t.Parallel()
	mine, other := newStore(t), newStore(t)
	seed(t, other)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	channel := mine.Schema() + "_deliveries"
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Enqueue(ctx, trigger("n1")); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Pool().Exec(ctx, `SELECT pg_notify($1, 'marker')`, channel); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(wctx)
	if err != nil || n.Payload != "marker" {
		t.Fatalf("first notification = %+v, %v; want the marker", n, err)
	}
}
