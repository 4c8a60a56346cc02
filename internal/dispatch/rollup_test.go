package dispatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// TestRollupCountsAttempts: sent and failed attempts are counted in
// memory by minute, channel and code, and reach the store only when the
// rollup is flushed — one write for the lot; a failed flush keeps the
// counts for the next one.
func TestRollupCountsAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": scripted(nil, sendErr(heraldtype.ClassPermanent, "UNREGISTERED"),
		sendErr(heraldtype.ClassTemporary, "UNAVAILABLE"))}, nil)
	for range 3 {
		h.add(fakeDelivery{})
	}
	h.runOnce(3)
	if got := h.store.rollup(); len(got) != 0 {
		t.Fatalf("the rollup reached the store before its flush: %v", got)
	}
	h.store.failMinutes = 1
	if err := h.w.flushRollup(context.Background()); err == nil {
		t.Fatal("a refused flush reported no error")
	}
	if err := h.w.flushRollup(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := h.store.rollup()
	want := map[string]int64{"sent": 1, "failed:UNREGISTERED": 1, "failed:UNAVAILABLE": 1}
	if len(got) != len(want) {
		t.Fatalf("rollup %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("rollup %v, want %v", got, want)
		}
	}
	for k := range h.store.minutes {
		if k.Channel != heraldtype.ChannelPush || !k.Minute.Equal(start().Truncate(time.Minute)) {
			t.Errorf("row %+v: want channel push, minute %s", k, start())
		}
	}
	// Nothing new: nothing written.
	h.store.failMinutes = 1
	if err := h.w.flushRollup(context.Background()); err != nil {
		t.Fatalf("an empty flush wrote: %v", err)
	}
}

// TestRollupBoundsItsKeys: past maxRollupKeys a new code counts as other.
func TestRollupBoundsItsKeys(t *testing.T) {
	t.Parallel()
	r := newRollup()
	at := start()
	for i := range maxRollupKeys + 10 {
		o := store.Outcome{DeliveryID: int64(i), At: at}.To(store.Dead{Failure: store.Failure{ErrorCode: "code" + string(rune('a'+i%26)) + time.Duration(i).String()}})
		r.record(heraldtype.ChannelPush, &o)
	}
	rows := r.take()
	if len(rows) > maxRollupKeys+1 {
		t.Fatalf("%d keys held", len(rows))
	}
	var other int64
	for _, row := range rows {
		if row.ErrorCode == rollupOther {
			other = row.Count
		}
	}
	if other != 10 {
		t.Fatalf("other = %d, want 10", other)
	}
}

// TestRollupFlushedOnStop: a started worker flushes on its interval and
// once more when it stops.
func TestRollupFlushedOnStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, map[string]Sender{"fcm": okSender()}, func(c *Config) { c.RollupInterval = time.Hour })
	h.add(fakeDelivery{})
	if err := h.w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the delivery sent", func() bool { return h.store.count(heraldtype.StateSent) == 1 })
	if err := h.w.Stop(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if got := h.store.rollup()["sent"]; got != 1 {
		t.Fatalf("after stop the rollup has %d sent, want 1", got)
	}
}
