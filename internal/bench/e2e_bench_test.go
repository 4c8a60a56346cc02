package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/provider/fcm"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/postgres"
	"github.com/heraldhq/herald/store/postgres/pgtest"
	"github.com/heraldhq/herald/store/sqlite"
)

// BenchmarkEndToEnd measures the whole delivery path in one process:
// Client.Enqueue (triggers of 100 recipients) → the store → the real
// worker (claim, send, batched completion) → the FCM client → the
// emulator over loopback HTTP. It reports deliveries/s and the p99
// trigger → provider latency.
func BenchmarkEndToEnd(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchEndToEnd(b, st)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn, schema := pgtest.NewSchema(b)
		st, err := postgres.Open(b.Context(), dsn, postgres.Options{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		benchEndToEnd(b, st)
	})
}

func benchEndToEnd(b *testing.B, st store.Store) {
	ctx := b.Context()
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	sk := newSink(false)
	em, err := startEmulator("", sk)
	if err != nil {
		b.Fatal(err)
	}
	defer em.Close()
	push, err := fcm.New(fcm.Config{CredentialsJSON: em.ServiceAccountJSON("bench"), Endpoint: em.URL()})
	if err != nil {
		b.Fatal(err)
	}
	c, err := herald.NewClient(herald.Config{Store: st, Providers: map[string]herald.Provider{"fcm": push},
		MaintenanceInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	const recipients = 100
	users := make([]string, recipients)
	for i := range users {
		users[i] = "u" + strconv.Itoa(i)
		if _, err := c.PutUser(ctx, users[i], herald.UserInput{}); err != nil {
			b.Fatal(err)
		}
		in := herald.DeviceInput{DeviceID: users[i] + "-d", Token: "tok-" + users[i], Platform: heraldtype.PlatformAndroid}
		if _, err := c.RegisterDevice(ctx, users[i], in); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer c.Stop(context.WithoutCancel(ctx))
	b.ReportAllocs()
	b.ResetTimer()
	triggers := (b.N + recipients - 1) / recipients
	for k := range triggers {
		_, err := c.Enqueue(ctx, herald.Request{UserIDs: users, Type: "bench", Title: "Hello", Body: "World",
			Data: map[string]string{TriggerTimeKey: strconv.FormatInt(time.Now().UnixNano(), 10), "k": fmt.Sprint(k)}})
		if err != nil {
			b.Fatal(err)
		}
	}
	want := uint64(triggers * recipients)
	deadline := time.Now().Add(5 * time.Minute)
	for sk.accepted.Load() < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d pushes after 5 minutes", sk.accepted.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(want)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(sk.latency.quantile(0.99).Microseconds())/1000, "p99-ms")
}
