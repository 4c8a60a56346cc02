package rules

import (
	"strings"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// EngagementDialect is what the engagement report's SQL needs of a store:
// the start of a counter's day, and of no interval at all, as SQL over
// the column bucket.
type EngagementDialect struct {
	Day, None string
}

// The dialects of the two stores: PostgreSQL's bucket is a timestamptz,
// SQLite's microseconds since the epoch.
var (
	EngagementPostgres = EngagementDialect{Day: `date_trunc('day', bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
		None: `CAST(NULL AS timestamptz)`}
	EngagementSQLite = EngagementDialect{Day: `bucket - bucket % 86400000000`, None: `NULL`}
)

// EngagementSQL sums the counters f selects (store.EngagementFilter) by
// its groups and event, in group order, reading up to f.Limit+1 groups'
// worth of rows. The columns: start (NULL without an interval), type,
// channel, rule, campaign ("" for a dimension not grouped by), event, sum.
// It reads the primary key's range of the hours, however large the
// deliveries. Test-sends are left out.
func EngagementSQL(f store.EngagementFilter, d EngagementDialect, mark Marker, from, to any) string {
	start := d.None
	switch f.Interval {
	case "hour":
		start = `bucket`
	case "day":
		start = d.Day
	}
	dim := func(on bool, expr string) string {
		if on {
			return expr
		}
		return `''`
	}
	source := func(kind string) string {
		return `CASE WHEN source_kind = '` + kind + `' THEN source_name ELSE '' END`
	}
	// A test-send's sends and receipts are counted (source_kind 'test') but
	// never reported: an operator trying templates on a colleague is not
	// how users engaged.
	var where strings.Builder
	where.WriteString(`bucket >= ` + mark(from) + ` AND bucket < ` + mark(to) + ` AND source_kind <> '` + heraldtype.SourceTest + `'`)
	if f.Type != "" {
		where.WriteString(` AND type = ` + mark(f.Type))
	}
	if f.Channel != "" {
		where.WriteString(` AND channel = ` + mark(f.Channel))
	}
	if f.Rule != "" {
		where.WriteString(` AND source_kind = 'rule' AND source_name = ` + mark(f.Rule))
	}
	if f.Campaign != "" {
		where.WriteString(` AND source_kind = 'campaign' AND source_name = ` + mark(f.Campaign))
	}
	return `SELECT ` + start + `, ` + dim(f.ByType, `type`) + `, ` + dim(f.ByChannel, `channel`) + `, ` +
		dim(f.ByRule, source("rule")) + `, ` + dim(f.ByCampaign, source("campaign")) + `, event, sum(n)
FROM ` + Schema + `engagement_counts
WHERE ` + where.String() + `
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
LIMIT ` + mark(int64(f.Limit+1)*int64(len(store.EngagementEvents)))
}

// PruneEngagementSQL deletes the counters of the hours before a time
// (engagement_retention): a few rows per hour and group, so one statement.
func PruneEngagementSQL(before string) string {
	return `DELETE FROM ` + Schema + `engagement_counts WHERE bucket < ` + before
}
