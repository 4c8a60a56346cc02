package audience

import (
	"strconv"

	"github.com/heraldhq/herald/heraldtype"
)

// Resolver turns a rule run's resolved audience into its Source: the
// interests in the database, the Go sources the embedding program
// registered by name, and the bounds of audience webhooks.
type Resolver struct {
	Interests InterestStore
	Sources   map[string]Users
	Webhooks  WebhookConfig
}

// ForJob returns the source of a rule run's audience (issue 20 item 3,
// S3.3): the registered source it names or its webhook, each asked for the
// run's event; its explicit users; or the users with an interest in its
// subject (the event's, or a topic's "topic:deals" for its subscribers) —
// of its kinds, since its time, and, with a bound, only the watchers
// whose own bound (a target price in their interest's data) the event's
// value meets; a watcher without a bound is kept. The job is fixed when
// the event is applied, so every batch of the run and its resumption
// after a crash page the same audience.
func (r Resolver) ForJob(rule string, a heraldtype.JobAudience) Source {
	switch {
	case a.Source != "" || a.Webhook != nil:
		q := heraldtype.AudienceQuery{Rule: rule}
		if e := a.Event; e != nil {
			q.EventID, q.Event, q.Subject, q.UserID, q.Data = e.ID, e.Name, e.Subject, e.UserID, e.Data
		}
		if a.Webhook != nil {
			return Webhook(r.Webhooks, *a.Webhook, q)
		}
		src, ok := r.Sources[a.Source]
		if !ok {
			return unregistered(a.Source)
		}
		return FromUsers(src, q)
	case a.Subject == "":
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
	return Interested(r.Interests, interestQuery(a), keep)
}

// interestQuery is the query of an interest audience, before its paging.
func interestQuery(a heraldtype.JobAudience) heraldtype.InterestQuery {
	return heraldtype.InterestQuery{Subject: a.Subject, Kinds: a.Kinds, Since: a.Since}
}
