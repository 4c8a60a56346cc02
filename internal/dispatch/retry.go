package dispatch

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// retryWithDefaults fills p's zero Factor and Max with the defaults and
// checks what is left.
func retryWithDefaults(p heraldtype.RetryPolicy) (heraldtype.RetryPolicy, error) {
	if p.Base <= 0 {
		return p, fmt.Errorf("Base must be positive, got %s", p.Base)
	}
	if p.Factor == 0 {
		p.Factor = defaultRetryFactor
	}
	if p.Factor < 1 || math.IsNaN(p.Factor) || math.IsInf(p.Factor, 0) {
		return p, fmt.Errorf("Factor must be a finite number >= 1, got %v", p.Factor)
	}
	if p.Max == 0 {
		p.Max = max(defaultRetryMax, p.Base)
	}
	if p.Max < p.Base {
		return p, errors.New("Max must not be shorter than Base")
	}
	return p, nil
}

// errorBackoff is the wait before retrying a failing store call from a
// loop: it doubles from errorBackoffMin to errorBackoffMax so a database
// outage is neither hammered nor waited out for long once it recovers.
func errorBackoff(prev time.Duration) time.Duration {
	if prev <= 0 {
		return errorBackoffMin
	}
	return min(prev*2, errorBackoffMax)
}

const (
	errorBackoffMin = 50 * time.Millisecond
	errorBackoffMax = 10 * time.Second
)
