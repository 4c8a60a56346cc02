package rules_test

import (
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store/rules"
)

// TestEventStops is the event-stop rule (issue 19 item 3) on its own;
// store/storetest checks that both stores apply it.
func TestEventStops(t *testing.T) {
	match := heraldtype.ReminderStop{OnEvent: "checkout_completed", Match: map[string]string{"cart": "42"}}
	for _, c := range []struct {
		name  string
		stop  heraldtype.ReminderStop
		event string
		data  map[string]string
		want  bool
	}{
		{"name alone", heraldtype.ReminderStop{OnEvent: "checkout_completed"}, "checkout_completed", nil, true},
		{"name alone, any data", heraldtype.ReminderStop{OnEvent: "checkout_completed"}, "checkout_completed",
			map[string]string{"cart": "7"}, true},
		{"other name", heraldtype.ReminderStop{OnEvent: "checkout_completed"}, "login", nil, false},
		{"no on_event", heraldtype.ReminderStop{}, "checkout_completed", nil, false},
		{"empty event", heraldtype.ReminderStop{}, "", nil, false},
		{"match equal", match, "checkout_completed", map[string]string{"cart": "42", "x": "y"}, true},
		{"match differs", match, "checkout_completed", map[string]string{"cart": "43"}, false},
		{"match missing", match, "checkout_completed", map[string]string{"x": "42"}, false},
		{"match, no data", match, "checkout_completed", nil, false},
		{"match empty value needs the field", heraldtype.ReminderStop{OnEvent: "e", Match: map[string]string{"k": ""}},
			"e", nil, false},
		{"match empty value present", heraldtype.ReminderStop{OnEvent: "e", Match: map[string]string{"k": ""}},
			"e", map[string]string{"k": ""}, true},
	} {
		if got := rules.EventStops(c.stop, c.event, c.data); got != c.want {
			t.Errorf("%s: EventStops = %v, want %v", c.name, got, c.want)
		}
	}
}
