// Package escalation sends a notification again on other channels when
// nobody reacted to it in time (issue 36 item 3; docs/ARCHITECTURE.md
// "As built: escalation"): it validates a type's escalation steps and
// runs the Worker every instance runs, which claims due steps and fires
// each — its notification enqueued in the transaction that marks the
// step fired, unless a receipt of the step's unless came first.
package escalation

import (
	"fmt"
	"slices"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// Limits of a type's escalation.
const (
	// MinAfter and MaxAfter bound a step's wait: under a second is no
	// wait for a reaction, and a week is as long as a digest's window.
	MinAfter = time.Second
	MaxAfter = 7 * 24 * time.Hour
)

// channels are the channels a step may send on.
var channels = []heraldtype.Channel{heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelEmail, heraldtype.ChannelInApp}

// Normalize validates a type's escalation steps: at most maxSteps (the
// deployment's limit), each with an after between MinAfter and MaxAfter
// and later than the step before (every after is measured from the
// notification's send), an unless among heraldtype.EscalationEvents and
// one or more known channels, none twice. Each refusal is
// invalid_argument naming its field ("escalate[1].unless").
func Normalize(steps []heraldtype.EscalationStep, maxSteps int) error {
	if len(steps) > maxSteps {
		return heraldtype.FieldErrorf("escalate", "has %d steps, over %d (max_escalation_steps)", len(steps), maxSteps)
	}
	var prev time.Duration
	for i, st := range steps {
		field := func(name string) string { return fmt.Sprintf("escalate[%d].%s", i, name) }
		switch {
		case st.After == 0:
			return heraldtype.FieldErrorf(field("after"), "is required (a duration such as 10m)")
		case st.After < MinAfter || st.After > MaxAfter:
			return heraldtype.FieldErrorf(field("after"), "must be between 1s and 7 days, got %s", st.After)
		case st.After <= prev:
			return heraldtype.FieldErrorf(field("after"), "must be later than the step before (%s): every after counts from the send", prev)
		}
		prev = st.After
		if !slices.Contains(heraldtype.EscalationEvents, st.Unless) {
			return heraldtype.FieldErrorf(field("unless"), "%q must be read, opened, delivered or clicked", st.Unless)
		}
		if len(st.Channels) == 0 {
			return heraldtype.FieldErrorf(field("channels"), "needs at least one channel")
		}
		for j, ch := range st.Channels {
			if !slices.Contains(channels, ch) {
				return heraldtype.FieldErrorf(field("channels"), "unknown channel %q (known: push, sms, email, in_app)", ch)
			}
			if slices.Contains(st.Channels[:j], ch) {
				return heraldtype.FieldErrorf(field("channels"), "%q is listed twice", ch)
			}
		}
	}
	return nil
}
