package audience

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

type usersFunc func(context.Context, heraldtype.AudienceQuery) ([]string, error)

func (f usersFunc) Users(ctx context.Context, q heraldtype.AudienceQuery) ([]string, error) {
	return f(ctx, q)
}

// A source's page must come in ascending order after the cursor (or the
// run's cursor could not resume it); a page longer than asked is cut.
func TestFromUsersChecksOrder(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		page  []string
		after string
		want  string // the error, or the ids taken
	}{
		"in order":     {[]string{"b", "c"}, "a", "b c"},
		"cut to limit": {[]string{"b", "c", "d", "e"}, "a", "b c d"},
		"out of order": {[]string{"c", "b"}, "a", "ascending order"},
		"not after":    {[]string{"a", "b"}, "a", "ascending order"},
		"a duplicate":  {[]string{"b", "b"}, "", "ascending order"},
		"an empty id":  {[]string{""}, "", "is empty"},
		"the end":      {nil, "z", ""},
	} {
		src := FromUsers(usersFunc(func(_ context.Context, q heraldtype.AudienceQuery) ([]string, error) {
			if q.Rule != "r" || q.After != tc.after || q.Limit != 3 {
				t.Errorf("%s: query %+v", name, q)
			}
			return tc.page, nil
		}), heraldtype.AudienceQuery{Rule: "r"})
		got, err := src.Next(context.Background(), tc.after, 3)
		var ids []string
		for _, u := range got {
			ids = append(ids, u.ID)
		}
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) || tc.want == "" {
				t.Errorf("%s: %v", name, err)
			}
		} else if strings.Join(ids, " ") != tc.want {
			t.Errorf("%s: %v, want %q", name, ids, tc.want)
		}
	}
}

// A rule naming a source this instance does not have waits (an error per
// page) rather than finishing empty.
func TestUnregisteredSourceFails(t *testing.T) {
	t.Parallel()
	src := Resolver{}.ForJob("r", heraldtype.JobAudience{Source: "crm", Limit: 10})
	if _, err := src.Next(context.Background(), "", 10); err == nil || !strings.Contains(err.Error(), `"crm"`) {
		t.Fatalf("got %v", err)
	}
}
