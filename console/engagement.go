package console

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The engagement view (issue 35 item 3): GET /v1/engagement's report as a
// table — sent, delivered, opened, clicked and the rates, per the groups
// and over the range the form asks for.

// engagementRange is one of the form's ranges, ending now.
type engagementRange struct {
	Value, Label string
	D            time.Duration
}

// engagementRanges are the form's ranges.
var engagementRanges = []engagementRange{
	{"24h", "last 24 hours", 24 * time.Hour},
	{"7d", "last 7 days", 7 * 24 * time.Hour},
	{"30d", "last 30 days", 30 * 24 * time.Hour},
	{"90d", "last 90 days", 90 * 24 * time.Hour},
	{"365d", "last 365 days", 365 * 24 * time.Hour},
}

// engagementData is the engagement page's: the form's values and the
// report.
type engagementData struct {
	Range, Interval           string
	GroupBy                   []string
	Type, Channel, Rule, Camp string
	Groups                    []string
	Ranges                    []string
	RangeLabels               map[string]string
	Report                    heraldtype.Engagement
	Err                       *formResult
}

// Grouped reports whether the form groups by g.
func (d engagementData) Grouped(g string) bool { return slices.Contains(d.GroupBy, g) }

func (c *Console) engagement(w http.ResponseWriter, r *http.Request, s Session) error {
	d := engagementData{Range: query(r, "range"), Interval: query(r, "interval"), Type: query(r, "type"),
		Channel: query(r, "channel"), Rule: query(r, "rule"), Camp: query(r, "campaign"),
		Groups: []string{"type", "channel", "rule", "campaign"}, RangeLabels: map[string]string{}}
	for _, rg := range engagementRanges {
		d.Ranges = append(d.Ranges, rg.Value)
		d.RangeLabels[rg.Value] = rg.Label
	}
	if d.Range == "" {
		d.Range = "7d"
	}
	for _, g := range r.URL.Query()["group_by"] {
		if g = strings.TrimSpace(g); g != "" && !slices.Contains(d.GroupBy, g) {
			d.GroupBy = append(d.GroupBy, g)
		}
	}
	if _, given := r.URL.Query()["range"]; !given {
		d.GroupBy = []string{"type", "channel"}
	}
	var err error
	i := slices.IndexFunc(engagementRanges, func(rg engagementRange) bool { return rg.Value == d.Range })
	if i < 0 {
		err = fieldError("range", "must be one of %s", strings.Join(d.Ranges, ", "))
	} else {
		now := time.Now().UTC()
		d.Report, err = c.client.Engagement(r.Context(), herald.EngagementQuery{From: now.Add(-engagementRanges[i].D), To: now,
			Interval: d.Interval, GroupBy: d.GroupBy, Type: d.Type, Channel: heraldtype.Channel(d.Channel), Rule: d.Rule,
			Campaign: d.Camp})
	}
	var status int
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	c.render(w, r, status, "engagement", page{Title: "Engagement", Session: s, Data: d})
	return nil
}
