package bench

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
)

// TriggerTimeKey is the notification data key in which the load generator
// sends the trigger time (Unix nanoseconds). The emulator reads it back on
// receipt, so trigger → provider latency is measured the same way whether
// Herald runs in this process or elsewhere: both ends of the measurement
// are in the bench process, on one clock.
const TriggerTimeKey = "bench_t"

// sink is the emulator's view of the run: it counts accepted messages,
// measures their latency and, when asked, counts sends per delivery
// idempotency key (data.messageId) to find duplicates.
type sink struct {
	accepted   atomic.Uint64
	firstNanos atomic.Int64
	lastNanos  atomic.Int64
	latency    histogram
	// latencyFrom: pushes of triggers sent before it (Unix nanoseconds)
	// are counted but not measured (Config.Warmup).
	latencyFrom atomic.Int64

	countKeys bool
	mu        sync.Mutex
	perKey    map[string]uint32
}

func newSink(countKeys bool) *sink {
	return &sink{countKeys: countKeys, perKey: make(map[string]uint32)}
}

// onAccept is fcmemu.Config.OnAccept.
func (s *sink) onAccept(r fcmemu.Received) {
	s.accepted.Add(1)
	now := r.ReceivedAt.UnixNano()
	s.firstNanos.CompareAndSwap(0, now)
	for {
		cur := s.lastNanos.Load()
		if now <= cur || s.lastNanos.CompareAndSwap(cur, now) {
			break
		}
	}
	if v, ok := dataValue(r.Message, TriggerTimeKey); ok {
		if ns, err := strconv.ParseInt(v, 10, 64); err == nil && ns >= s.latencyFrom.Load() {
			s.latency.record(r.ReceivedAt.Sub(time.Unix(0, ns)))
		}
	}
	if s.countKeys {
		if key, ok := dataValue(r.Message, "messageId"); ok {
			s.mu.Lock()
			s.perKey[key]++
			s.mu.Unlock()
		}
	}
}

// sends returns how often each delivery key reached the emulator.
func (s *sink) sends() map[string]uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]uint32, len(s.perKey))
	for k, v := range s.perKey {
		out[k] = v
	}
	return out
}

// dataValue finds "key":"value" in an FCM message. Herald's data keys and
// the values the bench cares about (digits, ULIDs and dots) need no JSON
// escaping, so a byte search is exact and keeps the decoding cost out of
// the measured process.
func dataValue(msg []byte, key string) (string, bool) {
	pat := make([]byte, 0, len(key)+4)
	pat = append(pat, '"')
	pat = append(pat, key...)
	pat = append(pat, `":"`...)
	i := bytes.Index(msg, pat)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(pat):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}
