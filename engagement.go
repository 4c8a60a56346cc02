package herald

import (
	"context"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// EngagementQuery asks for an engagement report (Engagement).
type EngagementQuery = heraldtype.EngagementQuery

// MaxEngagementRange bounds the range of one engagement report.
const MaxEngagementRange = 400 * 24 * time.Hour

// engagementGroups are the dimensions a report may group by.
var engagementGroups = []string{"type", "channel", "rule", "campaign"}

// Engagement answers how the notifications of a time range did (issue 35
// item 3): per group (type, channel, rule, campaign — any of them), the
// deliveries sent and the receipts recorded of each event, with the
// delivery, open and click rates, optionally per hour or day. It reads
// the counters each send and receipt keeps in its own transaction, never
// the deliveries, so a year's report costs its rows, whatever the
// traffic. A receipt counts in the hour it happened, so a rate over a
// short range may count opens of messages sent before it (never above 1).
func (c *Client) Engagement(ctx context.Context, q EngagementQuery) (heraldtype.Engagement, error) {
	if q.To.IsZero() {
		q.To = c.now()
	}
	if q.From.IsZero() {
		q.From = q.To.Add(-7 * 24 * time.Hour)
	}
	q.From, q.To = q.From.UTC(), q.To.UTC()
	if !q.To.After(q.From) {
		return heraldtype.Engagement{}, heraldtype.FieldErrorf("to", "must be after from")
	}
	if q.To.Sub(q.From) > MaxEngagementRange {
		return heraldtype.Engagement{}, heraldtype.FieldErrorf("from", "the range is over %d days; ask for a shorter one", int(MaxEngagementRange.Hours()/24))
	}
	f := store.EngagementFilter{From: q.From, To: q.To, Interval: q.Interval, Type: q.Type, Channel: string(q.Channel),
		Rule: q.Rule, Campaign: q.Campaign, Limit: c.cfg.Limits.MaxEngagementRows}
	switch q.Interval {
	case "", "hour", "day":
	default:
		return heraldtype.Engagement{}, heraldtype.FieldErrorf("interval", "must be hour or day, not %q", q.Interval)
	}
	if q.Channel != "" && !slices.Contains([]heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS,
		heraldtype.ChannelEmail, heraldtype.ChannelInApp}, q.Channel) {
		return heraldtype.Engagement{}, heraldtype.FieldErrorf("channel", "must be one of push, sms, email, in_app, not %q", q.Channel)
	}
	groups := []string{}
	for _, g := range q.GroupBy {
		if slices.Contains(groups, g) {
			return heraldtype.Engagement{}, heraldtype.FieldErrorf("group_by", "names %q twice", g)
		}
		switch g {
		case "type":
			f.ByType = true
		case "channel":
			f.ByChannel = true
		case "rule":
			f.ByRule = true
		case "campaign":
			f.ByCampaign = true
		default:
			return heraldtype.Engagement{}, heraldtype.FieldErrorf("group_by", "must list type, channel, rule or campaign, not %q", g)
		}
		groups = append(groups, g)
	}
	counts, err := c.store.Engagement(ctx, f)
	if err != nil {
		return heraldtype.Engagement{}, err
	}
	out := heraldtype.Engagement{From: q.From.Truncate(time.Hour), To: q.To, Interval: q.Interval, GroupBy: groups,
		Rows: []heraldtype.EngagementRow{}}
	for _, n := range counts {
		row := heraldtype.EngagementRow{Start: n.Start, Type: n.Type, Channel: heraldtype.Channel(n.Channel), Rule: n.Rule,
			Campaign: n.Campaign}
		if k := len(out.Rows); k == 0 || !sameGroup(out.Rows[k-1], row) {
			if k == f.Limit {
				return heraldtype.Engagement{}, heraldtype.FieldErrorf("group_by",
					"the report has more than %d rows; ask for a shorter range, fewer groups or interval=day", f.Limit)
			}
			out.Rows = append(out.Rows, row)
		}
		out.Rows[len(out.Rows)-1].Add(n.Event, n.N)
		out.Total.Add(n.Event, n.N)
	}
	for i := range out.Rows {
		out.Rows[i].SetRates()
	}
	out.Total.SetRates()
	return out, nil
}

// sameGroup reports whether two rows are one group (their counts aside).
func sameGroup(a, b heraldtype.EngagementRow) bool {
	return a.Start.Equal(b.Start) && a.Type == b.Type && a.Channel == b.Channel && a.Rule == b.Rule && a.Campaign == b.Campaign
}
