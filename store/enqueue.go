package store

import (
	"encoding/json"
	"fmt"

	"github.com/heraldhq/herald/heraldtype"
)

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
	if err := CheckDigestParams(p.Digest); err != nil {
		return err
	}
	if err := CheckEscalate(p.Escalate); err != nil {
		return err
	}
	if err := CheckDigestSchedules(p.Digest, p.Now); err != nil {
		return err
	}
	for i, n := range p.Notifications {
		if n.ID == "" || n.UserID == "" {
			return heraldtype.Errorf(heraldtype.EINVALID, "enqueue: notification %d has no id or user id", i)
		}
	}
	return nil
}

// SourceJSON is how both stores keep a notification's source: its JSON,
// "" (stored as NULL) when it has none.
func SourceJSON(src *heraldtype.Source) (string, error) {
	if src == nil {
		return "", nil
	}
	b, err := json.Marshal(src)
	if err != nil {
		return "", fmt.Errorf("notification source: %w", err)
	}
	return string(b), nil
}

// ParseSource reads what SourceJSON wrote; nil for an empty text.
func ParseSource(b []byte) (*heraldtype.Source, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var src heraldtype.Source
	if err := json.Unmarshal(b, &src); err != nil {
		return nil, fmt.Errorf("notification source: %w", err)
	}
	return &src, nil
}
