package audience

import (
	"context"
	"slices"

	"github.com/heraldhq/herald/heraldtype"
)

// A page read ahead (issue 39 item 3): the rule engine reads the first
// page of an event's small interest audiences in the round trip that
// reads the event's rules, record and subject, guessing the queries from
// the rules of the previous event. A page so read answers only the very
// query it was read for; any other goes to the database, so a wrong guess
// costs a read, never a wrong audience.

// FirstInterestQuery is the query the source of a (a rule run's job)
// makes for its first page of limit users; ok is false when a is not an
// interest audience (a registered source, a webhook, a list).
func FirstInterestQuery(a heraldtype.JobAudience, limit int) (q heraldtype.InterestQuery, ok bool) {
	if a.Source != "" || a.Webhook != nil || a.Subject == "" {
		return q, false
	}
	q = interestQuery(a)
	q.Limit = limit
	return q, true
}

// ReadAhead is st answering each of qs with the page read ahead for it
// (pages[i] for qs[i]), and every other query from st.
func ReadAhead(st InterestStore, qs []heraldtype.InterestQuery, pages [][]heraldtype.Interested) InterestStore {
	return readAhead{st: st, qs: qs, pages: pages}
}

type readAhead struct {
	st    InterestStore
	qs    []heraldtype.InterestQuery
	pages [][]heraldtype.Interested
}

func (r readAhead) InterestedUsers(ctx context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error) {
	for i, x := range r.qs {
		if i < len(r.pages) && SameInterestQuery(x, q) {
			return r.pages[i], nil
		}
	}
	return r.st.InterestedUsers(ctx, q)
}

// SameInterestQuery reports whether a and b ask for the same page.
func SameInterestQuery(a, b heraldtype.InterestQuery) bool {
	return a.Subject == b.Subject && slices.Equal(a.Kinds, b.Kinds) && a.Since.Equal(b.Since) && a.After == b.After &&
		a.Limit == b.Limit
}
