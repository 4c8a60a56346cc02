package audience

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

type countingInterests struct{ reads int }

func (c *countingInterests) InterestedUsers(context.Context, heraldtype.InterestQuery) ([]heraldtype.Interested, error) {
	c.reads++
	return []heraldtype.Interested{{UserID: "from-the-store"}}, nil
}

// TestReadAhead: a page read ahead answers exactly the first query the
// job's interest source makes, and nothing else.
func TestReadAhead(t *testing.T) {
	since := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	a := heraldtype.JobAudience{Subject: "product:42", Kinds: []string{"VIEW"}, Since: since, Limit: 10}
	q, ok := FirstInterestQuery(a, 3)
	if !ok {
		t.Fatal("an interest audience has a first query")
	}
	st := &countingInterests{}
	ahead := ReadAhead(st, []heraldtype.InterestQuery{q}, [][]heraldtype.Interested{{{UserID: "u1"}, {UserID: "u2"}}})
	src := Resolver{Interests: ahead}.ForJob("price-drop", a)
	users, err := src.Next(t.Context(), "", 3)
	if err != nil || len(users) != 2 || users[0].ID != "u1" || st.reads != 0 {
		t.Fatalf("first page: %+v %v, %d reads of the store", users, err, st.reads)
	}
	// Another page, size or kind is the store's.
	for _, other := range []heraldtype.JobAudience{
		{Subject: "product:42", Kinds: []string{"VIEW", "CLICK"}, Since: since, Limit: 10},
		{Subject: "product:43", Kinds: []string{"VIEW"}, Since: since, Limit: 10},
		{Subject: "product:42", Kinds: []string{"VIEW"}, Since: since.Add(time.Second), Limit: 10},
	} {
		if users, err := (Resolver{Interests: ahead}).ForJob("r", other).Next(t.Context(), "", 3); err != nil ||
			len(users) != 1 || users[0].ID != "from-the-store" {
			t.Fatalf("%+v: %+v %v", other, users, err)
		}
	}
	if _, err := src.Next(t.Context(), "u2", 3); err != nil || st.reads != 4 {
		t.Fatalf("a later page: %v, %d reads", err, st.reads)
	}
	if _, err := src.Next(t.Context(), "", 4); err != nil || st.reads != 5 {
		t.Fatalf("a larger page: %v, %d reads", err, st.reads)
	}
	for _, b := range []heraldtype.JobAudience{{UserIDs: []string{"u1"}}, {Subject: "s", Source: "crm"}} {
		if _, ok := FirstInterestQuery(b, 3); ok {
			t.Fatalf("%+v is no interest audience", b)
		}
	}
}
