// Package rule is the event-rule evaluator (issue 20 item 2, S3.2,
// S3.4), pure like internal/schedule: it validates a heraldtype.Rule and
// compiles its templates, decides with its detector whether an event
// fires it (given what the detector remembered of the event's subject),
// and renders the notification from the event's fields. It keeps no
// state and reads no store or clock: the engine that applies rules keeps
// the subject state in the database and passes the times in.
package rule

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Fields are an event's fields as rules see them: its data, plus id,
// name, user_id and subject when set.
type Fields map[string]string

// State is what a detector remembers of one subject between events: the
// last values of the fields Changed watches, and the restock detector's
// hysteresis. The engine stores it per rule and subject.
type State struct {
	Fields map[string]string `json:"fields,omitempty"`
	// RestockFired is when the restock detector last fired.
	RestockFired time.Time `json:"restock_fired,omitzero"`
	// ZeroSince is when the stock was first seen at 0 since then.
	ZeroSince time.Time `json:"zero_since,omitzero"`
}

// Result is what a detector decided about one event.
type Result struct {
	Fired bool
	// Reason says why it did or did not fire, for the dry run and logs.
	Reason string
	// Vars are what the detector adds to the template's fields:
	// drop_pct, drop_amount, previous_price, current_price for a price
	// drop; previous_stock, current_stock for a restock; changed.
	Vars map[string]string
}

// Defaults of the detectors.
const (
	DefaultRestockMin   = 1
	DefaultRestockRearm = time.Hour
)

// field reads the first of names that the event has, as a number.
func field(f Fields, names ...string) (float64, string, bool, error) {
	for _, n := range names {
		if n == "" {
			continue
		}
		v, ok := f[n]
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, n, true, heraldtype.FieldErrorf(n, "is %q, not a number", v)
		}
		return x, n, true, nil
	}
	// Missing: named as the rule names it, else by its canonical name.
	for _, n := range names {
		if n != "" {
			return 0, n, false, nil
		}
	}
	return 0, "", false, nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Detect decides whether the event with fields f, which happened at at,
// fires detector d, given the subject's previous state; it returns the
// state to keep. An event missing a field the detector needs is an error
// naming the field.
func Detect(d heraldtype.Detector, f Fields, at time.Time, prev State) (Result, State, error) {
	next := prev
	switch {
	case d.PriceDropPct > 0 || d.PriceDropAbs > 0:
		return priceDrop(d, f, next)
	case d.Restock != nil:
		return restock(d, f, at, next)
	case len(d.Changed) > 0:
		return changed(d.Changed, f, next)
	default:
		return Result{Fired: true, Reason: "always"}, next, nil
	}
}

func priceDrop(d heraldtype.Detector, f Fields, st State) (Result, State, error) {
	prev, pn, ok, err := field(f, d.Fields.PreviousPrice, "previous_price", "previousPrice")
	if err != nil {
		return Result{}, st, err
	}
	if !ok {
		return Result{}, st, heraldtype.FieldErrorf(pn, "is missing: the price-drop detector needs the previous price")
	}
	cur, cn, ok, err := field(f, d.Fields.CurrentPrice, "current_price", "currentPrice")
	if err != nil {
		return Result{}, st, err
	}
	if !ok {
		return Result{}, st, heraldtype.FieldErrorf(cn, "is missing: the price-drop detector needs the current price")
	}
	drop := prev - cur
	vars := map[string]string{"previous_price": num(prev), "current_price": num(cur), "drop_amount": num(drop)}
	if prev <= 0 || drop <= 0 {
		vars["drop_pct"] = "0"
		return Result{Reason: "the price did not drop", Vars: vars}, st, nil
	}
	pct := drop / prev * 100
	vars["drop_pct"] = num(math.Round(pct*10) / 10)
	switch {
	case d.PriceDropPct > 0 && pct >= d.PriceDropPct:
		return Result{Fired: true, Reason: "the price dropped " + vars["drop_pct"] + " %", Vars: vars}, st, nil
	case d.PriceDropAbs > 0 && drop >= d.PriceDropAbs:
		return Result{Fired: true, Reason: "the price dropped by " + vars["drop_amount"], Vars: vars}, st, nil
	}
	return Result{Reason: "the price dropped " + vars["drop_pct"] + " %, under the threshold", Vars: vars}, st, nil
}

func restock(d heraldtype.Detector, f Fields, at time.Time, st State) (Result, State, error) {
	cur, cn, ok, err := field(f, d.Fields.CurrentStock, "current_stock", "currentStock")
	if err != nil {
		return Result{}, st, err
	}
	if !ok {
		return Result{}, st, heraldtype.FieldErrorf(cn, "is missing: the restock detector needs the current stock")
	}
	prev, _, hasPrev, err := field(f, d.Fields.PreviousStock, "previous_stock", "previousStock")
	if err != nil {
		return Result{}, st, err
	}
	vars := map[string]string{"current_stock": num(cur)}
	if hasPrev {
		vars["previous_stock"] = num(prev)
	}
	if cur <= 0 {
		if st.ZeroSince.IsZero() {
			st.ZeroSince = at
		}
		return Result{Reason: "out of stock", Vars: vars}, st, nil
	}
	min := float64(DefaultRestockMin)
	if m := d.Restock.Min; m != nil && *m > 0 {
		min = float64(*m)
	}
	// A restock is a move from 0: said by the event, or seen in the state
	// when the event does not carry the previous stock.
	fromZero := (hasPrev && prev <= 0) || (!hasPrev && !st.ZeroSince.IsZero())
	rearm := time.Duration(d.Restock.RearmAfter)
	if rearm <= 0 {
		rearm = DefaultRestockRearm
	}
	armed := st.RestockFired.IsZero() || (!st.ZeroSince.IsZero() && at.Sub(st.ZeroSince) >= rearm)
	zeroSince := st.ZeroSince
	if cur >= min {
		st.ZeroSince = time.Time{}
	}
	switch {
	case !fromZero:
		return Result{Reason: "in stock before", Vars: vars}, st, nil
	case cur < min:
		st.ZeroSince = zeroSince // still below the threshold: not restocked yet
		return Result{Reason: "restocked below the minimum of " + num(min), Vars: vars}, st, nil
	case !armed:
		return Result{Reason: "restocked, but within " + rearm.String() + " of the last restock notice (hysteresis)", Vars: vars}, st, nil
	}
	st.RestockFired = at
	return Result{Fired: true, Reason: "back in stock", Vars: vars}, st, nil
}

func changed(names []string, f Fields, st State) (Result, State, error) {
	var diff []string
	last := make(map[string]string, len(names))
	for k, v := range st.Fields {
		last[k] = v
	}
	for _, n := range names {
		v, ok := f[n]
		if !ok {
			continue
		}
		if old, seen := st.Fields[n]; seen && old != v {
			diff = append(diff, n)
		}
		last[n] = v
	}
	st.Fields = last
	slices.Sort(diff)
	if len(diff) == 0 {
		return Result{Reason: "no watched field changed", Vars: map[string]string{"changed": ""}}, st, nil
	}
	c := strings.Join(diff, ",")
	return Result{Fired: true, Reason: "changed: " + c, Vars: map[string]string{"changed": c}}, st, nil
}
