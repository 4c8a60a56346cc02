package dispatch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// scopedSender is a Web Push–like fake: its throttle scope is the host of
// the device's token, and hosts in hostile answer every send with 429.
type scopedSender struct {
	hostile string
	mu      sync.Mutex
	sends   map[string]int // per host
}

func tokenHost(token string) string {
	_, rest, _ := strings.Cut(token, "://")
	host, _, _ := strings.Cut(rest, "/")
	return host
}

func (s *scopedSender) ThrottleScope(job *heraldtype.Job) string { return tokenHost(job.Device.Token) }

func (s *scopedSender) Send(_ context.Context, m *heraldtype.Message) (string, error) {
	host := tokenHost(m.Device.Token)
	s.mu.Lock()
	s.sends[host]++
	s.mu.Unlock()
	if host == s.hostile {
		return "", sendErr(heraldtype.ClassThrottled, "rate_limited")
	}
	return "pm-" + m.Key, nil
}

func (s *scopedSender) count(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sends[host]
}

// TestThrottleScopeIsolatesHostileEndpoint: a Web Push endpoint whose
// push service answers every send with 429 slows the deliveries to its
// own host; another push service's keep their full rate (issue 23). Any
// throttle wait hands the delivery back (sleep reports a stop), so a
// slowed host shows as fewer sends.
func TestThrottleScopeIsolatesHostileEndpoint(t *testing.T) {
	t.Parallel()
	const hostile, healthy = "evil.example", "push.example"
	s := &scopedSender{hostile: hostile, sends: map[string]int{}}
	h := newHarness(t, map[string]Sender{"webpush": s}, nil)
	h.w.sleep = func(context.Context, time.Duration) bool { return false }
	device := func(host string, i int) *heraldtype.Device {
		return &heraldtype.Device{ID: fmt.Sprintf("%s-%d", host, i), UserID: "u1",
			Platform: heraldtype.PlatformWeb, Token: fmt.Sprintf("https://%s/sub/%d", host, i),
			PushOptIn: true, Status: heraldtype.DeviceActive}
	}
	// 100 deliveries/s to each host for 20 simulated seconds; the rates
	// are compared over the last 10.
	const perSecond, seconds = 100, 20
	var hostileBefore, healthyBefore int
	for i := range perSecond * seconds {
		if i == perSecond*seconds/2 {
			hostileBefore, healthyBefore = s.count(hostile), s.count(healthy)
		}
		h.clock.Advance(time.Second / perSecond)
		h.add(fakeDelivery{provider: "webpush", device: device(hostile, i)})
		h.add(fakeDelivery{provider: "webpush", device: device(healthy, i)})
		if _, err := h.w.RunOnce(context.Background()); err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	}
	offered := perSecond * seconds / 2
	if got := s.count(healthy) - healthyBefore; got != offered {
		t.Errorf("healthy push service: %d sends in the last %ds, want all %d (its rate unchanged)", got, seconds/2, offered)
	}
	if got := s.count(hostile) - hostileBefore; got > offered/10 {
		t.Errorf("hostile push service: %d sends in the last %ds of %d offered, want it slowed to under a tenth", got, seconds/2, offered)
	}
}

// TestThrottleScopesBounded: however many push services devices name, a
// worker tracks at most maxThrottleScopes, evicting unthrottled ones
// before a throttled one.
func TestThrottleScopesBounded(t *testing.T) {
	t.Parallel()
	s := scopedThrottles{m: make(map[throttleKey]*throttle)}
	now := start()
	slow := s.get(throttleKey{"webpush", "slow.example"})
	overQuota(slow, now)
	for i := range 3 * maxThrottleScopes {
		s.get(throttleKey{"webpush", fmt.Sprintf("h%d.example", i)})
		if len(s.m) > maxThrottleScopes {
			t.Fatalf("%d scopes tracked, want at most %d", len(s.m), maxThrottleScopes)
		}
	}
	if got := s.get(throttleKey{"webpush", "slow.example"}); got != slow {
		t.Error("the throttled scope was evicted while unthrottled ones were tracked")
	}
}

// A sender without ThrottleScope (FCM, APNs), or naming "", goes through
// the provider's own throttle, as before.
func TestThrottleForUnscopedIsProviderWide(t *testing.T) {
	t.Parallel()
	s := &scopedSender{sends: map[string]int{}}
	h := newHarness(t, map[string]Sender{"fcm": okSender(), "webpush": s}, nil)
	fcm := &heraldtype.Job{Delivery: heraldtype.Delivery{Provider: "fcm"}, Device: &heraldtype.Device{Token: "tok"}}
	if h.w.throttleFor(okSender(), fcm) != h.w.throttles["fcm"] {
		t.Error("an unscoped sender does not use its provider's throttle")
	}
	web := &heraldtype.Job{Delivery: heraldtype.Delivery{Provider: "webpush"}, Device: &heraldtype.Device{Token: "no-host"}}
	if h.w.throttleFor(s, web) != h.w.throttles["webpush"] {
		t.Error("an empty scope does not use its provider's throttle")
	}
	web.Device.Token = "https://a.example/x"
	if th := h.w.throttleFor(s, web); th == h.w.throttles["webpush"] || th.scope != "a.example" {
		t.Errorf("scoped throttle = %+v", th.scope)
	}
}
