package herald

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
	"github.com/heraldhq/herald/internal/tmpl"
)

// PolicyLimiter holds the atomic parts of the delivery policy: the
// de-duplication locks and the daily cap counts. The store is the default
// (SQLite or PostgreSQL); the CLI's --policy-store redis://… uses Redis.
// Both behave alike (internal/policy/policytest). See README "Delivery
// policy" for the order of the checks and why.
//
// A limiter that also has the method
//
//	CountDailyBatch(ctx context.Context, items []heraldtype.DailyCount) ([]bool, error)
//
// (CountDaily for each item in order, in one call) counts the daily caps
// of each batch the dispatcher claims at once; both built-in ones do.
type PolicyLimiter interface {
	// AcquireDedupe takes the lock key for owner (a notification id) for
	// window, first writer wins; true when owner holds it.
	AcquireDedupe(ctx context.Context, key, owner string, window time.Duration, now time.Time) (bool, error)
	// CountDaily counts owner once toward userID's local day, up to limit;
	// true when owner is counted.
	CountDaily(ctx context.Context, userID, day, owner string, limit int, expireAt time.Time) (bool, error)
}

// newPolicy builds the type catalogue from the configured types and the
// policy engine the workers consult before every send.
func newPolicy(cfg Config) (*policy.Catalog, *policy.Engine, error) {
	static := make(map[string]heraldtype.NotificationType, len(cfg.Types))
	for name, tc := range cfg.Types {
		if err := validTypeName(name); err != nil {
			return nil, nil, fmt.Errorf("herald: type %q: %w", name, err)
		}
		t, err := tc.resolve(name, cfg.Limits, tmpl.Limits{MaxSteps: cfg.Templates.MaxSteps, MaxBytes: cfg.Templates.MaxBytes,
			MaxDuration: cfg.Templates.MaxDuration})
		if err != nil {
			return nil, nil, fmt.Errorf("herald: type %q: %w", name, err)
		}
		static[name] = t
	}
	types, err := policy.NewCatalog(static, cfg.Store)
	if err != nil {
		return nil, nil, fmt.Errorf("herald: %w", err)
	}
	limiter := cfg.PolicyLimiter
	if limiter == nil {
		limiter = cfg.Store
	}
	engine, err := policy.New(policy.Config{Types: types, Source: cfg.Store, Limiter: limiter, DailyCap: cfg.DailyCap})
	if err != nil {
		return nil, nil, fmt.Errorf("herald: %w", err)
	}
	return types, engine, nil
}
