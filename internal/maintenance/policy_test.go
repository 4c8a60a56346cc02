package maintenance

import (
	"context"
	"testing"
	"time"
)

// prunerFunc adapts a function to PolicyStore.
type prunerFunc func(ctx context.Context, now time.Time) (int, error)

func (f prunerFunc) PrunePolicy(ctx context.Context, now time.Time) (int, error) { return f(ctx, now) }

// Expired dedupe locks and daily counts are pruned with everything else,
// so the SQL policy store never grows without bound (issue 4).
func TestPrunePolicy(t *testing.T) {
	t.Parallel()
	c := &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	var got time.Time
	p := Pruners{Policy: NewPolicyPruner(prunerFunc(func(_ context.Context, now time.Time) (int, error) {
		got = now
		return 7, nil
	}), time.Hour)}
	r, err := p.Prune(t.Context(), c.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r.Policy != 7 || !got.Equal(c.Now()) {
		t.Fatalf("prune = %+v at %v, want 7 policy rows at %v", r, got, c.Now())
	}
}
