package store_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// CheckEnqueue refuses, with EINVALID, every trigger that would write a
// broken row, on behalf of every store.
func TestCheckEnqueue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	good := func() store.EnqueueParams {
		return store.EnqueueParams{MaxAttempts: 4, Now: now,
			Notifications: []heraldtype.Notification{{ID: "n1", UserID: "u1"}}}
	}
	if err := store.CheckEnqueue(good()); err != nil {
		t.Fatalf("a good trigger: %v", err)
	}
	for name, mod := range map[string]func(*store.EnqueueParams){
		"no notifications": func(p *store.EnqueueParams) { p.Notifications = nil },
		"no attempts":      func(p *store.EnqueueParams) { p.MaxAttempts = 0 },
		"no time":          func(p *store.EnqueueParams) { p.Now = time.Time{} },
		"no id":            func(p *store.EnqueueParams) { p.Notifications[0].ID = "" },
		"no user":          func(p *store.EnqueueParams) { p.Notifications[0].UserID = "" },
	} {
		p := good()
		mod(&p)
		if code := heraldtype.ErrorCode(store.CheckEnqueue(p)); code != heraldtype.EINVALID {
			t.Errorf("%s: code %q, want %q", name, code, heraldtype.EINVALID)
		}
	}
}
