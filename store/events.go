package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Events is what the rule engine keeps of the events it applied (issue 20
// items 1 and 4, S3.1, S3.5). Store embeds it.
//
// An event the rules act on is a row keyed by (source, namespace, id) —
// its Kafka topic or "http", whose id it is (the calling API key's over
// HTTP, "" for a topic), and its id — holding what the engine decided and
// a hash of the event, so the same id with another body is told from a
// redelivery (issue 31 item 5). Each subject of each source
// (product.inventory.v1, product:42) is a row holding the newest event
// version seen (the stale guard) and what each rule's detector remembers
// of it, with a sequence number every write bumps. RecordEvent writes the event, the
// subject and the rule runs the event started in ONE transaction, guarded
// by the sequence number the engine read: a redelivered event finds its
// row and writes nothing, and two events of one subject decided at once
// cannot both write. A rule run's batches then commit with the run's
// cursor (AdvanceRuleRun), so a fan-out resumes after a crash and
// reaches no one twice.
type Events interface {
	// RecordedEvent returns what the engine recorded of the event k; ok
	// false when it never applied it.
	RecordedEvent(ctx context.Context, k EventKey) (RecordedEvent, bool, error)
	// EventSubject returns the row of a source's subject; the zero
	// EventSubject (Seq 0) when it has none.
	EventSubject(ctx context.Context, source, subject string) (EventSubject, error)
	// EventState reads together what an event is decided on (one round
	// trip on PostgreSQL; issue 39 item 3): the first page of the rules
	// q.Rules selects (ListRules), the record of q.Key unless its ID is
	// "" (RecordedEvent), when q.Subject is not "" the subject of
	// q.Key.Source (EventSubject), and a page of InterestedUsers for each
	// of q.Interests. The rules are read with every event, not cached, so
	// an edit applies to the next event on every instance.
	EventState(ctx context.Context, q EventQuery) (EventState, error)
	// RecordEvent writes r in one transaction: the event's row (when it
	// exists, nothing is written and Replayed says so, with the stored
	// outcome and request hash), the subject of r.Source (with r.Subject set and r.Write: guarded by
	// r.Seq — 0 creates it — when it moved on nothing is written and
	// Conflict says so), and the rule runs, created running.
	RecordEvent(ctx context.Context, r EventRecord) (EventRecorded, error)
	// RunningRuleRuns returns up to limit runs in state running, oldest
	// first: the runs the rule runner works on.
	RunningRuleRuns(ctx context.Context, limit int) ([]heraldtype.RuleRun, error)
	// AdvanceRuleRun writes one batch of a run in ONE transaction, guarded
	// by the run's version (it applies only while the run is running with
	// b.Version): the enqueue of b.Enqueue, the run's cursor, counts, last
	// error and, with b.Finish, its final state. Applied is false, and
	// nothing is written, when the run moved on.
	AdvanceRuleRun(ctx context.Context, b RuleBatch) (RuleBatchResult, error)
	// RuleRun returns one run of a rule; ENOTFOUND if none.
	RuleRun(ctx context.Context, rule, runID string) (heraldtype.RuleRun, error)
	// RetryRuleRun moves a failed run back to running with r.Job — its
	// message rendered again, when the replay of a dead event retries a
	// run whose message could not be rendered — in ONE write guarded by
	// the run's version and state: it applies only while the run is
	// failed with r.Version, so of two replays at once one restarts the
	// run and the other finds it moved on (false, nothing written). The
	// last error and finish time are cleared; the cursor and counts are
	// kept.
	RetryRuleRun(ctx context.Context, r RuleRetry) (bool, error)
	// ListRuleRuns returns a page of a rule's runs, newest first, and the
	// next page's cursor.
	ListRuleRuns(ctx context.Context, f heraldtype.RuleRunFilter) ([]heraldtype.RuleRun, string, error)
	// PruneEvents deletes, oldest first and at most limit of each, the
	// event rows recorded before cutoff and the rule runs that finished
	// before it, and returns how many rows it deleted. Running runs and
	// the subjects' rows are kept.
	PruneEvents(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// EventKey names an applied event: its source, the namespace its id
// belongs to ("" for a Kafka topic's events and Go callers that name
// none), and its id.
type EventKey struct {
	Source, Namespace, ID string
}

// EventQuery names what EventState reads.
type EventQuery struct {
	// Key is the event's; an ID of "" reads no record (an id the engine
	// generated names no recorded event).
	Key EventKey
	// Subject is the event's subject; "" reads none.
	Subject string
	// Rules selects the rules that judge the event.
	Rules RuleFilter
	// Interests are audiences read ahead: the engine's guess of the
	// first pages its inline batches will ask for.
	Interests []heraldtype.InterestQuery
}

// EventState is what an event is decided on.
type EventState struct {
	// Rules is the first page of the selected rules; RulesNext the next
	// page's cursor ("" at the end).
	Rules     []heraldtype.Rule
	RulesNext string
	// Recorded is the event's record when Found.
	Recorded RecordedEvent
	Found    bool
	// Subject is the subject's row (Seq 0 when there is none).
	Subject EventSubject
	// Interested holds InterestedUsers' answer to each of the query's
	// Interests, in their order.
	Interested [][]heraldtype.Interested
}

// RecordedEvent is what the engine kept of an applied event.
type RecordedEvent struct {
	Outcome json.RawMessage
	// RequestHash fingerprints the event as it was applied; "" for a row
	// written before events had one.
	RequestHash string
}

// EventSubject is one subject's row.
type EventSubject struct {
	// Version is the newest event version applied (0: none ordered).
	Version int64
	// Seq counts the row's writes; 0 when there is no row.
	Seq int64
	// State is each rule's detector state (rule name → rule.State), JSON.
	State json.RawMessage
}

// EventRecord is one applied event.
type EventRecord struct {
	Source, Namespace, ID, Name string
	Subject, UserID             string
	Version                     int64
	// RequestHash fingerprints the event (issue 31 item 5).
	RequestHash string
	// Write, with Subject, writes the subject's row: Version (kept when
	// lower than the stored one) and State, guarded by Seq.
	Write   bool
	Seq     int64
	State   json.RawMessage
	Outcome json.RawMessage
	// Runs are the rule runs the event starts (Rule, ID, Source, EventID,
	// Event, Subject, Job; State running unless failed with LastError).
	Runs []heraldtype.RuleRun
	// Inline holds, by rule name, the only batch of a run whose whole
	// audience was read before the transaction (issue 39 item 3): that
	// run is written done, with the batch's cursor and counts, and the
	// batch's notifications are enqueued in the event's own transaction,
	// so the rule runner never sees it. A run without an entry is written
	// as Runs says.
	Inline map[string]InlineBatch
	Now    time.Time
}

// InlineBatch is the one batch of a rule run written with its event.
type InlineBatch struct {
	// Recipients is the run's whole audience; Cursor its last user id
	// ("" when it is empty).
	Recipients int
	Cursor     string
	// Enqueue holds the batch's notifications (nil when the audience is
	// empty).
	Enqueue *EnqueueParams
}

// Enqueued is how many notifications the batch enqueues.
func (b InlineBatch) Enqueued() int {
	if b.Enqueue == nil {
		return 0
	}
	return len(b.Enqueue.Notifications)
}

// InlineRunState is the state, counts and cursor a run is inserted with:
// running, or failed with its LastError, or — with an inline batch —
// done as the runner would have left it after its one batch.
type InlineRunState struct {
	State               heraldtype.CampaignRunState
	Cursor              string
	Recipients, Enqueue int
	Finished            bool
}

// RunInsert is what r's run is inserted with (the rule both stores
// apply).
func (r EventRecord) RunInsert(run heraldtype.RuleRun) InlineRunState {
	if b, ok := r.Inline[run.Rule]; ok && run.LastError == "" {
		return InlineRunState{State: heraldtype.RunDone, Cursor: b.Cursor, Recipients: b.Recipients,
			Enqueue: b.Enqueued(), Finished: true}
	}
	st := RuleRunState(run)
	return InlineRunState{State: st, Finished: st != heraldtype.RunRunning}
}

// EventRecorded is what RecordEvent did.
type EventRecorded struct {
	// Replayed: the event had been recorded; Outcome and RequestHash are
	// the stored ones.
	Replayed    bool
	Outcome     json.RawMessage
	RequestHash string
	// Conflict: the subject moved on since Seq was read.
	Conflict bool
	// Enqueued is, by rule name, what each inline batch's enqueue wrote
	// (zero for an empty audience): one entry per inline run written.
	Enqueued map[string]EnqueueResult
}

// RuleBatch is one batch of a rule run.
type RuleBatch struct {
	Rule, RunID string
	// Version is the run's version the runner last saw.
	Version int64
	// Cursor is the last user id of the batch.
	Cursor string
	// Enqueue holds the batch's notifications (nil when none).
	Enqueue *EnqueueParams
	// Recipients is added to the run's count.
	Recipients int
	LastError  string
	// Finish, when set (done or failed), ends the run.
	Finish heraldtype.CampaignRunState
	Now    time.Time
}

// RuleRetry is a failed run sent again (RetryRuleRun).
type RuleRetry struct {
	Rule, RunID string
	// Version is the run's version the caller read.
	Version int64
	// Job is the run's work with its message rendered again.
	Job heraldtype.RuleJob
	Now time.Time
}

// CheckRuleRetry validates the arguments of RetryRuleRun.
func CheckRuleRetry(r RuleRetry) error {
	switch {
	case r.Rule == "" || r.RunID == "":
		return heraldtype.FieldErrorf("run", "rule and run must not be empty")
	case r.Now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	}
	return nil
}

// RuleBatchResult is what AdvanceRuleRun did.
type RuleBatchResult struct {
	Applied bool
	Run     heraldtype.RuleRun
	Result  EnqueueResult
}

// RuleRunID is the id of the run of an event: its source, namespace and
// id ("product.inventory.v1/ev-1", "http/<key id>/ev-1"), so two callers'
// events of one id start runs of their own. An id holds no '/', so the
// forms cannot meet.
func RuleRunID(source, namespace, eventID string) string {
	if namespace == "" {
		return source + "/" + eventID
	}
	return source + "/" + namespace + "/" + eventID
}

// Key is the record's EventKey.
func (r EventRecord) Key() EventKey {
	return EventKey{Source: r.Source, Namespace: r.Namespace, ID: r.ID}
}

// CheckEventRecord refuses a record that would write a broken row.
func CheckEventRecord(r EventRecord) error {
	switch {
	case r.Source == "" || r.ID == "" || r.Name == "":
		return heraldtype.FieldErrorf("event", "source, id and name must not be empty")
	case r.Now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	case r.Write && r.Subject == "":
		return heraldtype.FieldErrorf("subject", "must be set to write it")
	case len(r.Outcome) == 0:
		return heraldtype.FieldErrorf("outcome", "must be set")
	}
	inline := 0
	for _, run := range r.Runs {
		if run.Rule == "" || run.ID == "" {
			return heraldtype.FieldErrorf("runs", "a run needs a rule and an id")
		}
		if _, ok := r.Inline[run.Rule]; ok && run.LastError == "" {
			inline++
		}
	}
	if inline != len(r.Inline) {
		return heraldtype.FieldErrorf("inline", "every inline batch needs a run of its rule that is not failed")
	}
	for _, b := range r.Inline {
		switch {
		case b.Recipients < 0 || b.Enqueued() > b.Recipients:
			return heraldtype.FieldErrorf("inline", "recipients must be at least the notifications enqueued")
		case b.Enqueue != nil && len(b.Enqueue.Notifications) == 0:
			return heraldtype.FieldErrorf("inline", "an enqueue has no notifications")
		}
	}
	return nil
}

// CheckRuleBatch validates the arguments of AdvanceRuleRun.
func CheckRuleBatch(b RuleBatch) error {
	switch {
	case b.Rule == "" || b.RunID == "":
		return heraldtype.FieldErrorf("run", "rule and run must not be empty")
	case b.Now.IsZero():
		return heraldtype.FieldErrorf("now", "must be set")
	case b.Finish != "" && b.Finish != heraldtype.RunDone && b.Finish != heraldtype.RunFailed:
		return heraldtype.FieldErrorf("finish", "must be done or failed")
	case b.Recipients < 0:
		return heraldtype.FieldErrorf("recipients", "must not be negative")
	case b.Enqueue != nil && len(b.Enqueue.Notifications) == 0:
		return heraldtype.FieldErrorf("enqueue", "has no notifications")
	}
	return nil
}

// CheckRuleRunFilter returns the page size and cursor of ListRuleRuns.
func CheckRuleRunFilter(f heraldtype.RuleRunFilter) (limit int, cur RunCursor, err error) {
	if f.Rule == "" {
		return 0, cur, heraldtype.FieldErrorf("rule", "must not be empty")
	}
	return checkRunPage(f.Cursor, f.Limit)
}

// RuleRunPage trims runs read newest first with a LIMIT of limit+1.
func RuleRunPage(rs []heraldtype.RuleRun, limit int) ([]heraldtype.RuleRun, string) {
	return runPage(rs, limit, func(r heraldtype.RuleRun) (time.Time, string) { return r.CreatedAt, r.ID })
}

// EncodeRuleJob and DecodeRuleJob are how both stores keep a run's job.
func EncodeRuleJob(j heraldtype.RuleJob) ([]byte, error) { return json.Marshal(j) }

// DecodeRuleJob reads what EncodeRuleJob wrote.
func DecodeRuleJob(b []byte, j *heraldtype.RuleJob) error { return json.Unmarshal(b, j) }

// RuleRunState is the state a new run is written with: failed when it
// carries an error (a template that could not render), else running.
func RuleRunState(r heraldtype.RuleRun) heraldtype.CampaignRunState {
	if r.LastError != "" {
		return heraldtype.RunFailed
	}
	return heraldtype.RunRunning
}
