package herald_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// sendLog records the notifications a provider was sent.
type sendLog struct {
	mu   sync.Mutex
	sent map[string]int
}

func (l *sendLog) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	// A send takes a moment, as a provider's does: the window in which a
	// cancel finds the delivery in flight.
	time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	if rand.IntN(10) == 0 {
		// A temporary failure: the delivery goes back to pending for a
		// retry, which the waiting cancel then cancels.
		return "", errors.New("unavailable")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n, _, _ := strings.Cut(m.Key, ".")
	l.sent[n]++
	return "pm", nil
}

func (l *sendLog) count(n string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent[n]
}

// TestCancelRacingSendsPostgres races a cancel with a due send 500 times
// (issue 36 item 4): two instances share PostgreSQL with their workers
// claiming; each round triggers a notification due now on one instance
// and cancels it — by id or by key, after a random moment — on the
// other; a tenth of the sends fail for a retry. Every delivery the cancel decided must be either sent before it
// returned, and reported sent, or reported cancelled and never sent,
// however long the workers run on.
func TestCancelRacingSendsPostgres(t *testing.T) {
	ctx := t.Context()
	dsn, schema := pgtest.NewSchema(t)
	log := &sendLog{sent: map[string]int{}}
	instance := func() *herald.Client {
		c := clusterClient(t, dsn, schema, herald.Config{Providers: map[string]herald.Provider{"fcm": log},
			Logger: slog.New(slog.DiscardHandler)})
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Stop(context.Background()) })
		return c
	}
	a, b := instance(), instance()
	if _, err := a.PutUser(ctx, "u1", herald.UserInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterDevice(ctx, "u1", herald.DeviceInput{DeviceID: "d1", Token: "tok-1", Platform: "android"}); err != nil {
		t.Fatal(err)
	}
	const rounds = 500
	type round struct {
		n          string
		res        herald.CancelResult
		sentBefore int
	}
	rs := make([]round, rounds)
	for i := range rounds {
		key := fmt.Sprintf("cart-%d", i)
		res, err := a.Enqueue(ctx, herald.Request{UserID: "u1", Type: "cart", Title: "Your cart", CancellationKey: key})
		if err != nil {
			t.Fatal(err)
		}
		n := res.Notifications[0].ID
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond) // the race's offset
		req := herald.CancelRequest{NotificationID: n}
		if i%2 == 1 {
			req = herald.CancelRequest{CancellationKey: key, UserID: "u1"}
		}
		cr, err := b.Cancel(ctx, req)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		rs[i] = round{n: n, res: cr, sentBefore: log.count(n)}
	}
	// Let the workers finish whatever they hold: nothing may be left live.
	deadline := time.Now().Add(30 * time.Second)
	for {
		live := 0
		for _, r := range rs {
			st, err := a.GetNotification(ctx, r.n)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status == heraldtype.HistoryPending || st.Status == heraldtype.HistoryDeferred {
				live++
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications still live 30 s after the last cancel", live)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var cancelled, sent int
	for i, r := range rs {
		if len(r.res.Deliveries) != 1 || r.res.InFlight != 0 {
			t.Fatalf("round %d: cancel = %+v, want one delivery decided", i, r.res)
		}
		switch d := r.res.Deliveries[0]; d.Outcome {
		case herald.CancelCancelled:
			cancelled++
			if got := log.count(r.n); got != 0 {
				t.Errorf("round %d: reported cancelled, yet sent %d times", i, got)
			}
		case herald.CancelSent:
			sent++
			if r.sentBefore != 1 || log.count(r.n) != 1 {
				t.Errorf("round %d: reported sent; sent %d times before the cancel returned, %d in all", i, r.sentBefore, log.count(r.n))
			}
		default:
			t.Errorf("round %d: outcome %s", i, d.Outcome)
		}
	}
	t.Logf("%d rounds: %d cancelled before a send, %d sent before the cancel returned", rounds, cancelled, sent)
	if cancelled == 0 || sent == 0 {
		t.Errorf("the race never went both ways: %d cancelled, %d sent", cancelled, sent)
	}
}
