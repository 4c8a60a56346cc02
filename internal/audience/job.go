package audience

import (
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// ForJob returns the source of a rule run's audience (issue 20 item 3,
// S3.3): its explicit users, or the users with an interest in its subject
// (the event's, or a topic's "topic:deals" for its subscribers) — of its
// kinds, since its time, and, with a bound, only the watchers
// whose own bound (a target price in their interest's data) the event's
// value meets; a watcher without a bound is kept. The job is fixed when
// the event is applied, so every batch of the run and its resumption
// after a crash page the same audience.
func ForJob(a heraldtype.JobAudience, st InterestStore) Source {
	if a.Subject == "" {
		return List(a.UserIDs)
	}
	var keep func(map[string]string) bool
	if b := a.AtMost; b != nil {
		keep = func(data map[string]string) bool {
			v, ok := data[b.InterestField]
			if !ok {
				return true
			}
			bound, err := strconv.ParseFloat(v, 64)
			return err != nil || b.Value <= bound
		}
	}
	return Interested(st, heraldtype.InterestQuery{Subject: a.Subject, Kinds: a.Kinds, Since: a.Since}, keep)
}
