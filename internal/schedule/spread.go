package schedule

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"
)

// Spread returns key's offset for occurrence in [0, window): a fleet-wide
// due time (09:00 for a million users) becomes a uniform spread over the
// window (issue 19 item 5). It is a hash of (key, occurrence), so the
// offset is the same on every instance and every retry — a restarted
// scheduler computes the same due time — and differs from one occurrence to
// the next, so no user is always last. Offsets are whole seconds when the
// window is at least a second; a window ≤ 0 gives 0.
func Spread(key, occurrence string, window time.Duration) time.Duration {
	if window <= 0 {
		return 0
	}
	h := hash64("spread", key, occurrence)
	if window < time.Second {
		return time.Duration(h % uint64(window))
	}
	return time.Duration(h%uint64(window/time.Second)) * time.Second
}

// Jitter returns the deterministic offset, in [0, gap), that moves a
// user's occurrence off a colliding one (S2.5: no two reminders of one
// user closer than gap). It is a hash of (user, occurrence), not a random
// draw, so a retried or re-run decision moves the occurrence to the same
// place; gap ≤ 0 gives 0.
func Jitter(user, occurrence string, gap time.Duration) time.Duration {
	if gap <= 0 {
		return 0
	}
	return time.Duration(hash64("jitter", user, occurrence) % uint64(gap))
}

// Avoid returns the earliest time at or after due that is at least gap
// away from every time in taken (the user's other reminders' due times),
// moved past a collision by gap plus Jitter: a due time that collides with
// t moves to t + gap + Jitter(user, occurrence, gap), then past the next
// collision the same way. It is deterministic and bounded — one pass over
// taken, no retry loop — and the result is less than due + 3·gap·len(taken)
// (S2.5; the seed moved a collision by a random offset, up to 50 tries).
func Avoid(due time.Time, taken []time.Time, gap time.Duration, user, occurrence string) time.Time {
	if gap <= 0 || len(taken) == 0 {
		return due
	}
	sorted := slices.Clone(taken)
	slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
	j := Jitter(user, occurrence, gap)
	t := due
	for _, x := range sorted {
		if d := t.Sub(x); d > -gap && d < gap {
			t = x.Add(gap + j)
		}
	}
	return t
}

func hash64(domain, a, b string) uint64 {
	h := fnv.New64a()
	var n [8]byte
	for _, s := range [...]string{domain, a, b} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	// FNV's low bits mix poorly for keys that differ only at the end;
	// finish with a 64-bit mixer (splitmix64's).
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
