package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// TestReminderOccurrencesSurviveRestarts: a herald process is SIGKILLed and
// restarted every few seconds while hundreds of one-shot reminders fall
// due; each occurrence is still enqueued exactly once — none skipped, none
// repeated (issue 19 item 4, S2.4, S2.6). The reminder rows, their leases
// and the occurrence's idempotency key reminder:{id}:{n} are all that
// carry the schedule across a crash: nothing lives only in memory.
func TestReminderOccurrencesSurviveRestarts(t *testing.T) {
	c := newCluster(t)
	const n = 300
	users := c.users(n)
	env := append(c.env[:len(c.env):len(c.env)],
		// Short reminder leases, so a killed scheduler's claims return
		// within the test; a fast poll so the successor sees them at once.
		"HERALD_REMINDERS__LEASE=2s",
		"HERALD_REMINDERS__POLL_INTERVAL=100ms",
		"HERALD_REMINDERS__BATCH_SIZE=20",
	)
	// The occurrences fall due over 16 s, from 4 s after now: every
	// restart below lands among them.
	start := time.Now().Add(4 * time.Second)
	window := 16 * time.Second
	ids := make(map[string]string, n) // reminder id → user
	for i, u := range users {
		at := start.Add(window * time.Duration(i) / n).UTC()
		r, _, err := c.client.PutReminder(c.ctx, herald.ReminderRequest{
			Key: fmt.Sprintf("item-%04d", i), UserID: u, Type: "nudge", Title: "Still there?",
			Schedule: heraldtype.Schedule{At: at},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids[r.ID] = u
	}

	// Kill and restart one instance every ~2.5 s across the whole window.
	// The leader lock of a killed instance lives out its TTL (3 s), so
	// each successor also waits to be elected: restarts cost catch-up.
	in := startInstance(t, env)
	var killedAt []time.Time
	for time.Now().Before(start.Add(window + 2*time.Second)) {
		time.Sleep(2500 * time.Millisecond)
		in.kill(t)
		killedAt = append(killedAt, time.Now())
		in = startInstance(t, env)
	}

	// The last instance runs until every reminder has fired and stopped.
	deadline := time.Now().Add(90 * time.Second)
	for {
		page, err := c.client.ListReminders(c.ctx, herald.ReminderFilter{State: heraldtype.ReminderActive, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Reminders) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reminder %s still active after the restarts:\n%s", page.Reminders[0].Key, in.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.waitSettled(time.Minute, in)

	// Every reminder sent once: sent_count 1, completed, and exactly one
	// notification of its user — the one under reminder:{id}:1.
	// lives[k]: occurrences enqueued by the k-th process (before kill k).
	lives := make([]int, len(killedAt)+1)
	for id, u := range ids {
		hist, err := c.client.ListHistory(c.ctx, herald.HistoryFilter{UserID: u, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hist.Notifications) != 1 {
			t.Fatalf("user %s has %d notifications from reminder %s, want exactly 1", u, len(hist.Notifications), id)
		}
		st, err := c.client.GetNotification(c.ctx, hist.Notifications[0].NotificationID)
		if err != nil {
			t.Fatal(err)
		}
		if st.IdempotencyKey != "reminder:"+id+":1" || st.Source == nil || st.Source.ID != id {
			t.Fatalf("user %s's notification: key %q source %+v, want reminder %s's first occurrence", u, st.IdempotencyKey, st.Source, id)
		}
		if !strings.HasPrefix(st.Source.Name, "item-") {
			t.Fatalf("source %+v does not name the reminder's key", st.Source)
		}
		k := 0
		for k < len(killedAt) && st.CreatedAt.After(killedAt[k]) {
			k++
		}
		lives[k]++
	}
	// The test means something only if several of the killed processes
	// enqueued occurrences before they died.
	fired := 0
	for _, n := range lives[:len(killedAt)] {
		if n > 0 {
			fired++
		}
	}
	if fired < 3 {
		t.Fatalf("only %d killed processes enqueued occurrences (per process: %v): the restarts missed the due times", fired, lives)
	}
	page, err := c.client.ListReminders(c.ctx, herald.ReminderFilter{State: heraldtype.ReminderStopped, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Reminders {
		if r.SentCount != 1 || r.StopReason != heraldtype.StopCompleted {
			t.Fatalf("reminder %s: sent_count %d stop %q, want 1 and completed", r.Key, r.SentCount, r.StopReason)
		}
	}
	// Every at_most_once push reached the emulator at most once.
	for key, times := range c.sends() {
		if times > 1 {
			t.Fatalf("delivery %s reached the provider %d times", key, times)
		}
	}
	t.Logf("%d reminders, %d kills, occurrences per process %v, %d sends at the emulator", n, len(killedAt), lives, len(c.sends()))
}
