package store_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// The from → to table of docs/ARCHITECTURE.md ("Delivery state machine")
// is store.Moves, row for row.
func TestArchitectureTableIsMoves(t *testing.T) {
	doc, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Delivery state machine\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no \"Delivery state machine\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	writer := regexp.MustCompile("^`(Store\\.\\w+)(?:\\(store\\.(\\w+)\\))?`$")
	var got []string
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) != 4 || strings.HasPrefix(cells[0], "--") || strings.TrimSpace(cells[0]) == "from" {
			continue
		}
		from, to, by := strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1]), strings.TrimSpace(cells[3])
		if from == "—" {
			from = ""
		}
		m := writer.FindStringSubmatch(by)
		if m == nil {
			t.Errorf("written by %q is not `Store.Method` or `Store.Complete(store.Transition)`", by)
			continue
		}
		got = append(got, row(heraldtype.DeliveryState(from), heraldtype.DeliveryState(to), m[1], m[2]))
	}
	var want []string
	for _, m := range store.Moves {
		want = append(want, row(m.From, m.To, m.By.String(), store.TransitionName(m.Transition)))
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/ARCHITECTURE.md's state table:\n%s\nstore.Moves:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func row(from, to heraldtype.DeliveryState, by, transition string) string {
	if from == "" {
		from = "—"
	}
	if transition != "" {
		by += "(store." + transition + ")"
	}
	return fmt.Sprintf("%s → %s by %s", from, to, by)
}

// Every Transition is exactly one Complete move, from leased to its
// State, and nothing else writes an outcome.
func TestEveryTransitionIsOneMove(t *testing.T) {
	count := map[string]int{}
	for _, m := range store.Moves {
		if !m.From.Valid() && m.From != "" || !m.To.Valid() {
			t.Errorf("move %q → %q: not a state", m.From, m.To)
		}
		if (m.By == store.ByComplete) != (m.Transition != nil) {
			t.Errorf("move %s → %s by %s: a Transition goes with Complete, and only with it", m.From, m.To, m.By)
		}
		if m.Transition == nil {
			continue
		}
		count[store.TransitionName(m.Transition)]++
		if m.From != heraldtype.StateLeased || m.To != m.Transition.State() {
			t.Errorf("move %s → %s by %T, want leased → %s", m.From, m.To, m.Transition, m.Transition.State())
		}
	}
	for _, tr := range store.Transitions {
		if count[store.TransitionName(tr)] != 1 {
			t.Errorf("%T is %d moves of store.Moves, want 1", tr, count[store.TransitionName(tr)])
		}
	}
	if len(count) != len(store.Transitions) {
		t.Errorf("store.Moves has %d transitions, store.Transitions %d", len(count), len(store.Transitions))
	}
}

// Allowed is store.Moves: every move in it, nothing else.
func TestAllowed(t *testing.T) {
	states := append([]heraldtype.DeliveryState{""}, store.DeliveryStates...)
	for by := store.ByEnqueue; by <= store.ByReplay; by++ {
		for _, from := range states {
			for _, to := range states {
				want := slices.ContainsFunc(store.Moves, func(m store.Move) bool { return m.From == from && m.To == to && m.By == by })
				if got := store.Allowed(from, to, by); got != want {
					t.Errorf("Allowed(%q, %q, %s) = %v, want %v", from, to, by, got, want)
				}
			}
		}
	}
	if store.Allowed(heraldtype.StateLeased, "bogus", store.ByComplete) || store.Allowed("bogus", heraldtype.StatePending, store.ByReplay) {
		t.Error("Allowed a state that does not exist")
	}
}

// CheckOutcome refuses what Complete must not write, and Row flattens each
// transition into the columns both stores write.
func TestCheckOutcomeAndRow(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	o := func(to store.Transition) store.Outcome {
		return store.Outcome{DeliveryID: 1, Owner: "w", Attempt: 1, At: at}.To(to)
	}
	bad := []store.Outcome{
		store.Outcome{Owner: "w", Attempt: 1, At: at}.To(store.Sent{}),
		store.Outcome{DeliveryID: 1, Attempt: 1, At: at}.To(store.Sent{}),
		store.Outcome{DeliveryID: 1, Owner: "w", Attempt: 1}.To(store.Sent{}),
		{DeliveryID: 1, Owner: "w", Attempt: 1, At: at},
		o(nil),
		o(store.ReleasedWithReason{}),
		o(store.ReleasedWithReason{Outcome: heraldtype.OutcomeRetry}),
	}
	for _, b := range bad {
		if err := store.CheckOutcome(&b); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("CheckOutcome(%+v) = %v, want invalid", b, err)
		}
	}
	later := at.Add(time.Minute)
	fail := store.Failure{ErrorCode: "c", Error: "e", RetryAfter: time.Second, Latency: time.Millisecond}
	for _, tc := range []struct {
		to   store.Transition
		want store.OutcomeRow
	}{
		{store.Sent{ProviderMessageID: "m", Latency: time.Millisecond}, store.OutcomeRow{State: heraldtype.StateSent,
			Timeline: heraldtype.OutcomeSent, ProviderMessageID: "m", Latency: time.Millisecond, ResetFailCount: true, SetError: true,
			Report: heraldtype.ReportSent}},
		{store.Sent{DeviceClean: true}, store.OutcomeRow{State: heraldtype.StateSent, Timeline: heraldtype.OutcomeSent, SetError: true,
			Report: heraldtype.ReportSent}},
		{store.Retry{RunAt: later, Failure: fail}, store.OutcomeRow{State: heraldtype.StatePending, RunAt: later,
			Timeline: heraldtype.OutcomeRetry, SetError: true, ErrorCode: "c", Error: "e", RetryAfter: time.Second, Latency: time.Millisecond,
			Report: heraldtype.ReportSendFailed}},
		{store.Retry{}, store.OutcomeRow{State: heraldtype.StatePending, RunAt: at, Timeline: heraldtype.OutcomeRetry,
			Report: heraldtype.ReportSendFailed}},
		{store.Dead{Failure: store.Failure{ErrorCode: "UNREGISTERED"}, InvalidReason: "UNREGISTERED"}, store.OutcomeRow{
			State: heraldtype.StateDead, Timeline: heraldtype.OutcomeDead, SetError: true, ErrorCode: "UNREGISTERED", InvalidReason: "UNREGISTERED",
			Report: heraldtype.ReportSendFailed}},
		{store.Dead{Failure: store.Failure{ErrorCode: "no_provider", NotSent: true}}, store.OutcomeRow{State: heraldtype.StateDead,
			Timeline: heraldtype.OutcomeDead, SetError: true, ErrorCode: "no_provider", Report: heraldtype.ReportNotSent}},
		{store.Dead{Failure: store.Failure{ErrorCode: "21610"}, SuppressAddress: true}, store.OutcomeRow{State: heraldtype.StateDead,
			Timeline: heraldtype.OutcomeDead, SetError: true, ErrorCode: "21610", Suppress: true, SuppressReason: "21610",
			Report: heraldtype.ReportSendFailed}},
		{store.Unknown{Failure: fail}, store.OutcomeRow{State: heraldtype.StateUnknown, Timeline: heraldtype.OutcomeUnknown,
			SetError: true, ErrorCode: "c", Error: "e", RetryAfter: time.Second, Latency: time.Millisecond,
			Report: heraldtype.ReportSendUnknown}},
		{store.Skipped{ErrorCode: "device_removed"}, store.OutcomeRow{State: heraldtype.StateSkipped, Timeline: heraldtype.OutcomeSkipped,
			SetError: true, ErrorCode: "device_removed", Report: heraldtype.ReportNotSent}},
		{store.OptedOut{Error: "off"}, store.OutcomeRow{State: heraldtype.StateOptedOut, Timeline: heraldtype.OutcomeOptedOut,
			SetError: true, Error: "off", Report: heraldtype.ReportNotSent}},
		{store.RateLimited{}, store.OutcomeRow{State: heraldtype.StateRateLimited, Timeline: heraldtype.OutcomeRateLimited,
			Report: heraldtype.ReportNotSent}},
		{store.Released{}, store.OutcomeRow{State: heraldtype.StatePending, RunAt: at, Release: true, Report: heraldtype.ReportNotSent}},
		{store.ReleasedWithReason{Outcome: heraldtype.OutcomeDeferred, RunAt: later, ErrorCode: "quiet_hours", Error: "q"},
			store.OutcomeRow{State: heraldtype.StatePending, RunAt: later, Release: true, Timeline: heraldtype.OutcomeDeferred,
				SetError: true, ErrorCode: "quiet_hours", Error: "q", Report: heraldtype.ReportNotSent}},
	} {
		oc := o(tc.to)
		if err := store.CheckOutcome(&oc); err != nil {
			t.Errorf("CheckOutcome(%#v): %v", tc.to, err)
		}
		if got := oc.Row(); got != tc.want {
			t.Errorf("Row of %#v =\n%+v, want\n%+v", tc.to, got, tc.want)
		}
		if got := oc.Transition(); store.TransitionName(got) != store.TransitionName(tc.to) {
			t.Errorf("Transition of an outcome to %T = %T", tc.to, got)
		}
	}
}

// Making an outcome allocates nothing: a few thousand a second go through
// the dispatcher and Complete.
func TestOutcomeToDoesNotAllocate(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var sink store.Outcome
	pm := "projects/p/messages/1"
	if n := testing.AllocsPerRun(100, func() {
		sink = store.Outcome{DeliveryID: 1, Owner: "w", Attempt: 1, At: at}.To(store.Sent{ProviderMessageID: pm, Latency: time.Millisecond})
		if err := store.CheckOutcome(&sink); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("an outcome costs %v allocations, want 0", n)
	}
	_ = sink.Row()
}
