package fault

import "time"

// NotBefore remembers, per target (a device token, a subscription, a phone
// number), until when the emulator asked the sender to wait with a
// Retry-After, so that a send arriving earlier can be counted as an early
// retry: the test that a sender honours Retry-After. It is not safe for
// concurrent use; the emulator guards it with its own lock. The zero value
// is ready to use.
type NotBefore struct {
	until map[string]time.Time
}

// Early reports whether a send to key at now comes before the Retry-After
// the emulator last gave key.
func (n *NotBefore) Early(key string, now time.Time) bool {
	nb, ok := n.until[key]
	return ok && now.Before(nb)
}

// Note records that key was answered at now with a Retry-After of seconds
// (nothing if seconds is not positive). An HTTP-date can only say whole
// seconds, so with httpDate the deadline is truncated to what the header
// tells the sender. A later deadline already noted is kept.
func (n *NotBefore) Note(key string, now time.Time, seconds int, httpDate bool) {
	if seconds <= 0 {
		return
	}
	until := now.Add(time.Duration(seconds) * time.Second)
	if httpDate {
		until = until.Truncate(time.Second)
	}
	if until.After(n.until[key]) {
		if n.until == nil {
			n.until = make(map[string]time.Time)
		}
		n.until[key] = until
	}
}

// Reset forgets every deadline.
func (n *NotBefore) Reset() { clear(n.until) }
