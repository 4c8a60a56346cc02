package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// Event is what Herald recorded of an applied event: its key and what
// each rule decided on it (the TrackResult it answered, as the event's
// record keeps it: the first rules.recorded_decisions decisions, and how
// many rules judged it in all).
type Event struct {
	ID, Source, Namespace string
	// Stale: the event's version was not above its subject's last, so no
	// rule judged it.
	Stale     bool
	Decisions []Decision
	// Judged is how many rules judged the event, also those Decisions
	// leaves out (Truncated).
	Judged    int
	Truncated bool
}

// Decision is one rule's decision on an event (herald.RuleOutcome).
type Decision struct {
	Rule     string
	Detected bool
	// Reason is the detector's: why it fired or did not.
	Reason string
	// Run is the id of the run the rule started; Error what stopped it.
	Run, Error string
}

// name names the event in a sentence: its id, and where it came from
// unless it was posted to the API.
func (e *Event) name() string {
	if e.Source == "" || e.Source == "http" {
		return "event " + e.ID
	}
	return fmt.Sprintf("event %s from topic %s", e.ID, e.Source)
}

// eventRank orders the findings about an event that started no run for
// the user: the rule that got furthest first.
var eventRank = map[string]int{
	heraldtype.ExplainOutsideAudience: 0,
	heraldtype.ExplainRuleRunFailed:   1,
	heraldtype.ExplainNotDetected:     2,
}

// noRun explains an event that started no run: stale, or no rule
// detected it (or one did and its audience was empty), one finding per
// rule naming the rule and its detector's reason.
func (r Records) noRun(out heraldtype.Explanation) heraldtype.Explanation {
	ev := r.Event
	if ev.Stale {
		out.Verdict = heraldtype.ExplainEventStale
		out.Message = fmt.Sprintf("%s was stale: its version was not above the last one applied for its subject, so no rule judged it.",
			upperFirst(ev.name()))
		out.Reasons = append(out.Reasons, heraldtype.ExplainReason{Code: out.Verdict, Message: out.Message})
		return out
	}
	out.Reasons = append(out.Reasons, r.decisions(nil)...)
	slices.SortStableFunc(out.Reasons, func(a, b heraldtype.ExplainReason) int { return eventRank[a.Code] - eventRank[b.Code] })
	switch {
	case len(out.Reasons) == 0:
		out.Verdict = heraldtype.ExplainNotDetected
		out.Message = fmt.Sprintf("No rule judged %s.", ev.name())
	case out.Reasons[0].Code != heraldtype.ExplainNotDetected || len(out.Reasons) == 1:
		out.Verdict, out.Message = out.Reasons[0].Code, out.Reasons[0].Message
	default:
		out.Verdict = heraldtype.ExplainNotDetected
		out.Message = fmt.Sprintf("No rule detected %s: %s judged it.", ev.name(), plural(max(ev.Judged, len(out.Reasons)), "rule"))
	}
	if ev.Truncated {
		out.Message = strings.TrimSuffix(out.Message, ".") + fmt.Sprintf(" (the record keeps %d of the %d rules' decisions).", len(ev.Decisions), ev.Judged)
	}
	return out
}

// noneFromEventRuns explains an event whose runs wrote no notification
// for the user: the first run decides, as a rule's run asked about
// alone; the other runs and the rules that started none follow.
func (r Records) noneFromEventRuns(out heraldtype.Explanation) heraldtype.Explanation {
	out.Type = r.Run.Job.Notification.Type
	first := r.runReason(r.Run)
	out.Verdict, out.Message = first.Code, first.Message
	out.Reasons = append(out.Reasons, first)
	for i := range r.Runs {
		if run := &r.Runs[i]; run.Rule != r.Run.Rule {
			out.Reasons = append(out.Reasons, r.runReason(run))
		}
	}
	started := map[string]bool{r.Run.Rule: true}
	for _, run := range r.Runs {
		started[run.Rule] = true
	}
	out.Reasons = append(out.Reasons, r.decisions(started)...)
	return out
}

// decisions are the findings of the rules that started no run (those
// not in started): not detected, with the detector's reason; detected
// without an audience; or stopped by an error.
func (r Records) decisions(started map[string]bool) []heraldtype.ExplainReason {
	ev := r.Event
	var out []heraldtype.ExplainReason
	for _, d := range ev.Decisions {
		if started[d.Rule] {
			continue
		}
		rs := heraldtype.ExplainReason{Rule: d.Rule}
		why := strings.TrimSuffix(d.Reason, ".")
		switch {
		case d.Error != "":
			rs.Code, rs.Error = heraldtype.ExplainRuleRunFailed, d.Error
			rs.Message = fmt.Sprintf("Rule %s could not act on %s: %s.", d.Rule, ev.name(), strings.TrimSuffix(d.Error, "."))
		case d.Detected && d.Run == "":
			rs.Code = heraldtype.ExplainOutsideAudience
			rs.Message = fmt.Sprintf("Rule %s detected %s (%s) and started no run: it reached no one.", d.Rule, ev.name(), why)
		case d.Detected:
			continue // its run is explained where it was loaded
		default:
			rs.Code = heraldtype.ExplainNotDetected
			if why == "" {
				why = "its detector did not fire"
			}
			rs.Message = fmt.Sprintf("Rule %s did not detect %s: %s.", d.Rule, ev.name(), why)
		}
		out = append(out, rs)
	}
	return out
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
