package kafkaapi

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

// A scalar field is carried as its text: numbers in decimal without an
// exponent (Avro floats as the producer wrote them), timestamps in RFC
// 3339; what is not a scalar is not carried.
func TestFieldText(t *testing.T) {
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.FixedZone("KST", 9*3600))
	for _, tc := range []struct {
		in   any
		want string
		ok   bool
	}{
		{"x", "x", true}, {json.Number("8500.50"), "8500.50", true}, {true, "true", true},
		{int(-3), "-3", true}, {int32(5), "5", true}, {int64(1764000000000), "1764000000000", true},
		{float32(10000), "10000", true}, {float32(99.99), "99.99", true}, {float64(1e21), "1000000000000000000000", true},
		{at, "2026-11-01T01:00:00Z", true}, {big.NewRat(17001, 2), "8500.5", true}, {big.NewRat(-3, 1), "-3", true},
		{nil, "", false}, {[]byte("b"), "", false}, {map[string]any{"a": 1}, "", false}, {[]any{1}, "", false},
	} {
		if got, ok := text(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("text(%#v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseSubject(t *testing.T) {
	for tmpl, want := range map[string][]string{
		"":                    nil,
		"fixed":               {"fixed"},
		"product:{productId}": {"product:", "productId", ""},
		"{a}-{b}":             {"", "a", "-", "b", ""},
	} {
		if got, err := parseSubject(tmpl); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseSubject(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for _, bad := range []string{"{", "}", "a}{b}", "{a", "{}", "{a b}", "{{a}}"} {
		if _, err := parseSubject(bad); err == nil {
			t.Errorf("parseSubject(%q) accepted", bad)
		}
	}
}

// The version and time fields take epoch milliseconds (a JSON number or
// its text, an Avro long) or a timestamp; anything else names why.
func TestVersionAndTime(t *testing.T) {
	m, err := newEventMapping("f", EventFields{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1764000000000).UTC()
	for _, ts := range []any{int64(1764000000000), json.Number("1764000000000"), "1764000000000", at} {
		e, err := m.event(map[string]any{"eventType": "X", "productId": "1", "timestamp": ts})
		if err != nil || e.Version != 1764000000000 || !e.OccurredAt.Equal(at) || e.Data["timestamp"] != "" {
			t.Errorf("timestamp %#v: %+v, %v", ts, e, err)
		}
	}
	// Issue 30 item 2: a missing or unreadable version is an error, never
	// version 0 (which the stale guard lets through).
	for _, ts := range []any{"soon", json.Number("1.5"), true, nil, int64(0), int64(-5)} {
		if _, err := m.event(map[string]any{"eventType": "X", "productId": "1", "timestamp": ts}); err == nil ||
			!strings.HasPrefix(err.Error(), "timestamp: ") {
			t.Errorf("timestamp %#v: %v, want an error naming timestamp", ts, err)
		}
	}
	if e, err := m.event(map[string]any{"eventType": "X", "productId": "1"}); err == nil || err.Error() != "timestamp: is required (the event's version)" {
		t.Errorf("no timestamp: %+v, %v", e, err)
	}
	// Without a version field the events are unordered: no error.
	unordered, err := newEventMapping("f", EventFields{Version: NoField, OccurredAt: NoField})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := unordered.event(map[string]any{"eventType": "X", "productId": "1"}); err != nil || e.Version != 0 || e.OccurredAt != nil {
		t.Errorf("no version field: %+v, %v", e, err)
	}
}
