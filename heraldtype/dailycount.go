package heraldtype

import "time"

// DailyCount is one item of a batch count toward the daily cap
// (CountDailyBatch of a policy limiter, issue 39 item 3): Owner (a
// notification id) counted toward UserID's local day (YYYY-MM-DD) if fewer
// than Limit owners are counted for it, the count kept until ExpireAt.
type DailyCount struct {
	UserID, Day, Owner string
	Limit              int
	ExpireAt           time.Time
}

// CheckDailyCounts validates a batch count: every limit is at least 1,
// and the items of one user and day carry one limit (the user's cap), so
// that counting them in one statement (each new owner ranked among the
// day's counted ones) is the same as counting them one after the other.
func CheckDailyCounts(items []DailyCount) error {
	type day struct{ user, day string }
	limits := make(map[day]int, len(items))
	for _, c := range items {
		if c.Limit < 1 {
			return FieldErrorf("limit", "must be at least 1")
		}
		k := day{c.UserID, c.Day}
		if l, ok := limits[k]; ok && l != c.Limit {
			return FieldErrorf("limit", "the counts of user %q on %s carry two limits, %d and %d", c.UserID, c.Day, l, c.Limit)
		}
		limits[k] = c.Limit
	}
	return nil
}

// DedupeLock is one item of a batch of de-duplication locks
// (AcquireDedupeBatch of a policy limiter, issue 39 item 3): the lock Key
// for Owner (a notification id) for Window, first writer wins.
type DedupeLock struct {
	Key, Owner string
	Window     time.Duration
}

// CheckDedupeLocks validates a batch of dedupe locks: every window is
// positive.
func CheckDedupeLocks(items []DedupeLock) error {
	for _, l := range items {
		if l.Window <= 0 {
			return FieldErrorf("window", "must be positive")
		}
	}
	return nil
}
