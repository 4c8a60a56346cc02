package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// engagement: GET /v1/engagement?from=&to=&interval=&group_by=&type=&channel=&rule=&campaign=
// answers the engagement report (issue 35 item 3): per group, the
// deliveries sent and the receipts of each event, with the rates, from the
// counters each send and receipt keeps.
func (s *Server) engagement(w http.ResponseWriter, r *http.Request) error {
	q, err := parseEngagementQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	rep, err := s.client.Engagement(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rep)
	return nil
}

// parseEngagementQuery turns the query string into a query; an unknown or
// repeated parameter is an error. group_by is a comma-separated list.
func parseEngagementQuery(raw string) (herald.EngagementQuery, error) {
	var q herald.EngagementQuery
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return q, heraldtype.Errorf(heraldtype.EINVALID, "the query string is malformed: %s", err.Error())
	}
	names := make([]string, 0, len(vals))
	for name := range vals {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		vs := vals[name]
		if len(vs) > 1 {
			return q, heraldtype.FieldErrorf(name, "is given %d times; give it once", len(vs))
		}
		v := vs[0]
		switch name {
		case "from":
			if q.From, err = parseTime(name, v); err != nil {
				return q, err
			}
		case "to":
			if q.To, err = parseTime(name, v); err != nil {
				return q, err
			}
		case "interval":
			q.Interval = v
		case "group_by":
			if v != "" {
				q.GroupBy = strings.Split(v, ",")
			}
		case "type":
			q.Type = v
		case "channel":
			q.Channel = heraldtype.Channel(v)
		case "rule":
			q.Rule = v
		case "campaign":
			q.Campaign = v
		default:
			return q, heraldtype.FieldErrorf(name, "is not a parameter (from, to, interval, group_by, type, channel, rule, campaign)")
		}
	}
	return q, nil
}
