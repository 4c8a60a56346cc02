package audience

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// fakeInterests serves InterestedUsers from a sorted list, as the stores
// do: ids after q.After, at most q.Limit.
type fakeInterests struct {
	users []heraldtype.Interested
	calls int
}

func (f *fakeInterests) InterestedUsers(_ context.Context, q heraldtype.InterestQuery) ([]heraldtype.Interested, error) {
	f.calls++
	var out []heraldtype.Interested
	for _, u := range f.users {
		if u.UserID > q.After && len(out) < q.Limit {
			out = append(out, u)
		}
	}
	return out, nil
}

// A filter that empties whole pages neither ends the audience early nor
// loses a user; the pages stay in id order.
func TestInterestedSkipsFilteredPages(t *testing.T) {
	f := &fakeInterests{}
	for i := range 30 {
		d := map[string]string{"keep": "no"}
		if i == 2 || i >= 25 {
			d["keep"] = "yes"
		}
		f.users = append(f.users, heraldtype.Interested{UserID: fmt.Sprintf("u%02d", i), Data: d})
	}
	src := Interested(f, heraldtype.InterestQuery{Subject: "s"}, func(d map[string]string) bool { return d["keep"] == "yes" })
	var got []string
	var sizes []int
	after := ""
	for {
		page, err := src.Next(t.Context(), after, 4)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		for _, u := range page {
			got = append(got, u.ID)
		}
		if Ends(src, len(page), 4) {
			break
		}
		after = page[len(page)-1].ID
	}
	want := []string{"u02", "u25", "u26", "u27", "u28", "u29"}
	if !slices.Equal(got, want) {
		t.Fatalf("audience %v, want %v", got, want)
	}
	// Each page is filled past the users the filter left out, so only the
	// last is short: a fan-out ends with it.
	if !slices.Equal(sizes, []int{4, 2}) {
		t.Fatalf("page sizes %v, want [4 2]", sizes)
	}
}

// Ends: an empty page ends any source; a short page ends the exhaustive
// ones (list, interests) only.
func TestEnds(t *testing.T) {
	if !Ends(List([]string{"a"}), 1, 2) || Ends(List([]string{"a", "b"}), 2, 2) {
		t.Fatal("a list's short page is its end, a full one is not")
	}
	other := FromUsers(noUsers{}, heraldtype.AudienceQuery{})
	if Ends(other, 1, 2) || !Ends(other, 0, 2) {
		t.Fatal("another source ends with an empty page only")
	}
}

func TestList(t *testing.T) {
	src := List([]string{"c", "a", "b", "a"})
	p1, _ := src.Next(t.Context(), "", 2)
	p2, _ := src.Next(t.Context(), p1[len(p1)-1].ID, 2)
	p3, _ := src.Next(t.Context(), "c", 2)
	if len(p1) != 2 || p1[0].ID != "a" || p1[1].ID != "b" || len(p2) != 1 || p2[0].ID != "c" || len(p3) != 0 {
		t.Fatalf("pages %v %v %v", p1, p2, p3)
	}
}

type noUsers struct{}

func (noUsers) Users(context.Context, heraldtype.AudienceQuery) ([]string, error) { return nil, nil }
