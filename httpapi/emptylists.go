package httpapi

import (
	"slices"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
)

// An explicit empty JSON list where leaving the field out means a default
// is refused, naming the field, rather than quietly read as "not given"
// (issue 22 item 5: "channels": [] used to become push). JSON tells an
// absent field (or null) from [] — encoding/json decodes the one to a nil
// slice and the other to an empty one — but Go does not: a Go program's
// nil and empty slice both mean "not given" to the Client, by the usual
// convention, so this check belongs to the JSON transport alone.

// emptyList is the error of a list given as [] (non-nil, empty).
func emptyList[T any](field string, list []T, instead string) error {
	if list != nil && len(list) == 0 {
		return heraldtype.FieldErrorf(field, "is an empty list; %s", instead)
	}
	return nil
}

// checkTriggerLists refuses a trigger's explicit empty lists: channels
// (absent: the type's channels, default push) and user_ids (absent:
// user_id).
func checkTriggerLists(r *herald.Request) error {
	if err := emptyList("channels", r.Channels, "list at least one channel (push, sms, email, in_app), or leave channels out for the type's channels (default push)"); err != nil {
		return err
	}
	return emptyList("user_ids", r.UserIDs, "list at least one user id, or give user_id")
}

// checkPreferenceLists refuses a type preference's explicit empty
// channels (absent: every channel), which reads as "none" to a person
// and as "all" to the policy. opted_out_channels: [] is no default: it
// opts out of nothing, as it says.
func checkPreferenceLists(p *herald.Preferences) error {
	names := make([]string, 0, len(p.Types))
	for name := range p.Types {
		names = append(names, name)
	}
	slices.Sort(names) // the same error for the same body every time
	for _, name := range names {
		if tp := p.Types[name]; tp.Channels != nil && len(tp.Channels) == 0 {
			return heraldtype.FieldErrorf("types", "types.%s.channels is an empty list; list the channels the type may use, leave channels out to allow every channel, or set \"disabled\": true to turn the type off", name)
		}
	}
	return nil
}

// checkTypeLists refuses a type declaration's explicit empty channels
// (absent: push).
func checkTypeLists(t *herald.TypeConfig) error {
	return emptyList("channels", t.Channels, "list at least one channel (push, sms, email, in_app), or leave channels out for push")
}
