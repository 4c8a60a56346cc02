package kafkaapi_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/boundtest"
	"github.com/heraldhq/herald/kafkaapi"
)

// trackCounter passes Track through and counts its calls per event id.
type trackCounter struct {
	kafkaapi.Client
	mu    sync.Mutex
	calls map[string]int
}

func (c *trackCounter) Track(ctx context.Context, e herald.Event) (herald.TrackResult, error) {
	c.mu.Lock()
	c.calls[e.ID]++
	c.mu.Unlock()
	return c.Client.Track(ctx, e)
}

func (c *trackCounter) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

// Issue 31 item 1 over Kafka: an event record whose rule's template goes
// over its budget — a string doubled 34 times, a range over 9e18 — is
// applied once, its rule's run recorded failed as render_failed with the
// reason, kept as a dead event, and its offset committed: the consumer moves on to the next
// record (no crash, no retry, nothing left to redeliver after a restart),
// with the process's memory bounded (a child process whose heap past
// 512 MiB fails the test).
func TestTemplateBudgetOverKafka(t *testing.T) {
	t.Parallel()
	boundtest.Run(t, boundtest.Bounds{MaxHeap: 512 << 20, Timeout: 2 * time.Minute}, func(t *testing.T) {
		f := newFixture(t)
		f.users(1)
		if _, err := f.client.PutType(f.ctx, "hostile", herald.TypeConfig{Channels: []heraldtype.Channel{heraldtype.ChannelInApp}}); err != nil {
			t.Fatal(err)
		}
		titles := map[string]string{
			"doubling": `{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`,
			"spin":     `{{$n := 9000000000000000000}}{{range $n}}{{end}}`,
			"benign":   `Hello {{.user_id}}`,
		}
		for name, title := range titles {
			r := heraldtype.Rule{Name: name, Source: heraldtype.RuleSource{KafkaTopic: "events.v1"},
				When:     heraldtype.RuleWhen{Event: strings.ToUpper(name), Detect: heraldtype.Detector{Always: true}},
				Audience: heraldtype.RuleAudience{EventUser: true}, Notify: heraldtype.RuleNotify{Type: "hostile", Title: title}}
			if _, _, err := f.client.PutRule(f.ctx, r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		tc := &trackCounter{Client: f.client, calls: map[string]int{}}
		f.consumer(tc, kafkaapi.Config{Group: "budget"})
		var values [][]byte
		for _, name := range []string{"doubling", "spin", "benign"} {
			v, _ := json.Marshal(herald.Event{ID: "ev-" + name, Name: strings.ToUpper(name), UserID: user(0)})
			values = append(values, v)
		}
		f.produce("events.v1", user(0), values...)
		runs := func(rule string) []heraldtype.RuleRun {
			page, err := f.client.ListRuleRuns(f.ctx, heraldtype.RuleRunFilter{Rule: rule})
			if err != nil {
				t.Fatal(err)
			}
			return page.Runs
		}
		// One partition, in order: the benign record applied means the
		// hostile ones before it were settled.
		f.waitFor("the record after the hostile ones", time.Minute, func() bool { return len(runs("benign")) == 1 })
		// The spin stops at its steps, or on a machine so loaded that
		// 10,000 steps take 250 ms, at its time; so may the doubling
		// before its bytes (seen under -race with a load of 9 on 2 cores).
		for name, limit := range map[string]string{"doubling": `templates\.max_(bytes|duration)`, "spin": `templates\.max_(steps|duration)`} {
			rs := runs(name)
			if len(rs) != 1 || rs[0].State != heraldtype.RunFailed || !strings.HasPrefix(rs[0].LastError, "render_failed: notify.title: ") ||
				!regexp.MustCompile(limit).MatchString(rs[0].LastError) {
				t.Errorf("%s: runs %+v", name, rs)
			}
			if n := tc.count("ev-" + name); n != 1 {
				t.Errorf("%s: tracked %d times, want once", name, n)
			}
		}
		// Each hostile record is also kept as a dead event whose replay
		// renders its rule's run again (TestRenderFailureIsDeadLetteredAndReplayed).
		dead, err := f.client.ListDeadEvents(f.ctx, herald.DeadEventFilter{Kind: herald.RecordRenderFailed})
		if err != nil || len(dead.DeadEvents) != 2 {
			t.Errorf("dead events: %+v %v; want the two hostile records", dead, err)
		}
	})
}
