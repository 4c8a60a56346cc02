package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// The cases the pipeline tests at the root do not reach with real
// records: each state and code the records can hold gets its verdict,
// and a send wins over a failure on another channel.
func TestExplainVerdicts(t *testing.T) {
	at := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	push, sms, inApp := heraldtype.ChannelPush, heraldtype.ChannelSMS, heraldtype.ChannelInApp
	d := func(ch heraldtype.Channel, st heraldtype.DeliveryState, code string) heraldtype.Delivery {
		return heraldtype.Delivery{ID: 1, Channel: ch, State: st, LastErrorCode: code, RunAt: at, FinishedAt: &at, DeviceID: "d1", Type: "promo"}
	}
	active := heraldtype.Device{ID: "d1", Status: heraldtype.DeviceActive, PushOptIn: true}
	for _, c := range []struct {
		name     string
		channels []heraldtype.Channel
		ds       []heraldtype.Delivery
		devices  []heraldtype.Device
		status   heraldtype.HistoryStatus
		verdict  string
		says     string
	}{
		{"leased", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StateLeased, "")}, nil, "", heraldtype.ExplainPending, "being sent"},
		{"retrying", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StatePending, "UNAVAILABLE")}, nil, "", heraldtype.ExplainPending, "UNAVAILABLE"},
		{"cancelled", []heraldtype.Channel{push}, []heraldtype.Delivery{func() heraldtype.Delivery {
			c := d(push, heraldtype.StateCancelled, heraldtype.CodeCancelled)
			c.LastError = `cancelled by API key k1 with cancellation key "order-7"`
			return c
		}()}, nil, "", heraldtype.ExplainCancelled, `its notification was cancelled by API key k1 with cancellation key "order-7" at 2026-11-23T12:00:00+09:00`},
		{"unknown", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StateUnknown, "lease_expired")}, nil, "", heraldtype.ExplainUnknown, "replayed"},
		{"device opted out at send", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StateSkipped, "opted_out")}, nil, "", heraldtype.ExplainDeviceOptedOut, "turned off"},
		{"device removed", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StateSkipped, "device_removed")}, nil, "", heraldtype.ExplainDeviceInvalid, "removed"},
		{"no provider", []heraldtype.Channel{push}, []heraldtype.Delivery{d(push, heraldtype.StateSkipped, "no_provider")}, nil, "", heraldtype.ExplainNoProvider, "no provider"},
		{"channel opted out", []heraldtype.Channel{sms}, []heraldtype.Delivery{d(sms, heraldtype.StateOptedOut, heraldtype.CodeChannelOptedOut)}, nil, "", heraldtype.ExplainOptedOut, "opted out of sms"},
		{"inbox beside a failed push", []heraldtype.Channel{push, inApp},
			[]heraldtype.Delivery{d(push, heraldtype.StateDead, "INTERNAL"), d(inApp, heraldtype.StateSent, "")}, nil,
			heraldtype.HistoryPartiallySent, heraldtype.ExplainSent, "inbox since 2026-11-23T12:00:00+09:00; another channel failed"},
		{"a device registered after", []heraldtype.Channel{push}, nil, []heraldtype.Device{active}, "", heraldtype.ExplainNoDevice, "registered or renewed since"},
		{"devices opted out", []heraldtype.Channel{push}, nil, []heraldtype.Device{{ID: "d2", Status: heraldtype.DeviceActive}}, "", heraldtype.ExplainDeviceOptedOut, "d2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := &heraldtype.Notification{ID: "n1", UserID: "u1", Type: "promo", Channels: c.channels, CreatedAt: at}
			x := Explain(Records{UserID: "u1", Location: seoul, Notification: n, Deliveries: c.ds, Devices: c.devices, Status: c.status})
			if x.Verdict != c.verdict || !strings.Contains(x.Message, c.says) {
				t.Fatalf("verdict %s %q, want %s saying %q", x.Verdict, x.Message, c.verdict, c.says)
			}
		})
	}
}

// A rule's run without a notification for the user is answered from the
// run's row: failed, not reached yet in its keyset order, or done without
// the user.
func TestExplainRuleRunWithoutNotification(t *testing.T) {
	audience := heraldtype.JobAudience{Subject: "product:42", Kinds: []string{"VIEW"}, Limit: 100}
	for _, c := range []struct {
		name    string
		run     heraldtype.RuleRun
		verdict string
		says    string
	}{
		{"failed", heraldtype.RuleRun{State: heraldtype.RunFailed, LastError: "the audience webhook answered 500"}, heraldtype.ExplainRuleRunFailed, "answered 500"},
		{"not reached", heraldtype.RuleRun{State: heraldtype.RunRunning, Cursor: "m"}, heraldtype.ExplainPending, "has not reached user u1"},
		{"passed the user", heraldtype.RuleRun{State: heraldtype.RunRunning, Cursor: "v", Recipients: 3, Enqueued: 3}, heraldtype.ExplainOutsideAudience, "interested in product:42 (VIEW), at most 100"},
		{"done", heraldtype.RuleRun{State: heraldtype.RunDone, Recipients: 1, Enqueued: 1}, heraldtype.ExplainOutsideAudience, "reached 1 user and wrote 1 notification"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := c.run
			run.Rule, run.ID, run.EventID, run.Job.Audience = "price-drop", "http/ev-1", "ev-1", audience
			x := Explain(Records{UserID: "u1", Run: &run})
			if x.Verdict != c.verdict || !strings.Contains(x.Message, c.says) || x.RuleRun != "http/ev-1" {
				t.Fatalf("%+v, want %s saying %q", x, c.verdict, c.says)
			}
		})
	}
}

// An event that started no run, from its record: the rule that got
// furthest decides — one that detected it with an empty audience, one
// that could not act on it — over the rules that did not detect it; a
// record that kept only some decisions says so.
func TestExplainEventWithoutRun(t *testing.T) {
	notDetected := Decision{Rule: "big-drop", Reason: "the price dropped 5 %, under the threshold"}
	for _, c := range []struct {
		name    string
		ev      Event
		verdict string
		says    string
		reasons int
	}{
		{"stale", Event{Stale: true}, heraldtype.ExplainEventStale, "Event ev-1 from topic product.inventory.v1 was stale", 1},
		{"no rule judged it", Event{}, heraldtype.ExplainNotDetected, "No rule judged event ev-1", 0},
		{"one rule", Event{Decisions: []Decision{notDetected}, Judged: 1}, heraldtype.ExplainNotDetected,
			"Rule big-drop did not detect event ev-1 from topic product.inventory.v1: the price dropped 5 %, under the threshold.", 1},
		{"two rules", Event{Decisions: []Decision{notDetected, {Rule: "restock"}}, Judged: 2}, heraldtype.ExplainNotDetected,
			"No rule detected event ev-1 from topic product.inventory.v1: 2 rules judged it.", 2},
		{"truncated", Event{Decisions: []Decision{notDetected}, Judged: 3, Truncated: true}, heraldtype.ExplainNotDetected,
			"(the record keeps 1 of the 3 rules' decisions)", 1},
		{"empty audience", Event{Decisions: []Decision{notDetected, {Rule: "price-drop", Detected: true, Reason: "the price dropped 20 %; the audience is empty (product:42)"}}, Judged: 2},
			heraldtype.ExplainOutsideAudience, "Rule price-drop detected event ev-1", 2},
		{"could not act", Event{Decisions: []Decision{notDetected, {Rule: "price-drop", Error: "current_price: missing"}}, Judged: 2},
			heraldtype.ExplainRuleRunFailed, "Rule price-drop could not act on event ev-1 from topic product.inventory.v1: current_price: missing.", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := c.ev
			ev.ID, ev.Source = "ev-1", "product.inventory.v1"
			x := Explain(Records{UserID: "u1", Event: &ev})
			if x.Verdict != c.verdict || !strings.Contains(x.Message, c.says) || x.Event != "ev-1" || len(x.Reasons) != c.reasons {
				t.Fatalf("%+v, want %s saying %q with %d reasons", x, c.verdict, c.says, c.reasons)
			}
		})
	}
}

// TestRenderFailed (issue 37): a delivery whose template did not render
// is explained as that, with the reason, not as the provider's failure.
func TestRenderFailed(t *testing.T) {
	d := heraldtype.Delivery{ID: 1, Channel: heraldtype.ChannelPush, State: heraldtype.StateDead,
		LastErrorCode: "render_failed", LastError: "template version 2: templates.locales.en.push.title: map has no entry for key \"nickname\""}
	rs := Records{UserID: "u1", Type: "order", Notification: &heraldtype.Notification{ID: "n1", UserID: "u1", Type: "order",
		Channels: []heraldtype.Channel{heraldtype.ChannelPush}}, Deliveries: []heraldtype.Delivery{d}}
	out := Explain(rs)
	if out.Verdict != heraldtype.ExplainRenderFailed || !strings.Contains(out.Message, "nickname") {
		t.Fatalf("explained as %s: %s", out.Verdict, out.Message)
	}
}
