package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/auth"
	"github.com/heraldhq/herald/heraldtype"
)

// deadPageSize is how many dead letters a page lists.
const deadPageSize = 50

// deadFilter is the dead-letters view's query string: which kind, and
// the filter of each. It round-trips through the URL (bookmarkable) and
// through the bulk replay's hidden fields.
type deadFilter struct {
	Kind string // deliveries or events
	// Deliveries: state (dead or unknown), error code, channel, type,
	// user.
	State, Code, Channel, Type, User string
	// Both: created (a delivery) or given up on (a record) since/until.
	Since, Until string
	// Events: topic and kind of record.
	Topic, EventKind string
	Cursor           string
}

// readDeadFilter reads the filter from a query string or a form.
func readDeadFilter(v url.Values) deadFilter {
	f := deadFilter{Kind: v.Get("kind"), State: v.Get("state"), Code: strings.TrimSpace(v.Get("code")),
		Channel: v.Get("channel"), Type: strings.TrimSpace(v.Get("type")), User: strings.TrimSpace(v.Get("user")),
		Since: v.Get("since"), Until: v.Get("until"), Topic: strings.TrimSpace(v.Get("topic")),
		EventKind: v.Get("event_kind"), Cursor: v.Get("cursor")}
	if f.Kind != "events" {
		f.Kind = "deliveries"
	}
	if f.State != string(heraldtype.StateUnknown) {
		f.State = string(heraldtype.StateDead)
	}
	return f
}

// query is the filter as a query string, without the cursor (a link to
// the first page of the same selection).
func (f deadFilter) query() url.Values {
	v := url.Values{"kind": {f.Kind}}
	add := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	if f.Kind == "deliveries" {
		add("state", f.State)
		add("code", f.Code)
		add("channel", f.Channel)
		add("type", f.Type)
		add("user", f.User)
	} else {
		add("topic", f.Topic)
		add("event_kind", f.EventKind)
	}
	add("since", f.Since)
	add("until", f.Until)
	return v
}

// Fields are the filter as hidden form fields, for the bulk replay.
func (f deadFilter) Fields() []field {
	q := f.query()
	keys := slices.Sorted(maps.Keys(q))
	out := make([]field, 0, len(keys))
	for _, k := range keys {
		out = append(out, field{k, q.Get(k)})
	}
	return out
}

type field struct{ Name, Value string }

// URL is the view's address for this filter, with extra parameters.
func (f deadFilter) URL(extra ...string) string {
	v := f.query()
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return "/console/dead-letters?" + v.Encode()
}

// deliveryFilter turns the form into the Client's filter; a bad time is
// an invalid_argument naming the field.
func (f deadFilter) deliveryFilter() (heraldtype.DeliveryFilter, error) {
	df := heraldtype.DeliveryFilter{State: heraldtype.DeliveryState(f.State), ErrorCode: f.Code,
		Channel: heraldtype.Channel(f.Channel), Type: f.Type, UserID: f.User, Cursor: f.Cursor, Limit: deadPageSize}
	var err error
	if df.From, err = formTime("since", f.Since); err != nil {
		return df, err
	}
	if df.To, err = formTime("until", f.Until); err != nil {
		return df, err
	}
	return df, nil
}

// eventFilter is deliveryFilter's counterpart for dead events.
func (f deadFilter) eventFilter() (heraldtype.DeadEventFilter, error) {
	ef := heraldtype.DeadEventFilter{Topic: f.Topic, Kind: f.EventKind, Replayed: "no", Cursor: f.Cursor, Limit: deadPageSize}
	var err error
	if ef.From, err = formTime("since", f.Since); err != nil {
		return ef, err
	}
	if ef.To, err = formTime("until", f.Until); err != nil {
		return ef, err
	}
	return ef, nil
}

// formTime reads a time field: a datetime-local input's value (taken as
// UTC, which the label says) or RFC 3339.
func formTime(name, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339, "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, heraldtype.FieldErrorf(name, "%q is not a time (2026-11-27T09:30, in UTC)", s)
}

// deadData is the dead-letters page's.
type deadData struct {
	F          deadFilter
	Deliveries []heraldtype.Delivery
	Events     []heraldtype.DeadEvent
	Next       string
	// CanReplay says the session may replay this kind.
	CanReplay bool
	// FilterError is a filter field the Client refused, shown beside the
	// form instead of the list.
	FilterError *pageError
	// Outcome is what the last action did (after its redirect).
	Replayed     string
	ReplayFailed string
	Bulk         *bulkResult
	DryRun       *dryRunResult
}

// bulkResult is a bulk replay's outcome, carried in the redirect's query.
type bulkResult struct {
	Replayed, Skipped, Failed int
}

// dryRunResult is what a bulk replay would replay.
type dryRunResult struct {
	Count int
	// Capped says there are more than one replay takes (it replays the
	// oldest herald.MaxBulkReplay).
	Capped  bool
	Skipped int
}

// replayScope is what replaying kind needs: the scope of its API route.
func replayScope(kind string) auth.Scope {
	if kind == "events" {
		return auth.ScopeEventsWrite
	}
	return auth.ScopeDeliveriesAdmin
}

// readScope is what listing kind needs.
func readScope(kind string) auth.Scope {
	if kind == "events" {
		return auth.ScopeEventsRead
	}
	return auth.ScopeDeliveriesRead
}

// deadLetters lists dead or unknown deliveries, or dead events, by the
// query string's filter.
func (c *Console) deadLetters(w http.ResponseWriter, r *http.Request, s Session) error {
	q := r.URL.Query()
	f := readDeadFilter(q)
	d := deadData{F: f, CanReplay: s.Can(replayScope(f.Kind)), Replayed: q.Get("replayed"), ReplayFailed: q.Get("replay_failed")}
	if n, err := strconv.Atoi(q.Get("bulk_replayed")); err == nil {
		d.Bulk = &bulkResult{Replayed: n}
		d.Bulk.Skipped, _ = strconv.Atoi(q.Get("bulk_skipped"))
		d.Bulk.Failed, _ = strconv.Atoi(q.Get("bulk_failed"))
	}
	return c.renderDead(w, r, s, http.StatusOK, d)
}

// renderDead loads the page's list and renders it; a filter the Client
// refuses is shown beside the form with status 400.
func (c *Console) renderDead(w http.ResponseWriter, r *http.Request, s Session, status int, d deadData) error {
	if !s.Can(readScope(d.F.Kind)) {
		return denied(readScope(d.F.Kind))
	}
	if err := c.loadDead(r, &d); err != nil {
		if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			return err
		}
		d.FilterError = &pageError{Code: heraldtype.EINVALID, Message: heraldtype.ErrorMessage(err)}
		status = http.StatusBadRequest
	}
	c.render(w, r, status, "dead-letters", page{Title: "Dead letters", Path: "/console/dead-letters", Session: s, Data: d})
	return nil
}

func (c *Console) loadDead(r *http.Request, d *deadData) error {
	if d.F.Kind == "events" {
		ef, err := d.F.eventFilter()
		if err != nil {
			return err
		}
		p, err := c.client.ListDeadEvents(r.Context(), ef)
		d.Events, d.Next = p.DeadEvents, p.NextCursor
		return err
	}
	df, err := d.F.deliveryFilter()
	if err != nil {
		return err
	}
	p, err := c.client.ListDeliveries(r.Context(), df)
	d.Deliveries, d.Next = p.Deliveries, p.NextCursor
	return err
}

// replayDelivery replays one delivery, then sends the browser back to the
// list it came from (POST-redirect-GET: a reload does not replay again).
func (c *Console) replayDelivery(w http.ResponseWriter, r *http.Request, s Session) error {
	id, err := herald.ParseDeliveryID(r.PathValue("id"))
	if err != nil {
		return err
	}
	f := readDeadFilter(r.PostForm)
	if _, err := c.client.ReplayDelivery(r.Context(), id); err != nil {
		if code := heraldtype.ErrorCode(err); code != heraldtype.ECONFLICT && code != heraldtype.ENOTFOUND {
			return err
		}
		http.Redirect(w, r, f.URL("replay_failed", heraldtype.ErrorMessage(err)), http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, f.URL("replayed", "delivery "+strconv.FormatInt(id, 10)), http.StatusSeeOther)
	return nil
}

// replayDeadEvent replays one dead event, the same way.
func (c *Console) replayDeadEvent(w http.ResponseWriter, r *http.Request, s Session) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return heraldtype.FieldErrorf("id", "%q is not a dead event id", r.PathValue("id"))
	}
	f := readDeadFilter(r.PostForm)
	f.Kind = "events"
	if err := c.client.ReplayDeadEvent(r.Context(), id); err != nil {
		if code := heraldtype.ErrorCode(err); code == heraldtype.EINTERNAL || code == heraldtype.EUNAVAILABLE || code == "" {
			return err
		}
		http.Redirect(w, r, f.URL("replay_failed", heraldtype.ErrorMessage(err)), http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, f.URL("replayed", "dead event "+strconv.FormatInt(id, 10)), http.StatusSeeOther)
	return nil
}
