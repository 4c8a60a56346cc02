package heraldclient

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// Engagement reads the engagement report (GET /v1/engagement): per group,
// the deliveries sent and the receipts of each event, with the delivery,
// open and click rates.
func (c *Client) Engagement(ctx context.Context, q heraldtype.EngagementQuery) (heraldtype.Engagement, error) {
	v := newQuery().time("from", q.From).time("to", q.To).str("interval", q.Interval).
		str("group_by", strings.Join(q.GroupBy, ",")).str("type", q.Type).str("channel", string(q.Channel)).
		str("rule", q.Rule).str("campaign", q.Campaign)
	var e heraldtype.Engagement
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/engagement", query: url.Values(v), out: &e})
	return e, err
}
