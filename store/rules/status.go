package rules

import (
	"slices"
	"strings"

	"github.com/heraldhq/herald/heraldtype"
)

// The status rule (S3.9, issue 22): one notification's status — or one
// channel's — from a set of its deliveries, in one vocabulary
// (heraldtype.HistoryStatus). It is written once, as the ordered table
// StatusRules over the delivery classes below, and both of its forms are
// derived from that table:
//
//   - Go (Tally.Status): the detail, GET /v1/notifications/{id}, over the
//     notification's deliveries, and every channel_status, over one
//     channel's deliveries or counts;
//   - SQL (HistorySQL): the history lists, their status filter and their
//     pages, on both stores.
//
// store/storetest ("StatusAgreement") runs the SQL on every store over
// every mix of delivery states and checks it against the Go.

// Class is a kind of delivery the status rule counts.
type Class int

// The classes, each a set of delivery states (and, for ClassQuietHours,
// an error code). A delivery may belong to several.
const (
	// ClassAny is every delivery.
	ClassAny Class = iota
	// ClassLive is a delivery not final yet: pending or leased.
	ClassLive
	// ClassQuietHours is a pending delivery deferred to the end of the
	// user's quiet hours (last_error_code quiet_hours).
	ClassQuietHours
	// ClassSent is a sent delivery.
	ClassSent
	// ClassBroken is a delivery that failed without a decision of
	// Herald's: dead or unknown.
	ClassBroken
	// ClassRateLimited is a delivery a rate limit blocked.
	ClassRateLimited
	// ClassOptedOut is a delivery the user's preferences refused.
	ClassOptedOut
	// ClassUnsent is a delivery that ended without a send or a policy
	// decision: dead, unknown or skipped.
	ClassUnsent
	// ClassCancelled is a delivery cancelled before it was sent.
	ClassCancelled
	numClasses
)

// class defines a Class: its SQL name and which deliveries it holds.
type class struct {
	name   string
	states []heraldtype.DeliveryState // nil: every state
	code   string                     // "": any last_error_code
}

var classes = [numClasses]class{
	ClassAny:         {name: "any"},
	ClassLive:        {name: "live", states: []heraldtype.DeliveryState{heraldtype.StatePending, heraldtype.StateLeased}},
	ClassQuietHours:  {name: "quiet", states: []heraldtype.DeliveryState{heraldtype.StatePending}, code: heraldtype.CodeQuietHours},
	ClassSent:        {name: "sent", states: []heraldtype.DeliveryState{heraldtype.StateSent}},
	ClassBroken:      {name: "broken", states: []heraldtype.DeliveryState{heraldtype.StateDead, heraldtype.StateUnknown}},
	ClassRateLimited: {name: "limited", states: []heraldtype.DeliveryState{heraldtype.StateRateLimited}},
	ClassOptedOut:    {name: "opted", states: []heraldtype.DeliveryState{heraldtype.StateOptedOut}},
	ClassUnsent: {name: "unsent", states: []heraldtype.DeliveryState{heraldtype.StateDead, heraldtype.StateUnknown,
		heraldtype.StateSkipped}},
	ClassCancelled: {name: "cancelled", states: []heraldtype.DeliveryState{heraldtype.StateCancelled}},
}

// holds reports whether a delivery in state with last_error_code code
// belongs to c.
func (c class) holds(state heraldtype.DeliveryState, code string) bool {
	if c.states != nil && !slices.Contains(c.states, state) {
		return false
	}
	return c.code == "" || c.code == code
}

// StatusRule is one row of StatusRules: when every class of Some has a
// delivery and every class of None has none, the status is Status, with
// Reason — or, when ReasonOf is set, the greatest last_error_code among
// the deliveries of class *ReasonOf.
type StatusRule struct {
	Some, None []Class
	Status     heraldtype.HistoryStatus
	Reason     string
	ReasonOf   *Class
}

func classRef(c Class) *Class { return &c }

// StatusRules is the status rule, in order: the first row that holds
// decides. The last row holds always. docs/ARCHITECTURE.md ("A
// notification's status") has it as a table of delivery-state mixes.
var StatusRules = []StatusRule{
	// Nothing to wait for and nothing sent: the user had no usable device,
	// or the channel no provider.
	{None: []Class{ClassAny}, Status: heraldtype.HistoryFailed, Reason: heraldtype.CodeNoDeliveries},
	// Anything still live decides first: the outcome is not known yet.
	{Some: []Class{ClassQuietHours}, Status: heraldtype.HistoryDeferred, Reason: heraldtype.CodeQuietHours},
	{Some: []Class{ClassLive}, Status: heraldtype.HistoryPending},
	// All final. A send that failed beside a send that succeeded is news;
	// an opt-out, a rate limit or a skip beside a send was a decision.
	{Some: []Class{ClassSent, ClassBroken}, Status: heraldtype.HistoryPartiallySent, ReasonOf: classRef(ClassBroken)},
	{Some: []Class{ClassSent}, Status: heraldtype.HistorySent},
	// Nothing sent and something cancelled: the caller's decision, the
	// latest one taken, explains the rest (issue 36 item 5).
	{Some: []Class{ClassCancelled}, Status: heraldtype.HistoryCancelled, Reason: heraldtype.CodeCancelled},
	// Nothing sent: the policy's decisions first, then the failures.
	{Some: []Class{ClassRateLimited}, Status: heraldtype.HistoryRateLimited, ReasonOf: classRef(ClassRateLimited)},
	{Some: []Class{ClassOptedOut}, Status: heraldtype.HistoryOptedOut, ReasonOf: classRef(ClassOptedOut)},
	{Status: heraldtype.HistoryFailed, ReasonOf: classRef(ClassUnsent)},
}

// Tally counts a set of deliveries by class, with the greatest error code
// of each class: what the status rule reads.
type Tally struct {
	n    [numClasses]int
	code [numClasses]string
}

// Add counts n deliveries in state whose last_error_code is code.
func (t *Tally) Add(state heraldtype.DeliveryState, code string, n int) {
	if n <= 0 {
		return
	}
	for i, c := range classes {
		if c.holds(state, code) {
			t.n[i] += n
			// The greatest code in byte order, as the SQL form's max
			// (ByteOrder).
			if code > t.code[i] {
				t.code[i] = code
			}
		}
	}
}

// Status is the status and reason of the tallied deliveries: the first
// row of StatusRules that holds.
func (t *Tally) Status() (heraldtype.HistoryStatus, string) {
	for _, r := range StatusRules {
		if !t.holds(r) {
			continue
		}
		if r.ReasonOf != nil {
			return r.Status, t.code[*r.ReasonOf]
		}
		return r.Status, r.Reason
	}
	panic("rules: the last status rule must always hold") // StatusRules ends with a row without conditions
}

func (t *Tally) holds(r StatusRule) bool {
	for _, c := range r.Some {
		if t.n[c] == 0 {
			return false
		}
	}
	for _, c := range r.None {
		if t.n[c] != 0 {
			return false
		}
	}
	return true
}

// Tallies tallies a notification's deliveries as a whole and per channel.
type Tallies struct {
	All       Tally
	ByChannel map[heraldtype.Channel]*Tally
}

// NewTallies starts the tallies of a notification that asked for
// channels: each of them has a (maybe empty) tally, so a channel that got
// no delivery reports FAILED (no_deliveries) rather than nothing.
func NewTallies(channels []heraldtype.Channel) *Tallies {
	ts := &Tallies{ByChannel: make(map[heraldtype.Channel]*Tally, len(channels))}
	for _, ch := range channels {
		ts.ByChannel[ch] = &Tally{}
	}
	return ts
}

// Add counts n deliveries on channel ch in state with code.
func (ts *Tallies) Add(ch heraldtype.Channel, state heraldtype.DeliveryState, code string, n int) {
	ts.All.Add(state, code, n)
	t := ts.ByChannel[ch]
	if t == nil {
		t = &Tally{}
		ts.ByChannel[ch] = t
	}
	t.Add(state, code, n)
}

// ChannelStatus is the status of each channel.
func (ts *Tallies) ChannelStatus() map[heraldtype.Channel]heraldtype.HistoryStatus {
	out := make(map[heraldtype.Channel]heraldtype.HistoryStatus, len(ts.ByChannel))
	for ch, t := range ts.ByChannel {
		out[ch], _ = t.Status()
	}
	return out
}

// DeliveriesStatus applies the status rule to the deliveries of a
// notification that asked for channels: its status and reason, and the
// status of each channel (GET /v1/notifications/{id}).
func DeliveriesStatus(channels []heraldtype.Channel, ds []heraldtype.Delivery) (heraldtype.HistoryStatus, string, map[heraldtype.Channel]heraldtype.HistoryStatus) {
	ts := NewTallies(channels)
	for _, d := range ds {
		ts.Add(d.Channel, d.State, d.LastErrorCode, 1)
	}
	st, reason := ts.All.Status()
	return st, reason, ts.ChannelStatus()
}

// The SQL form of the rule: tallySQL counts the deliveries d of each
// notification by class (one aggregate per class, and the greatest code
// of each class a rule takes its reason from); statusSQL and reasonSQL
// are CASE expressions over those columns, one WHEN per row of
// StatusRules.

// predicateSQL is the condition on d of class c.
func (c class) predicateSQL() string {
	if c.states == nil {
		return "d.id IS NOT NULL" // the LEFT JOIN's row of a notification without deliveries is no delivery
	}
	var b strings.Builder
	b.WriteString("d.state IN (")
	for i, s := range c.states {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteSQL(string(s)))
	}
	b.WriteString(")")
	if c.code != "" {
		b.WriteString(" AND d.last_error_code = " + quoteSQL(c.code))
	}
	return b.String()
}

func countColumn(c Class) string { return "n_" + classes[c].name }
func codeColumn(c Class) string  { return "code_" + classes[c].name }

// tallySQL is the select list of the aggregates, named by tallyColumns.
func tallySQL() string {
	var cols []string
	for i, c := range classes {
		cols = append(cols, "count(*) FILTER (WHERE "+c.predicateSQL()+") AS "+countColumn(Class(i)))
	}
	for _, c := range reasonClasses() {
		cols = append(cols, "max(d.last_error_code"+ByteOrder+") FILTER (WHERE "+classes[c].predicateSQL()+") AS "+codeColumn(c))
	}
	return strings.Join(cols, ",\n\t\t")
}

// tallyColumns are the names of tallySQL's columns, in its order: the
// counts (n_…), then the greatest codes (code_…).
func tallyColumns() []string {
	var cols []string
	for i := range classes {
		cols = append(cols, countColumn(Class(i)))
	}
	for _, c := range reasonClasses() {
		cols = append(cols, codeColumn(c))
	}
	return cols
}

// reasonClasses are the classes a status rule takes its reason from, each
// once, in the rules' order.
func reasonClasses() []Class {
	var out []Class
	seen := map[Class]bool{}
	for _, r := range StatusRules {
		if r.ReasonOf != nil && !seen[*r.ReasonOf] {
			seen[*r.ReasonOf] = true
			out = append(out, *r.ReasonOf)
		}
	}
	return out
}

// caseSQL is a CASE over the rows of StatusRules whose value per row is
// value(row).
func caseSQL(value func(StatusRule) string) string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, r := range StatusRules {
		var conds []string
		for _, c := range r.Some {
			conds = append(conds, countColumn(c)+" > 0")
		}
		for _, c := range r.None {
			conds = append(conds, countColumn(c)+" = 0")
		}
		if len(conds) == 0 {
			b.WriteString(" ELSE " + value(r) + " END")
			return b.String()
		}
		b.WriteString(" WHEN " + strings.Join(conds, " AND ") + " THEN " + value(r))
	}
	panic("rules: the last status rule must always hold")
}

func statusSQL() string {
	return caseSQL(func(r StatusRule) string { return quoteSQL(string(r.Status)) })
}

func reasonSQL() string {
	return caseSQL(func(r StatusRule) string {
		if r.ReasonOf != nil {
			return "coalesce(" + codeColumn(*r.ReasonOf) + ", '')"
		}
		return quoteSQL(r.Reason)
	})
}

// ByteOrder is the placeholder after a text expression that must sort in
// byte order, as Go compares strings, whatever the database's collation:
// PostgreSQL replaces it with ByteOrderPostgres, SQLite with
// ByteOrderSQLite. Under a linguistic collation (en-US) "UNREGISTERED"
// sorts after "no_address", in Go before: without it, the greatest code —
// a reason — could differ between the detail and the history.
const ByteOrder = "{byteorder}"

// The byte-order collations of the two stores (ByteOrder).
const (
	ByteOrderPostgres = ` COLLATE "C"`
	ByteOrderSQLite   = ` COLLATE BINARY`
)

// quoteSQL is s as a SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
