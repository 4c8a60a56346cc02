package postgres_test

import (
	"testing"

	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/policy/policytest"
)

// TestLimiter runs the Limiter suite on PostgreSQL.
func TestLimiter(t *testing.T) {
	policytest.Run(t, policytest.Harness{New: func(t *testing.T) policy.Limiter { return newStore(t) }})
}
