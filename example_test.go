package herald_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldhq/herald"
	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/sqlite"
)

// newExampleClient opens Herald on a SQLite file with the FCM provider
// pointed at an in-process FCM emulator — what an embedding program does
// with its real credentials.
func newExampleClient(ctx context.Context, dir string) (*herald.Client, *sqlite.Store, *fcmemu.Emulator) {
	st, err := sqlite.Open(ctx, filepath.Join(dir, "herald.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	em := fcmemu.New(fcmemu.Config{})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		log.Fatal(err)
	}
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("demo"), Endpoint: em.URL()})
	if err != nil {
		log.Fatal(err)
	}
	client, err := herald.NewClient(herald.Config{
		Store:     st,
		Providers: map[string]herald.Provider{"fcm": push},
		Worker:    herald.WorkerConfig{PollInterval: 20 * time.Millisecond},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.PutUser(ctx, "u1", herald.UserInput{Timezone: "Asia/Seoul"}); err != nil {
		log.Fatal(err)
	}
	if _, err := client.RegisterDevice(ctx, "u1", herald.DeviceInput{DeviceID: "d1", Token: "tok-1", Platform: "android"}); err != nil {
		log.Fatal(err)
	}
	return client, st, em
}

func waitForMessages(em *fcmemu.Emulator, n int) {
	deadline := time.Now().Add(10 * time.Second)
	for len(em.Messages()) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

func ExampleClient_Enqueue() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "herald-example")
	defer os.RemoveAll(dir)
	client, st, em := newExampleClient(ctx, dir)
	defer st.Close()
	defer em.Close()
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Stop(ctx)

	req := herald.Request{
		IdempotencyKey: "reservation-42-confirmed",
		UserID:         "u1",
		Type:           "reservation_confirmed",
		Title:          "Booked",
		Body:           "See you at 7",
	}
	res, err := client.Enqueue(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	// Retrying the same trigger is safe: the key returns the original.
	again, _ := client.Enqueue(ctx, req)

	waitForMessages(em, 1)
	fmt.Println("deliveries:", res.Notifications[0].Deliveries)
	fmt.Println("same notification on retry:", again.Replayed && again.Notifications[0].ID == res.Notifications[0].ID)
	fmt.Println("messages at FCM:", len(em.MessagesTo("tok-1")))
	// Output:
	// deliveries: 1
	// same notification on retry: true
	// messages at FCM: 1
}

// ExampleClient_EnqueueTx records a reservation and its confirmation in
// one transaction (S4.1, the transactional outbox): the notification
// exists if and only if the reservation commits.
func ExampleClient_EnqueueTx() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "herald-example")
	defer os.RemoveAll(dir)
	client, st, em := newExampleClient(ctx, dir)
	defer st.Close()
	defer em.Close()
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Stop(ctx)

	// The application's own table, in the same database. On SQLite the
	// business transaction must run on Herald's write connection.
	db := st.DB()
	if _, err := db.ExecContext(ctx, `CREATE TABLE reservations (id TEXT PRIMARY KEY, user_id TEXT)`); err != nil {
		log.Fatal(err)
	}
	book := func(id string, commit bool) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO reservations VALUES (?, 'u1')`, id); err != nil {
			log.Fatal(err)
		}
		if _, err := client.EnqueueTx(ctx, tx, herald.Request{
			IdempotencyKey: "reservation-" + id, UserID: "u1",
			Type: "reservation_confirmed", Title: "Booked", Body: "Reservation " + id,
		}); err != nil {
			log.Fatal(err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
		}
	}
	book("r1", true)  // committed: the notification is sent
	book("r2", false) // rolled back: neither the reservation nor its notification exists

	waitForMessages(em, 1)
	var reservations int
	db.QueryRowContext(ctx, `SELECT count(*) FROM reservations`).Scan(&reservations)
	page, _ := client.ListDeliveries(ctx, herald.DeliveryFilter{})
	fmt.Println("reservations:", reservations)
	fmt.Println("deliveries:", len(page.Deliveries))
	fmt.Println("messages at FCM:", len(em.Messages()))
	// Output:
	// reservations: 1
	// deliveries: 1
	// messages at FCM: 1
}

// ExampleClient_EnqueueTx_postgres is the same outbox on PostgreSQL with
// pgx: the reservation and its notification commit together, or neither
// exists. (Compiled, not run: it needs a database.)
func ExampleClient_EnqueueTx_postgres() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/app", postgres.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	client, err := herald.NewClient(herald.Config{Store: st /* Providers: … */})
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/app")
	if err != nil {
		log.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO reservations (id, user_id) VALUES ($1, $2)`, "r1", "u1"); err != nil {
			return err
		}
		_, err := client.EnqueueTx(ctx, tx, herald.Request{
			IdempotencyKey: "reservation-r1", UserID: "u1",
			Type: "reservation_confirmed", Title: "Booked", Body: "Reservation r1",
		})
		return err // an error rolls back both
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A deployment's own audience: the users of a CRM segment, paged by id
// after the cursor. Register it as
// herald.Config{AudienceSources: map[string]herald.AudienceSource{"crm-segment": crm}}
// and name it in a rule: "audience":{"source":"crm-segment"}.
func ExampleAudienceSourceFunc() {
	segment := []string{"u1", "u2", "u3", "u4", "u5"} // sorted: ORDER BY user_id
	crm := herald.AudienceSourceFunc(func(ctx context.Context, q herald.AudienceQuery) ([]string, error) {
		i, _ := slices.BinarySearch(segment, q.After)
		if i < len(segment) && segment[i] == q.After {
			i++
		}
		return segment[i:min(i+q.Limit, len(segment))], nil
	})
	// The rule runner asks a page at a time, from the last id it went past.
	q := herald.AudienceQuery{Rule: "vip-deals", EventID: "ev-1", Event: "DEAL", Limit: 2}
	for {
		page, _ := crm.Users(context.Background(), q)
		if len(page) == 0 {
			break
		}
		fmt.Println(page)
		q.After = page[len(page)-1]
	}
	// Output:
	// [u1 u2]
	// [u3 u4]
	// [u5]
}
