package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// Events recorded at once (issue 39 item 3): a store may write concurrent
// events in one transaction (PostgreSQL's group commit), and each must
// still get the answer it would have had alone — its own guard, its own
// replay, its own failure — none lost, none written twice.

// inlineEvent is event id about subject, started by one rule run whose
// inline batch sends one notification to user.
func (f *fixture) inlineEvent(id, subject, user string, seq int64) store.EventRecord {
	run := ruleRun("price-drop", id)
	run.Subject = subject
	r := eventRecord(id, seq, run)
	r.Subject = subject
	p := params(f.notification(user))
	r.Inline = map[string]store.InlineBatch{"price-drop": {Recipients: 1, Cursor: user, Enqueue: &p}}
	return r
}

// historyCount is how many notifications the store holds (at most 200).
func (f *fixture) historyCount() int {
	f.t.Helper()
	h, _, err := f.s.ListHistory(f.ctx, heraldtype.HistoryFilter{Limit: 200}, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(h)
}

func testConcurrentEvents(t *testing.T, newStore NewStore) {
	t.Run("ManySubjectsRedeliveredAndFailing", func(t *testing.T) {
		// 24 events of their own subjects, each delivered twice at once;
		// every fourth sends to a user who does not exist. Each event is
		// written once and answered replayed once; a failing one fails
		// both its deliveries and leaves nothing, whatever it was
		// written beside.
		f := newFixture(t, newStore)
		for _, u := range []string{"u0", "u1", "u2"} {
			f.user(u)
		}
		const n = 24
		fails := func(i int) bool { return i%4 == 3 }
		records := make([]store.EventRecord, n)
		for i := range records {
			user := fmt.Sprint("u", i%3)
			if fails(i) {
				user = "nobody"
			}
			records[i] = f.inlineEvent(fmt.Sprint("ev-", i), fmt.Sprint("product:", i), user, 0)
		}
		var mu sync.Mutex
		written, replayed, notFound := map[string]int{}, map[string]int{}, map[string]int{}
		var wg sync.WaitGroup
		for range 2 {
			for _, r := range records {
				wg.Go(func() {
					got, err := f.s.RecordEvent(f.ctx, r)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND:
						notFound[r.ID]++
					case err != nil:
						t.Errorf("%s: %v", r.ID, err)
					case got.Replayed:
						replayed[r.ID]++
					case got.Conflict:
						t.Errorf("%s: a conflict on a subject of its own", r.ID)
					default:
						written[r.ID]++
						if len(got.Enqueued["price-drop"].Notifications) != 1 {
							t.Errorf("%s: enqueued %+v", r.ID, got.Enqueued)
						}
					}
				})
			}
		}
		wg.Wait()
		want := 0
		for i, r := range records {
			k := store.EventKey{Source: r.Source, ID: r.ID}
			_, ok, err := f.s.RecordedEvent(f.ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case fails(i):
				if notFound[r.ID] != 2 || ok {
					t.Errorf("%s: not found %d times, recorded %v; want 2 and no record", r.ID, notFound[r.ID], ok)
				}
			default:
				want++
				if written[r.ID] != 1 || replayed[r.ID] != 1 || !ok {
					t.Errorf("%s: written %d, replayed %d, recorded %v; want once each", r.ID, written[r.ID], replayed[r.ID], ok)
				}
			}
		}
		if got := f.historyCount(); got != want {
			t.Fatalf("%d notifications, want %d", got, want)
		}
	})
	t.Run("OneSubjectDecidedAgain", func(t *testing.T) {
		// 12 events of one subject at once, each deciding again on the
		// subject's new seq after a conflict, as Track does: all are
		// written, one after another, each exactly once.
		f := newFixture(t, newStore)
		f.user("u1")
		const n = 12
		records := make([]store.EventRecord, n)
		for i := range records {
			records[i] = f.inlineEvent(fmt.Sprint("ev-", i), "product:42", "u1", 0)
		}
		var wg sync.WaitGroup
		for _, r := range records {
			wg.Go(func() {
				for try := 0; try < 10*n; try++ {
					subj, err := f.s.EventSubject(f.ctx, r.Source, r.Subject)
					if err != nil {
						t.Error(err)
						return
					}
					r.Seq = subj.Seq
					got, err := f.s.RecordEvent(f.ctx, r)
					switch {
					case err != nil:
						t.Errorf("%s: %v", r.ID, err)
						return
					case got.Replayed:
						t.Errorf("%s: replayed", r.ID)
						return
					case !got.Conflict:
						return
					}
				}
				t.Errorf("%s: a conflict every try", r.ID)
			})
		}
		wg.Wait()
		subj, err := f.s.EventSubject(f.ctx, "product.inventory.v1", "product:42")
		if err != nil || subj.Seq != n {
			t.Fatalf("subject: %+v %v, want seq %d", subj, err, n)
		}
		if got := f.historyCount(); got != n {
			t.Fatalf("%d notifications, want %d", got, n)
		}
		for _, r := range records {
			run, err := f.s.RuleRun(f.ctx, "price-drop", r.Runs[0].ID)
			if err != nil || run.State != heraldtype.RunDone || run.Enqueued != 1 {
				t.Fatalf("%s: run %+v %v", r.ID, run, err)
			}
		}
	})
}
