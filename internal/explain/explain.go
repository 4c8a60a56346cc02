// Package explain answers "why didn't this user get it?" from the records
// (issue 34 item 2). It is pure, like internal/schedule: the root Client
// gathers the records through its store (a notification with its
// deliveries and their attempts, the user's devices and preferences, the
// notifications that decided a duplicate or the daily cap) and Explain
// turns them into one verdict, a sentence and the findings behind it. It
// never guesses: every finding names the record it comes from, and what
// the records do not show (a dedupe lock held by a notification already
// pruned) is said to be unknown rather than invented.
package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Records are what an explanation is drawn from.
type Records struct {
	UserID string
	Type   string
	Since  time.Time
	// Location is the user's time zone, for the times a message shows.
	Location *time.Location
	// Notification is the notification explained; nil when none was
	// found (then Preferences and TypeConfig describe the present).
	Notification *heraldtype.Notification
	Status       heraldtype.HistoryStatus
	Deliveries   []heraldtype.Delivery
	Devices      []heraldtype.Device
	Preferences  heraldtype.Preferences
	TypeConfig   heraldtype.NotificationType
	Duplicate    *Duplicate
	Cap          *Cap
	// Run is the rule's run asked about, when one was: named, or the
	// event's run that wrote the user's notification (or the first of
	// Runs when none did).
	Run *heraldtype.RuleRun
	// Event is the applied event asked about, when one was, and Runs the
	// rule runs it started, in decision order, when none of them wrote a
	// notification for the user.
	Event *Event
	Runs  []heraldtype.RuleRun
}

// Duplicate is what the records show about a duplicate: the notification
// with the same dedupe key sent before it within the window, when found.
type Duplicate struct {
	Of     string
	SentAt time.Time
	Window time.Duration
}

// Cap is the daily cap a notification ran into: the user's local day, its
// limit and the notifications that counted toward it that day.
type Cap struct {
	Day     string
	Limit   int
	Counted []string
}

// rank orders the codes: the first reason decides the verdict, as the
// status rule (store/rules.StatusRules) lets a send win over a deferral,
// a deferral over a wait, a rate limit over an opt-out, an opt-out over a
// failure.
var rank = map[string]int{
	heraldtype.ExplainSent:            0,
	heraldtype.ExplainQuietHours:      1,
	heraldtype.ExplainPending:         2,
	heraldtype.ExplainDuplicate:       3,
	heraldtype.ExplainDailyCap:        4,
	heraldtype.ExplainOptedOut:        5,
	heraldtype.ExplainNoDevice:        6,
	heraldtype.ExplainDeviceInvalid:   7,
	heraldtype.ExplainDeviceOptedOut:  8,
	heraldtype.ExplainNoAddress:       9,
	heraldtype.ExplainSuppressed:      10,
	heraldtype.ExplainRenderFailed:    11,
	heraldtype.ExplainProviderFailure: 12,
	heraldtype.ExplainUnknown:         13,
	heraldtype.ExplainNoProvider:      14,
	heraldtype.ExplainNotDelivered:    15,
}

// Explain draws the explanation from r.
func Explain(r Records) heraldtype.Explanation {
	if r.Location == nil {
		r.Location = time.UTC
	}
	out := heraldtype.Explanation{UserID: r.UserID, Type: r.Type, Reasons: []heraldtype.ExplainReason{}}
	if r.Event != nil {
		out.Event = r.Event.ID
	}
	if r.Run != nil {
		out.Rule, out.RuleRun = r.Run.Rule, r.Run.ID
		if r.Notification == nil && r.Event != nil {
			return r.noneFromEventRuns(out)
		}
		if r.Notification == nil {
			return r.noneFromRun(out)
		}
	}
	if r.Notification == nil && r.Event != nil {
		return r.noRun(out)
	}
	if r.Notification == nil {
		return r.none(out)
	}
	n := r.Notification
	out.Type, out.NotificationID, out.CreatedAt, out.Status = n.Type, n.ID, n.CreatedAt, r.Status
	// What a delivery's state says is ranked; what the records add about
	// it (the device its failure invalidated) follows the ranked ones.
	var extra []heraldtype.ExplainReason
	for i := range r.Deliveries {
		rs := r.delivery(&r.Deliveries[i])
		out.Reasons = append(out.Reasons, rs[0])
		extra = append(extra, rs[1:]...)
	}
	for _, ch := range n.Channels {
		if !slices.ContainsFunc(r.Deliveries, func(d heraldtype.Delivery) bool { return d.Channel == ch }) {
			out.Reasons = append(out.Reasons, r.missing(ch, n.CreatedAt))
		}
	}
	slices.SortStableFunc(out.Reasons, func(a, b heraldtype.ExplainReason) int { return rankOf(a.Code) - rankOf(b.Code) })
	out.Reasons = append(out.Reasons, extra...)
	if len(out.Reasons) == 0 {
		out.Verdict = heraldtype.ExplainNotDelivered
		out.Message = fmt.Sprintf("Notification %s has no deliveries.", n.ID)
		return out
	}
	first := out.Reasons[0]
	out.Verdict = first.Code
	out.Message = first.Message
	if first.Code == heraldtype.ExplainSent && r.Status == heraldtype.HistoryPartiallySent {
		out.Message = strings.TrimSuffix(first.Message, ".") + "; another channel failed."
	}
	return out
}

func rankOf(code string) int {
	if v, ok := rank[code]; ok {
		return v
	}
	return len(rank)
}

// none explains the absence of a notification of the type: that none was
// created, and what the records say would stop one today.
func (r Records) none(out heraldtype.Explanation) heraldtype.Explanation {
	out.Verdict = heraldtype.ExplainNoNotification
	if r.Since.IsZero() {
		out.Message = fmt.Sprintf("No %s notification was created for user %s.", r.Type, r.UserID)
	} else {
		out.Message = fmt.Sprintf("No %s notification was created for user %s since %s.", r.Type, r.UserID, r.when(r.Since))
	}
	channels := r.TypeConfig.Channels
	if len(channels) == 0 {
		channels = []heraldtype.Channel{heraldtype.ChannelPush}
	}
	for _, ch := range channels {
		if !r.TypeConfig.Critical {
			if code := r.Preferences.Refusal(r.Type, ch); code != "" {
				out.Reasons = append(out.Reasons, heraldtype.ExplainReason{Code: heraldtype.ExplainOptedOut, Channel: ch, ErrorCode: code,
					Message: "One sent now would not go on " + string(ch) + ": " + heraldtype.RefusalReason(code, r.Type, ch) + "."})
				continue
			}
		}
		if ch == heraldtype.ChannelPush {
			if rs := r.devices(); rs.Code != heraldtype.ExplainSent {
				rs.Message = "One sent now would not go on push: " + lowerFirst(rs.Message)
				out.Reasons = append(out.Reasons, rs)
			}
		}
	}
	return out
}

// noneFromRun explains a rule's run that wrote no notification for the
// user: not reached yet, failed before it did, or done without the user —
// who was then outside its audience.
func (r Records) noneFromRun(out heraldtype.Explanation) heraldtype.Explanation {
	out.Type = r.Run.Job.Notification.Type
	rs := r.runReason(r.Run)
	out.Verdict, out.Message = rs.Code, rs.Message
	out.Reasons = append(out.Reasons, rs)
	return out
}

// runReason says why run wrote no notification for the user.
func (r Records) runReason(run *heraldtype.RuleRun) heraldtype.ExplainReason {
	rs := heraldtype.ExplainReason{Rule: run.Rule, ErrorCode: string(run.State)}
	name := fmt.Sprintf("Rule %s's run for event %s", run.Rule, run.EventID)
	switch {
	case run.State == heraldtype.RunFailed:
		rs.Code = heraldtype.ExplainRuleRunFailed
		rs.Error = run.LastError
		rs.Message = fmt.Sprintf("%s failed before it reached user %s: %s.", name, r.UserID, strings.TrimSuffix(run.LastError, "."))
	case run.State != heraldtype.RunDone && (run.Cursor == "" || r.UserID > run.Cursor):
		rs.Code = heraldtype.ExplainPending
		rs.Message = fmt.Sprintf("%s is still going through its audience and has not reached user %s yet (%s so far).", name, r.UserID, plural(run.Enqueued, "notification"))
	default:
		rs.Code = heraldtype.ExplainOutsideAudience
		rs.Message = fmt.Sprintf("%s reached %s and wrote %s, none for user %s: they were not in its audience (%s).",
			name, plural(run.Recipients, "user"), plural(run.Enqueued, "notification"), r.UserID, audience(run.Job.Audience))
	}
	if !run.FinishedAt.IsZero() {
		at := run.FinishedAt
		rs.At = &at
	}
	return rs
}

// audience describes a rule run's audience as it was resolved for the
// event.
func audience(a heraldtype.JobAudience) string {
	var s string
	switch {
	case len(a.UserIDs) > 0:
		s = fmt.Sprintf("the %d users the rule named", len(a.UserIDs))
	case a.Webhook != nil:
		s = "the users its audience webhook answered"
	case a.Source != "":
		s = fmt.Sprintf("the users of the audience source %q", a.Source)
	case a.Subject != "":
		s = "the users interested in " + a.Subject
		if len(a.Kinds) > 0 {
			s += " (" + strings.Join(a.Kinds, ", ") + ")"
		}
		if !a.Since.IsZero() {
			s += " since " + a.Since.UTC().Format(time.RFC3339)
		}
		if a.AtMost != nil {
			s += ", filtered by their " + a.AtMost.InterestField
		}
	default:
		s = "every user"
	}
	if a.Limit > 0 {
		s += fmt.Sprintf(", at most %d", a.Limit)
	}
	return s
}
