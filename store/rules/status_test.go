package rules_test

import (
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/rules"
)

// d is a delivery on channel ch in state st with last_error_code code.
func d(ch heraldtype.Channel, st heraldtype.DeliveryState, code string) heraldtype.Delivery {
	return heraldtype.Delivery{Channel: ch, State: st, LastErrorCode: code}
}

const (
	push  = heraldtype.ChannelPush
	sms   = heraldtype.ChannelSMS
	email = heraldtype.ChannelEmail
	inApp = heraldtype.ChannelInApp
)

// One status over mixed channels, and one per channel, by the one rule
// (issue 22 item 1, S3.9).
func TestDeliveriesStatus(t *testing.T) {
	t.Parallel()
	type chs = map[heraldtype.Channel]heraldtype.HistoryStatus
	const (
		pending   = heraldtype.StatePending
		leased    = heraldtype.StateLeased
		sent      = heraldtype.StateSent
		dead      = heraldtype.StateDead
		unknown   = heraldtype.StateUnknown
		skipped   = heraldtype.StateSkipped
		optedOut  = heraldtype.StateOptedOut
		limited   = heraldtype.StateRateLimited
		quiet     = heraldtype.CodeQuietHours
		hPending  = heraldtype.HistoryPending
		hDeferred = heraldtype.HistoryDeferred
		hSent     = heraldtype.HistorySent
		hPartial  = heraldtype.HistoryPartiallySent
		hLimited  = heraldtype.HistoryRateLimited
		hOpted    = heraldtype.HistoryOptedOut
		hFailed   = heraldtype.HistoryFailed
	)
	for _, c := range []struct {
		name     string
		channels []heraldtype.Channel
		ds       []heraldtype.Delivery
		status   heraldtype.HistoryStatus
		reason   string
		perCh    chs
	}{
		{"none", []heraldtype.Channel{push}, nil, hFailed, heraldtype.CodeNoDeliveries, chs{push: hFailed}},
		{"pending only", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, pending, "")}, hPending, "", chs{push: hPending}},
		{"leased", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, leased, quiet)}, hPending, "", chs{push: hPending}},
		{"retrying after an error", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, pending, "UNAVAILABLE")}, hPending, "", chs{push: hPending}},
		{"sent + deferred (the inbox has it, the phone at 08:00)", []heraldtype.Channel{push, sms, inApp},
			[]heraldtype.Delivery{d(inApp, sent, ""), d(push, pending, quiet), d(sms, pending, quiet)},
			hDeferred, quiet, chs{push: hDeferred, sms: hDeferred, inApp: hSent}},
		{"deferred beside a plain pending", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, pending, ""), d(push, pending, quiet)},
			hDeferred, quiet, chs{push: hDeferred}},
		{"pending + dead", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, pending, ""), d(push, dead, "UNREGISTERED")},
			hPending, "", chs{push: hPending}},
		{"all sent", []heraldtype.Channel{push, inApp}, []heraldtype.Delivery{d(push, sent, ""), d(inApp, sent, "")}, hSent, "",
			chs{push: hSent, inApp: hSent}},
		{"sent + opted out", []heraldtype.Channel{push, inApp}, []heraldtype.Delivery{d(inApp, sent, ""), d(push, optedOut, "type_disabled")},
			hSent, "", chs{push: hOpted, inApp: hSent}},
		{"sent + rate limited", []heraldtype.Channel{push, email}, []heraldtype.Delivery{d(email, sent, ""), d(push, limited, "daily_cap")},
			hSent, "", chs{push: hLimited, email: hSent}},
		{"sent + skipped", []heraldtype.Channel{sms, inApp}, []heraldtype.Delivery{d(inApp, sent, ""), d(sms, skipped, "no_address")},
			hSent, "", chs{sms: hFailed, inApp: hSent}},
		{"dead + sent", []heraldtype.Channel{push, inApp}, []heraldtype.Delivery{d(inApp, sent, ""), d(push, dead, "UNREGISTERED")},
			hPartial, "UNREGISTERED", chs{push: hFailed, inApp: hSent}},
		{"unknown + sent", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, sent, ""), d(push, unknown, "timeout")},
			hPartial, "timeout", chs{push: hPartial}},
		{"dead + unknown + sent: the greatest code", []heraldtype.Channel{push},
			[]heraldtype.Delivery{d(push, sent, ""), d(push, unknown, "UNAVAILABLE"), d(push, dead, "INVALID_ARGUMENT")},
			hPartial, "UNAVAILABLE", chs{push: hPartial}},
		{"all skipped", []heraldtype.Channel{sms, email}, []heraldtype.Delivery{d(sms, skipped, "no_address"), d(email, skipped, "suppressed")},
			hFailed, "suppressed", chs{sms: hFailed, email: hFailed}},
		{"rate limited + opted out", []heraldtype.Channel{push, email},
			[]heraldtype.Delivery{d(push, limited, "duplicate"), d(email, optedOut, "channel_opted_out")},
			hLimited, "duplicate", chs{push: hLimited, email: hOpted}},
		{"opted out + dead", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, optedOut, "type_disabled"), d(push, dead, "UNREGISTERED")},
			hOpted, "type_disabled", chs{push: hOpted}},
		{"dead + skipped: the greatest code", []heraldtype.Channel{push, email},
			[]heraldtype.Delivery{d(push, dead, "UNREGISTERED"), d(email, skipped, "no_address")},
			hFailed, "no_address", chs{push: hFailed, email: hFailed}},
		{"a channel without deliveries", []heraldtype.Channel{push, inApp}, []heraldtype.Delivery{d(inApp, sent, "")},
			hSent, "", chs{push: hFailed, inApp: hSent}},
	} {
		st, reason, perCh := rules.DeliveriesStatus(c.channels, c.ds)
		if st != c.status || reason != c.reason || !maps.Equal(perCh, c.perCh) {
			t.Errorf("%s: %s %q %v, want %s %q %v", c.name, st, reason, perCh, c.status, c.reason, c.perCh)
		}
	}
}

// The rule is one table: the last row holds always and is the only one
// that does; every status of the vocabulary is reachable.
func TestStatusRulesTable(t *testing.T) {
	t.Parallel()
	rs := rules.StatusRules
	for i, r := range rs {
		unconditional := len(r.Some) == 0 && len(r.None) == 0
		if unconditional != (i == len(rs)-1) {
			t.Errorf("row %d (%s): unconditional = %v; only the last row may (and must) be", i, r.Status, unconditional)
		}
		if !r.Status.Valid() {
			t.Errorf("row %d: unknown status %q", i, r.Status)
		}
	}
	for _, st := range heraldtype.HistoryStatuses {
		found := false
		for _, r := range rs {
			found = found || r.Status == st
		}
		if !found {
			t.Errorf("status %s is in no row of StatusRules", st)
		}
	}
}

// countRows is a result set of HistoryCountsSQL.
type countRows struct {
	rows []countRow
	i    int
}

type countRow struct {
	id    string
	ch    heraldtype.Channel
	state heraldtype.DeliveryState
	code  string
	n     int
}

func (r *countRows) Next() bool { r.i++; return r.i <= len(r.rows) }
func (r *countRows) Err() error { return nil }
func (r *countRows) Scan(dest ...any) error {
	row := r.rows[r.i-1]
	*dest[0].(*string) = row.id
	*dest[1].(*heraldtype.Channel) = row.ch
	*dest[2].(*heraldtype.DeliveryState) = row.state
	*dest[3].(*string) = row.code
	*dest[4].(*int) = row.n
	return nil
}

func TestHistoryCounts(t *testing.T) {
	t.Parallel()
	es := []heraldtype.HistoryEntry{
		{NotificationID: "a", Channels: []heraldtype.Channel{push, inApp}},
		{NotificationID: "b", Channels: []heraldtype.Channel{push}},
	}
	rows := &countRows{rows: []countRow{
		{"a", inApp, heraldtype.StateSent, "", 1},
		{"a", push, heraldtype.StatePending, heraldtype.CodeQuietHours, 2},
		{"a", push, heraldtype.StateDead, "UNREGISTERED", 1},
		{"c", push, heraldtype.StateDead, "UNREGISTERED", 1}, // not on the page
	}}
	if err := rules.HistoryCounts(rows, es); err != nil {
		t.Fatal(err)
	}
	wantCounts := map[heraldtype.DeliveryState]int{heraldtype.StateSent: 1, heraldtype.StatePending: 2, heraldtype.StateDead: 1}
	wantStatus := map[heraldtype.Channel]heraldtype.HistoryStatus{inApp: heraldtype.HistorySent, push: heraldtype.HistoryDeferred}
	if !maps.Equal(es[0].Deliveries, wantCounts) || !maps.Equal(es[0].ChannelStatus, wantStatus) {
		t.Fatalf("a: %v %v, want %v %v", es[0].Deliveries, es[0].ChannelStatus, wantCounts, wantStatus)
	}
	if len(es[1].Deliveries) != 0 || es[1].Deliveries == nil ||
		!maps.Equal(es[1].ChannelStatus, map[heraldtype.Channel]heraldtype.HistoryStatus{push: heraldtype.HistoryFailed}) {
		t.Fatalf("b: %v %v", es[1].Deliveries, es[1].ChannelStatus)
	}
}

// The table of docs/ARCHITECTURE.md ("A notification's status") is
// StatusRules, row for row: the same statuses in the same order, each
// fixed reason named.
func TestArchitectureTableIsStatusRules(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## A notification's status\n")
	if !ok {
		t.Fatal("docs/ARCHITECTURE.md has no \"A notification's status\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][]string
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) != 4 || strings.HasPrefix(cells[0], "-") || strings.TrimSpace(cells[0]) == "#" {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) != len(rules.StatusRules) {
		t.Fatalf("the table has %d rows, StatusRules %d", len(rows), len(rules.StatusRules))
	}
	for i, r := range rules.StatusRules {
		row := rows[i]
		if row[2] != string(r.Status) {
			t.Errorf("row %d: %s, StatusRules says %s", i+1, row[2], r.Status)
		}
		if r.Reason != "" && row[3] != "`"+r.Reason+"`" {
			t.Errorf("row %d: reason %s, StatusRules says %s", i+1, row[3], r.Reason)
		}
		if r.Reason == "" && r.ReasonOf == nil && row[3] != "—" {
			t.Errorf("row %d: reason %s, StatusRules has none", i+1, row[3])
		}
	}
}

// A notification.status_changed event (issue 35 item 4) is written when a
// notification has no live delivery any more (rules.OutcomeEventsSQL's
// condition on the tally): that holds exactly when the status rule
// answers a final status, neither PENDING nor DEFERRED, over every mix of
// two deliveries' states and codes.
func TestStatusFinalWithoutLive(t *testing.T) {
	t.Parallel()
	for _, s1 := range store.DeliveryStates {
		for _, s2 := range store.DeliveryStates {
			for _, code := range []string{"", heraldtype.CodeQuietHours, "UNREGISTERED"} {
				var tally rules.Tally
				tally.Add(s1, code, 1)
				tally.Add(s2, "", 1)
				st, _ := tally.Status()
				live := !s1.Final() || !s2.Final()
				waiting := st == heraldtype.HistoryPending || st == heraldtype.HistoryDeferred
				if live != waiting {
					t.Errorf("%s (%q) + %s: status %s, live %v", s1, code, s2, st, live)
				}
			}
		}
	}
}
