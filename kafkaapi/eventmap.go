package kafkaapi

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// EventFields names the fields of a record that give a herald.Event its
// own (Topic.Fields, with ShapeFields). Each is a field name; "-" means
// the record has none; empty takes DefaultEventFields'. Every other
// scalar field goes into Event.Data as its text.
type EventFields struct {
	// ID: the event's id, for de-duplication; none: the record's
	// topic:partition:offset.
	ID string
	// Name: what happened (required in every record; cannot be "-").
	Name string
	// UserID: whom it happened to, when the record says.
	UserID string
	// Subject is a template, not a field: text with {field} placeholders,
	// each replaced by that field's text ("product:{productId}"). A
	// record without a field the template names is a decode error.
	Subject string
	// Version: the event's order within its subject (herald.Event.Version,
	// the stale guard's), a positive integer — epoch milliseconds — or an
	// Avro timestamp. A record without it is a decode error; "-" reads
	// the events unordered.
	Version string
	// OccurredAt: when it happened: epoch milliseconds, an Avro
	// timestamp or RFC 3339 text.
	OccurredAt string
}

// DefaultEventFields are seed 003's ProductInventoryEvent's: eventId,
// eventType, userId (it has none; a producer's record may), the subject
// product:{productId}, and its timestamp (epoch milliseconds) as both the
// version and the time.
var DefaultEventFields = EventFields{ID: "eventId", Name: "eventType", UserID: "userId",
	Subject: "product:{productId}", Version: "timestamp", OccurredAt: "timestamp"}

// NoField is EventFields' "the record has none".
const NoField = "-"

// eventMapping maps a decoded record (its fields by name) to a
// herald.Event.
type eventMapping struct {
	id, name, userID, version, occurredAt string
	// subject is the parsed template: literal text at even indexes,
	// field names at odd ones.
	subject []string
	// own are the fields that are the event's own, kept out of its data.
	own map[string]bool
}

// newEventMapping checks f (named field in errors) and fills in the
// defaults.
func newEventMapping(field string, f EventFields) (*eventMapping, error) {
	pick := func(v, def string) string {
		switch v {
		case "":
			return def
		case NoField:
			return ""
		}
		return v
	}
	m := &eventMapping{id: pick(f.ID, DefaultEventFields.ID), name: pick(f.Name, DefaultEventFields.Name),
		userID: pick(f.UserID, DefaultEventFields.UserID), version: pick(f.Version, DefaultEventFields.Version),
		occurredAt: pick(f.OccurredAt, DefaultEventFields.OccurredAt), own: map[string]bool{}}
	if m.name == "" {
		return nil, heraldtype.FieldErrorf(field+".name", "is required: every event has a name")
	}
	subject, err := parseSubject(pick(f.Subject, DefaultEventFields.Subject))
	if err != nil {
		return nil, heraldtype.FieldErrorf(field+".subject", "%v", err)
	}
	m.subject = subject
	for _, n := range []string{m.id, m.name, m.userID, m.version, m.occurredAt} {
		if n != "" {
			m.own[n] = true
		}
	}
	return m, nil
}

// parseSubject splits a subject template into literal text and the
// field names of its {field} placeholders, alternately.
func parseSubject(tmpl string) ([]string, error) {
	if tmpl == "" {
		return nil, nil
	}
	var parts []string
	rest := tmpl
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, fmt.Errorf("%q has a '}' without its '{'", tmpl)
			}
			return append(parts, rest), nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q has a '{' without its '}'", tmpl)
		}
		name := rest[open+1 : open+end]
		if name == "" || strings.ContainsAny(name, "{ ") {
			return nil, fmt.Errorf("%q: a placeholder names one field, {field}", tmpl)
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return nil, fmt.Errorf("%q has a '}' without its '{'", tmpl)
		}
		parts = append(parts, rest[:open], name)
		rest = rest[open+end+1:]
	}
}

// event maps rec, a record's fields by name as decoded from JSON (numbers
// as json.Number) or Avro (union values unwrapped), to a herald.Event.
// An error names the record's field.
func (m *eventMapping) event(rec map[string]any) (herald.Event, error) {
	var e herald.Event
	name, ok := text(rec[m.name])
	if !ok || name == "" {
		return e, fmt.Errorf("%s: is required (the event's name)", m.name)
	}
	e.Name = name
	if m.id != "" {
		e.ID, _ = text(rec[m.id])
	}
	if m.userID != "" {
		e.UserID, _ = text(rec[m.userID])
	}
	if len(m.subject) > 0 {
		var b strings.Builder
		for i, p := range m.subject {
			if i%2 == 0 {
				b.WriteString(p)
				continue
			}
			v, ok := text(rec[p])
			if !ok {
				return e, fmt.Errorf("%s: is required by the subject template", p)
			}
			b.WriteString(v)
		}
		e.Subject = b.String()
	}
	if m.version != "" {
		// A version the record does not give, or gives unreadably, is an
		// error, never 0: 0 means "unordered" and would let a stale event
		// through the guard (issue 30 item 2).
		raw, ok := rec[m.version]
		if !ok || raw == nil {
			return e, fmt.Errorf("%s: is required (the event's version)", m.version)
		}
		v, err := epochMillis(raw)
		if err != nil {
			return e, fmt.Errorf("%s: %w (the event's version)", m.version, err)
		}
		if v <= 0 {
			return e, fmt.Errorf("%s: must be a positive integer (epoch milliseconds), not %d (the event's version)", m.version, v)
		}
		e.Version = v
	}
	if m.occurredAt != "" && rec[m.occurredAt] != nil {
		at, err := instant(rec[m.occurredAt])
		if err != nil {
			return e, fmt.Errorf("%s: %w (when the event occurred)", m.occurredAt, err)
		}
		e.OccurredAt = &at
	}
	for k, v := range rec {
		if m.own[k] {
			continue
		}
		if s, ok := text(v); ok {
			if e.Data == nil {
				e.Data = make(map[string]string, len(rec))
			}
			e.Data[k] = s
		}
	}
	return e, nil
}

// text is a scalar field's text: a string itself, a number in decimal
// (a float without an exponent: 10000, 99.99), a boolean, a timestamp in
// RFC 3339, a decimal in decimal notation. ok is false for null and absent
// fields and for what is not a scalar (records, arrays, maps, bytes,
// fixed), which an event does not carry.
func text(v any) (s string, ok bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), true
	case *big.Rat: // an Avro decimal
		return decimalText(x), true
	}
	return "", false
}

// decimalText is an Avro decimal in decimal notation, with as many
// fractional digits as it needs (a decimal's scale is at most its
// precision, hence bounded; 8500.50 is 8500.5).
func decimalText(r *big.Rat) string {
	for digits := 0; digits < 64; digits++ {
		s := r.FloatString(digits)
		if v, ok := new(big.Rat).SetString(s); ok && v.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(64)
}

// epochMillis reads an integer (epoch milliseconds; in JSON, a number or
// its decimal text) or a timestamp.
func epochMillis(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case json.Number, string:
		// A JSON producer may write a long as text.
		n, err := strconv.ParseInt(fmt.Sprint(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("must be an integer (epoch milliseconds), not %q", x)
		}
		return n, nil
	case time.Time:
		return x.UnixMilli(), nil
	}
	return 0, fmt.Errorf("must be an integer (epoch milliseconds), not %T", v)
}

// instant reads epoch milliseconds, a timestamp or RFC 3339 text.
func instant(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t.UTC(), nil
		}
	}
	ms, err := epochMillis(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("must be epoch milliseconds or an RFC 3339 time, not %q", fmt.Sprint(v))
	}
	return time.UnixMilli(ms).UTC(), nil
}
