package herald

import (
	"context"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/policy"
)

// CapUsage is a user's daily cap today, in the user's local day: the cap
// that applies and the notifications that counted toward it so far.
type CapUsage struct {
	UserID string `json:"user_id"`
	// Day is the user's local date (YYYY-MM-DD) in Timezone.
	Day      string `json:"day"`
	Timezone string `json:"timezone"`
	// Limit is the cap that applies: the user's preference, else the
	// configured one.
	Limit int `json:"limit"`
	// Counted are the notifications counted toward today's cap, as the
	// records show them (the same reading "why didn't this user get it?"
	// gives for a capped notification). It reads at most the user's 50
	// newest notifications of the day, so a cap above that shows at most
	// 50.
	Counted []string `json:"counted"`
	// ResetsAt is the user's next local midnight.
	ResetsAt time.Time `json:"resets_at"`
}

// DailyCapUsage answers how much of the daily cap a user has used today,
// in the user's local day (the operator console's user page, issue 34
// item 2). It reads the records the policy's cap decisions leave, through
// the reading Explain uses for a capped notification: the policy's own
// counter (SQL or Redis) has no read of its own.
func (c *Client) DailyCapUsage(ctx context.Context, userID string) (CapUsage, error) {
	if err := validID("id", userID); err != nil {
		return CapUsage{}, err
	}
	user, err := c.store.GetUser(ctx, userID)
	if err != nil {
		return CapUsage{}, err
	}
	loc := time.UTC
	if l, err := time.LoadLocation(user.Timezone); err == nil {
		loc = l
	}
	now := c.now().UTC()
	// explainCap reads the day of a delivery's decision; today's is the
	// day of a decision taken now, by no notification of the user's.
	cp, err := c.explainCap(ctx, &heraldtype.Notification{UserID: userID}, &heraldtype.Delivery{UpdatedAt: now}, loc)
	if err != nil {
		return CapUsage{}, err
	}
	_, resets := policy.LocalDay(now, loc)
	return CapUsage{UserID: userID, Day: cp.Day, Timezone: loc.String(), Limit: cp.Limit, Counted: cp.Counted, ResetsAt: resets}, nil
}
