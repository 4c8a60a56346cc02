package cli

import (
	"testing"
)

func TestOpenPolicyStore(t *testing.T) {
	t.Parallel()
	l, closeFn, err := openPolicyStore(t.Context(), Config{})
	if err != nil || l != nil {
		t.Fatalf("empty policy_store = %v, %v; want the database (nil)", l, err)
	}
	closeFn()
	if _, _, err := openPolicyStore(t.Context(), Config{PolicyStore: "memcached://x"}); err == nil {
		t.Fatal("a non-redis policy_store was accepted")
	}
	// Nothing listens on port 1: start-up fails rather than every delivery.
	if _, _, err := openPolicyStore(t.Context(), Config{PolicyStore: "redis://127.0.0.1:1/0"}); err == nil {
		t.Fatal("an unreachable Redis was accepted")
	}
}
