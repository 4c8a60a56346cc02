package console

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// The history lists name what made a notification (issue 36 item 5).
func TestSourceLabel(t *testing.T) {
	for _, c := range []struct {
		src  *heraldtype.Source
		want string
	}{
		{nil, ""},
		{&heraldtype.Source{Kind: heraldtype.SourceDigest, ID: "g1", Count: 20}, "digest of 20"},
		{&heraldtype.Source{Kind: heraldtype.SourceEscalation, ID: "n1", Count: 2}, "escalation step 2"},
		{&heraldtype.Source{Kind: heraldtype.SourceReminder, Name: "r-1"}, "reminder r-1"},
		{&heraldtype.Source{Kind: heraldtype.SourceCampaign}, "campaign"},
	} {
		if got := sourceLabel(c.src); got != c.want {
			t.Errorf("sourceLabel(%+v) = %q, want %q", c.src, got, c.want)
		}
	}
}
