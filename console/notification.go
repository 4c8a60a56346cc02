package console

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// The notification views: the history with its filters, and one
// notification's whole timeline.

// historyData is the notifications list's.
type historyData struct {
	User, Type, Status, From, To string
	Entries                      []herald.HistoryEntry
	Next                         string
	Err                          *formResult
	// Scanned is set when a status filter's page stopped at the bound of
	// notifications one page examines (herald.Limits.HistoryScan) before
	// it was full: the page says so, and that older ones may match,
	// rather than "nothing found". Newest is true on the first page.
	Scanned int
	Newest  bool
}

// notifications lists the history newest first, filtered by the query
// string; ?id= jumps to one notification.
func (c *Console) notifications(w http.ResponseWriter, r *http.Request, s Session) error {
	if id := query(r, "id"); id != "" {
		seeOther(w, r, pathLink("/console/notifications/", id))
		return nil
	}
	d := historyData{User: query(r, "user"), Type: query(r, "type"), Status: query(r, "status"), From: query(r, "from"), To: query(r, "to")}
	f := herald.HistoryFilter{UserID: d.User, Type: d.Type, Status: heraldtype.HistoryStatus(d.Status), Cursor: query(r, "cursor"), Limit: listLimit}
	var err error
	if f.From, err = parseTime("from", d.From); err == nil {
		f.To, err = parseTime("to", d.To)
	}
	if err == nil {
		var p herald.HistoryPage
		if p, err = c.client.ListHistory(r.Context(), f); err == nil {
			d.Entries, d.Next = p.Notifications, nextLink(r, p.NextCursor)
			if f.Status != "" && d.Next != "" && len(d.Entries) < listLimit {
				d.Scanned, d.Newest = c.client.HistoryScan(), f.Cursor == ""
				d.Status = strings.ToUpper(d.Status)
			}
		}
	}
	var status int
	if d.Err, status, err = pageRefusal(err); err != nil {
		return err
	}
	c.render(w, r, status, "notifications", page{Title: "Notifications", Session: s, Data: d})
	return nil
}

// timelineItem is one record of a notification's timeline. Kind is the
// contract's data-kind: trigger, event, rule_run, reminder, campaign_run,
// digest, escalation, enqueued, policy, cancel, receipt, attempt,
// escalated or escalation_stopped.
type timelineItem struct {
	Kind string
	At   time.Time
	// What says it in a few words; Link, when set, leads to the record.
	What, Link, LinkText string
	// Delivery is the delivery an enqueued, policy or attempt item is
	// about; Attempt the attempt row, when it is one.
	Delivery *heraldtype.Delivery
	Attempt  *heraldtype.Attempt
	// Code and Detail are the policy's or the provider's answer.
	Code, Detail string
}

// notificationData is the notification page's.
type notificationData struct {
	N        herald.NotificationStatus
	Timeline []timelineItem
	Channels []channelStatus
}

type channelStatus struct {
	Channel heraldtype.Channel
	Status  heraldtype.HistoryStatus
}

// notification shows one notification: what caused it, its deliveries,
// every policy decision and every attempt with the provider's answer.
func (c *Console) notification(w http.ResponseWriter, r *http.Request, s Session) error {
	n, err := c.client.GetNotification(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	d := notificationData{N: n, Timeline: timeline(n)}
	for _, ch := range n.Channels {
		d.Channels = append(d.Channels, channelStatus{Channel: ch, Status: n.ChannelStatus[ch]})
	}
	c.render(w, r, http.StatusOK, "notification", page{Title: "Notification " + n.ID, Path: "/console/notifications", Session: s, Data: d})
	return nil
}

// decisionKinds are the attempt rows that record a decision rather than
// a provider call, by the timeline's kind: the policy's, and a cancel's
// (issue 36 item 5), whose error says who cancelled and how.
var decisionKinds = map[heraldtype.AttemptOutcome]string{
	heraldtype.OutcomeOptedOut: "policy", heraldtype.OutcomeRateLimited: "policy",
	heraldtype.OutcomeDeferred: "policy", heraldtype.OutcomePolicyError: "policy",
	heraldtype.OutcomeCancelled: "cancel",
}

// receiptWhat says each receipt event for the timeline.
var receiptWhat = map[heraldtype.ReceiptEvent]string{
	heraldtype.ReceiptDelivered: "delivered to the device", heraldtype.ReceiptOpened: "opened",
	heraldtype.ReceiptDismissed: "dismissed", heraldtype.ReceiptClicked: "clicked",
	heraldtype.ReceiptRead: "read in the inbox", heraldtype.ReceiptArchived: "archived in the inbox",
}

// timeline orders a notification's records by time: its cause, its
// enqueue, each delivery's policy decisions and attempts.
func timeline(n herald.NotificationStatus) []timelineItem {
	var out []timelineItem
	out = append(out, cause(n.Notification)...)
	out = append(out, timelineItem{Kind: "enqueued", At: n.CreatedAt,
		What: fmt.Sprintf("Enqueued for %s, priority %s; deliveries: %d", channelList(n.Channels), n.Priority, len(n.Deliveries))})
	for i := range n.Deliveries {
		d := &n.Deliveries[i]
		decided := false
		for j := range d.Attempts {
			a := &d.Attempts[j]
			it := timelineItem{Kind: "attempt", At: a.At, Delivery: d, Attempt: a, Code: a.ErrorCode, Detail: a.Error}
			if kind := decisionKinds[a.Outcome]; kind != "" {
				it.Kind, decided = kind, true
			}
			it.What = string(a.Outcome)
			out = append(out, it)
		}
		// What the app or the inbox reported (issue 35 item 1): the
		// event, and the action clicked.
		for _, rc := range d.Receipts {
			what := receiptWhat[rc.Event]
			if what == "" {
				what = string(rc.Event)
			}
			out = append(out, timelineItem{Kind: "receipt", At: rc.At, Delivery: d, What: what, Code: string(rc.Event), Detail: rc.Action})
		}
		// A decision taken at enqueue (the inbox's opt-out) leaves no
		// attempt row: the delivery's own code is the record.
		if !decided && len(d.Attempts) == 0 && d.LastErrorCode != "" {
			at := d.UpdatedAt
			if d.FinishedAt != nil {
				at = *d.FinishedAt
			}
			out = append(out, timelineItem{Kind: "policy", At: at, Delivery: d, What: string(d.State), Code: d.LastErrorCode, Detail: d.LastError})
		}
	}
	out = append(out, escalationItems(n.Escalations)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// escalationItems are the notification's escalation steps on its
// timeline (issue 36 items 3 and 5): a fired step is an escalated
// decision linking to the notification it sent, a stopped one an
// escalation_stopped decision with the receipt or cancel that stopped
// it, a pending one when it is due.
func escalationItems(es []heraldtype.Escalation) []timelineItem {
	var out []timelineItem
	for _, e := range es {
		what := fmt.Sprintf("Escalation step %d: unless %s by then, send on %s", e.Step, e.Unless, channelList(e.Channels))
		switch e.State {
		case heraldtype.EscalationFired:
			out = append(out, timelineItem{Kind: heraldtype.CodeEscalated, At: e.DecidedAt, What: what,
				Link: pathLink("/console/notifications/", e.NotificationID), LinkText: "notification " + e.NotificationID,
				Code: heraldtype.CodeEscalated, Detail: e.Reason})
		case heraldtype.EscalationStopped:
			out = append(out, timelineItem{Kind: heraldtype.CodeEscalationStopped, At: e.DecidedAt, What: what,
				Code: heraldtype.CodeEscalationStopped, Detail: e.Reason})
		default:
			out = append(out, timelineItem{Kind: "escalation_pending", At: e.DueAt, What: what + " (due)"})
		}
	}
	return out
}

// cause is what produced the notification: a trigger, or a rule's event
// and run, a reminder's occurrence, a campaign's run.
func cause(n heraldtype.Notification) []timelineItem {
	src := n.Source
	if src == nil {
		return []timelineItem{{Kind: "trigger", At: n.CreatedAt, What: "Triggered through the API or Client.Enqueue"}}
	}
	switch src.Kind {
	case heraldtype.SourceRule:
		return []timelineItem{
			{Kind: "event", At: n.CreatedAt, What: fmt.Sprintf("Event %s (id %s)", src.Event, orDash(src.ID))},
			{Kind: "rule_run", At: n.CreatedAt, What: "Rule " + src.Name + " fired on it",
				Link: pathLink("/console/rules/", src.Name) + "#runs-heading", LinkText: "rule " + src.Name + " and its runs"},
		}
	case heraldtype.SourceReminder:
		return []timelineItem{{Kind: "reminder", At: n.CreatedAt, What: fmt.Sprintf("Reminder %s, occurrence %s", src.Name, orDash(src.Occurrence)),
			Link: pathLink("/console/reminders/", src.Name), LinkText: "reminder " + src.Name}}
	case heraldtype.SourceDigest:
		return []timelineItem{{Kind: "digest", At: n.CreatedAt, What: fmt.Sprintf("Digest of %d triggers, key %s", src.Count, orDash(src.Name)),
			Link: pathLink("/console/digests/", src.ID), LinkText: "digest " + src.ID + " and its triggers"}}
	case heraldtype.SourceEscalation:
		return []timelineItem{{Kind: "escalation", At: n.CreatedAt, What: fmt.Sprintf("Escalation step %d of a notification nobody reacted to", src.Count),
			Link: pathLink("/console/notifications/", src.ID), LinkText: "notification " + src.ID}}
	case heraldtype.SourceTest:
		return []timelineItem{{Kind: "test", At: n.CreatedAt, What: "Test-send of the type's templates: sent now, past quiet hours, de-duplication and the daily cap, never past the user's opt-outs",
			Link: pathLink("/console/types/", n.Type) + "/templates", LinkText: "templates of " + n.Type}}
	case heraldtype.SourceCampaign:
		return []timelineItem{{Kind: "campaign_run", At: n.CreatedAt, What: fmt.Sprintf("Campaign %s, run %s", src.Name, orDash(src.ID)),
			Link: pathLink("/console/campaigns/", src.Name), LinkText: "campaign " + src.Name}}
	}
	return []timelineItem{{Kind: "trigger", At: n.CreatedAt, What: "Produced by " + src.Kind + " " + src.Name}}
}

func channelList(chs []heraldtype.Channel) string {
	if len(chs) == 0 {
		return "no channel"
	}
	s := ""
	for i, c := range chs {
		if i > 0 {
			s += ", "
		}
		s += string(c)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
