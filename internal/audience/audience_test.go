package audience

import (
	"context"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

func TestValidateNamesTheField(t *testing.T) {
	for _, c := range []struct {
		a     heraldtype.Audience
		field string
	}{
		{heraldtype.Audience{All: true}, ""},
		{heraldtype.Audience{ActiveWithin: heraldtype.Duration(168 * time.Hour)}, ""},
		{heraldtype.Audience{}, "audience"},
		{heraldtype.Audience{All: true, ActiveWithin: heraldtype.Duration(time.Hour)}, "audience"},
		{heraldtype.Audience{ActiveWithin: heraldtype.Duration(time.Minute)}, "audience.active_within"},
		{heraldtype.Audience{ActiveWithin: heraldtype.Duration(400 * 24 * time.Hour)}, "audience.active_within"},
	} {
		err := Validate(c.a)
		var got string
		if he, ok := err.(*heraldtype.Error); ok {
			got = he.Field
		}
		if got != c.field || (c.field == "") != (err == nil) {
			t.Errorf("%+v: %v, want field %q", c.a, err, c.field)
		}
	}
}

type fakeStore struct{ got store.AudienceQuery }

func (f *fakeStore) AudienceUsers(_ context.Context, q store.AudienceQuery) ([]store.AudienceUser, error) {
	f.got = q
	return []store.AudienceUser{{ID: "u1", Timezone: "Asia/Seoul"}}, nil
}

// "Active within" counts back from the run's time, the same for every
// batch and every resumption.
func TestForCountsBackFromTheRun(t *testing.T) {
	st := &fakeStore{}
	asOf := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	src, err := For(heraldtype.Audience{ActiveWithin: heraldtype.Duration(7 * 24 * time.Hour)}, st, asOf)
	if err != nil {
		t.Fatal(err)
	}
	us, err := src.Next(t.Context(), "u0", 10)
	if err != nil || len(us) != 1 || us[0].ID != "u1" {
		t.Fatalf("Next = %+v, %v", us, err)
	}
	if want := (store.AudienceQuery{After: "u0", Limit: 10, ActiveSince: asOf.Add(-7 * 24 * time.Hour)}); st.got != want {
		t.Fatalf("query %+v, want %+v", st.got, want)
	}
	src, _ = For(heraldtype.Audience{All: true}, st, asOf)
	if _, err := src.Next(t.Context(), "", 5); err != nil || !st.got.ActiveSince.IsZero() {
		t.Fatalf("all users: %+v, %v", st.got, err)
	}
}
