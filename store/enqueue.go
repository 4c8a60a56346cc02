package store

import "github.com/heraldhq/herald/heraldtype"

// CheckEnqueue rejects a trigger that would write a broken row; the rest
// of the validation is the caller's. Every store's Enqueue and EnqueueTx
// call it first, so all of them refuse the same triggers.
func CheckEnqueue(p EnqueueParams) error {
	if len(p.Notifications) == 0 {
		return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: no notifications")
	}
	if p.MaxAttempts < 1 {
		return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: max attempts must be at least 1")
	}
	if p.Now.IsZero() {
		return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: now is not set")
	}
	for i, n := range p.Notifications {
		if n.ID == "" || n.UserID == "" {
			return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: notification %d has no id or user id", i)
		}
	}
	return nil
}
