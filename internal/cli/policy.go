package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/policy/redis"
	"github.com/heraldhq/herald/internal/redact"
)

// openPolicyStore opens the delivery policy's limiter named by
// policy_store: nil (the database) when empty, Redis for a redis:// URL.
// Redis must answer at start-up: a policy store that is down makes every
// delivery wait (fail-closed, S1.3), which is better found now.
func openPolicyStore(ctx context.Context, cfg Config) (herald.PolicyLimiter, func(), error) {
	if cfg.PolicyStore == "" {
		return nil, func() {}, nil
	}
	l, closeFn, err := redis.Open(cfg.PolicyStore, cfg.PolicyRedisPrefix)
	if err != nil {
		return nil, nil, fmt.Errorf("policy_store: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.Ping(pctx); err != nil {
		closeFn()
		return nil, nil, fmt.Errorf("policy_store %s: %w", redact.DSN(cfg.PolicyStore), err)
	}
	return l, func() { _ = closeFn() }, nil
}
