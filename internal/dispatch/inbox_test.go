package dispatch

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/store"
)

// Issue 22: an in_app delivery that falls due (a notification scheduled
// for later) needs no sender: after the policy's answer it is completed
// with store.InboxSent, which writes the item, and the users whose items
// were recorded are told after the flush; a refused one is opted out and
// writes nothing.
func TestInboxDeliveryWritesItem(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	var mu sync.Mutex
	var told []string
	refuse := false
	h := newHarness(t, map[string]Sender{"fcm": countingSender(&sends)}, func(cfg *Config) {
		cfg.Policy = policyFunc(func(j *heraldtype.Job, _ time.Time) (policy.Decision, error) {
			if j.Delivery.Channel != heraldtype.ChannelInApp {
				t.Errorf("the policy saw a %s delivery", j.Delivery.Channel)
			}
			if refuse {
				return policy.Decision{Verdict: policy.Block, State: heraldtype.StateOptedOut,
					Code: policy.CodeChannelOptedOut, Reason: "opted out"}, nil
			}
			return policy.Decision{}, nil
		})
		cfg.InboxWritten = func(users []string) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, users...)
		}
	})
	id := h.add(fakeDelivery{inApp: true})
	h.runOnce(1)
	d := h.store.get(id)
	if d.State != heraldtype.StateSent || len(h.store.recorded) != 1 {
		t.Fatalf("in_app delivery = %+v, want sent", d)
	}
	if tr := h.store.recorded[0].Transition(); store.TransitionName(tr) != "InboxSent" {
		t.Fatalf("outcome = %s, want InboxSent", store.TransitionName(tr))
	}
	if sends.Load() != 0 {
		t.Fatalf("a provider was called %d times for an inbox item", sends.Load())
	}
	mu.Lock()
	if !slices.Equal(told, []string{"u1"}) {
		t.Fatalf("InboxWritten learned %v, want [u1]", told)
	}
	told = nil
	mu.Unlock()

	refuse = true
	id = h.add(fakeDelivery{inApp: true})
	h.runOnce(1)
	if d := h.store.get(id); d.State != heraldtype.StateOptedOut || d.LastErrorCode != policy.CodeChannelOptedOut {
		t.Fatalf("refused in_app delivery = %+v, want opted_out", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 0 {
		t.Fatalf("InboxWritten learned %v for a refused item", told)
	}
}
