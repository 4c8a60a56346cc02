package heraldtype

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
)

// Schedule says when a reminder or a recurring campaign fires (issue 19,
// S2.2, S3.7). Exactly one of At, Backoff, RRule and Cron is set:
//
//	{"at":"2026-12-01T09:00:00Z"}                                  one shot
//	{"backoff":{"first":"1h","factor":2,"max":"48h"}}              driven by sent_count (S2.2)
//	{"rrule":"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"}           RFC 5545, on the user's wall clock
//	{"cron":"0 9 * * *"}                                           five fields, on the user's wall clock
//
// It is a value type only: package internal/schedule validates it
// (schedule.Compile, every refusal naming its field) and evaluates it; its
// documentation gives the rules and the limits.
type Schedule struct {
	// At is the one instant a one-shot schedule fires.
	At time.Time `json:"at,omitzero"`
	// Backoff repeats with growing intervals: the interval before send k+1
	// is min(First·Factor^k, Max), k being the number already sent.
	Backoff *Backoff `json:"backoff,omitempty"`
	// RRule is an RFC 5545 recurrence rule (the subset internal/schedule
	// documents), evaluated on the wall clock of TimeZone.
	RRule string `json:"rrule,omitempty"`
	// Cron is a standard five-field cron expression (or @yearly, @monthly,
	// @weekly, @daily, @hourly), evaluated on the wall clock of TimeZone.
	Cron string `json:"cron,omitempty"`
	// TimeZone is the IANA zone RRule and Cron are evaluated in; empty
	// means the user's own zone (default Asia/Seoul).
	TimeZone string `json:"time_zone,omitempty"`
	// Spread spreads a fleet-wide due time over a window: each reminder
	// fires at a deterministic offset in [0, Spread) after its occurrence,
	// so 09:00 for a million users is not one spike (issue 19 item 5).
	Spread Duration `json:"spread,omitzero"`
	// CatchUp says what to do with occurrences missed while Herald was
	// down: skip, once (the default) or all.
	CatchUp CatchUp `json:"catch_up,omitempty"`
	// CatchUpWindow bounds how late a missed occurrence may still be fired;
	// zero means the default (24 h).
	CatchUpWindow Duration `json:"catch_up_window,omitzero"`
	// Immediately makes a reminder's first occurrence due when it is
	// registered (or updated, which restarts its schedule) instead of at
	// the schedule's first time; the schedule then goes on from there. The
	// immediate occurrence is a send like any other (sent_count counts it)
	// but does not make a backoff grow: the wait after it is the one the
	// schedule would have started with. Reminders only.
	Immediately bool `json:"immediately,omitempty"`
}

// Backoff is the exponential schedule of a reminder that repeats until the
// user acts (S2.2).
type Backoff struct {
	// First is the interval before the first send.
	First Duration `json:"first"`
	// Factor multiplies the interval after each send; at least 1.
	Factor float64 `json:"factor"`
	// Max caps the interval; at least First.
	Max Duration `json:"max"`
}

// CatchUp is a schedule's policy for occurrences that fell due while no
// scheduler ran (issue 19 item 7).
type CatchUp string

const (
	// CatchUpSkip fires no occurrence that is more than a minute late.
	CatchUpSkip CatchUp = "skip"
	// CatchUpOnce fires only the latest missed occurrence within the
	// window. It is the default.
	CatchUpOnce CatchUp = "once"
	// CatchUpAll fires every missed occurrence within the window, oldest
	// first.
	CatchUpAll CatchUp = "all"
)

// Duration is a time.Duration written in JSON as a Go duration string
// ("90m", "1h30m", "48h"); zero is written "0s".
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string. A JSON number is refused: a
// bare number is ambiguous (seconds? nanoseconds?).
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // like encoding/json for every other type: no change
	}
	// A *json.UnmarshalTypeError: encoding/json adds the field's path
	// (schedule.backoff.first), so the caller is told which one is wrong.
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Duration]()}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: strconv.Quote(s), Type: reflect.TypeFor[Duration]()}
	}
	*d = Duration(v)
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }
