package console

import (
	"fmt"
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"html/template"
	"strconv"
	"time"
)

// funcs are the helpers every template may call.
var funcs = template.FuncMap{
	"count":       count,
	"capped":      countText,
	"age":         age,
	"when":        when,
	"rfc3339":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"asset":       assetURL,
	"int64":       func(n int) int64 { return int64(n) },
	"inc":         func(i int) int { return i + 1 },
	"maxBulk":     func() int { return herald.MaxBulkReplay },
	"overviewCap": func() int64 { return heraldtype.OverviewCountCap },
	"channels": func() []heraldtype.Channel {
		return overviewChannels
	},
	"rate":   rate,
	"source": sourceLabel,
	"engagementDim": func(r heraldtype.EngagementRow, g string) string {
		v := map[string]string{"type": r.Type, "channel": string(r.Channel), "rule": r.Rule, "campaign": r.Campaign}[g]
		if v == "" {
			return "(none)"
		}
		return v
	},
	"engagementGroupColumns": engagementGroupColumns,
	// The group columns and the ten counts' and rates'.
	"engagementColumns": func(e heraldtype.Engagement) int { return engagementGroupColumns(e) + 10 },
	"eventKinds": func() []string {
		return []string{herald.RecordNotifications, herald.RecordEvents, herald.RecordInterests, herald.RecordRenderFailed}
	},
}

// engagementGroupColumns is how many columns of the engagement table name
// a row's group: its interval's start, then each dimension.
func engagementGroupColumns(e heraldtype.Engagement) int {
	n := len(e.GroupBy)
	if e.Interval != "" {
		n++
	}
	return n
}

// rate writes a rate as a percentage with one decimal, "–" when there is
// none (nothing was sent).
func rate(r *float64) string {
	if r == nil {
		return "–"
	}
	return strconv.FormatFloat(*r*100, 'f', 1, 64) + " %"
}

// count writes n with thousands separators: 12,345.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// age writes a duration the way an operator reads it at a glance: 42 s,
// 3 min 5 s, 2 h 10 min, 3 d 4 h.
func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%d d %d h", s/86400, s%86400/3600)
}

// when writes a time in UTC, to the second; zero is "—".
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// sourceLabel names briefly what made a notification of the history
// lists when a trigger did not: "digest of 20", "escalation step 1",
// "reminder r-1"…; "" for a trigger.
func sourceLabel(src *heraldtype.Source) string {
	if src == nil {
		return ""
	}
	switch src.Kind {
	case heraldtype.SourceDigest:
		return fmt.Sprintf("digest of %d", src.Count)
	case heraldtype.SourceEscalation:
		return fmt.Sprintf("escalation step %d", src.Count)
	case heraldtype.SourceTest:
		return "test-send"
	}
	if src.Name == "" {
		return src.Kind
	}
	return src.Kind + " " + src.Name
}
