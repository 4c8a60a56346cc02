package herald

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The elected leader applies retention every MaintenanceInterval; a
// negative interval (the CLI's maintenance_interval: 0) turns that off,
// with no stand-in interval, while RunMaintenance still prunes on demand
// (issue 17).
func TestLeaderPrunesUnlessDisabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		interval time.Duration
		pruned   bool
	}{
		{"default interval", 0, true},
		{"disabled", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPipeline(t, func(c *Config) { c.MaintenanceInterval = tc.interval })
			p.device("u1", "d1", "tok-1")
			id := p.enqueue(Request{UserID: "u1", Body: "See you at 7"}).Notifications[0].ID
			if n := p.work(); n != 1 {
				t.Fatalf("claimed %d, want 1", n)
			}
			p.clock.Advance(31 * 24 * time.Hour) // past the 30-day retention
			p.work()                             // ticks the leader
			_, err := p.client.GetNotification(p.ctx, id)
			if gone := heraldtype.ErrorCode(err) == heraldtype.ENOTFOUND; gone != tc.pruned {
				t.Fatalf("after the leader's tick: GetNotification err %v, want pruned %v", err, tc.pruned)
			}
			r, err := p.client.RunMaintenance(p.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 0, false: 1}[tc.pruned]; r.Notifications != want {
				t.Fatalf("RunMaintenance pruned %d notifications, want %d", r.Notifications, want)
			}
		})
	}
}
