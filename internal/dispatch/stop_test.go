package dispatch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

// logBuffer collects JSON log lines; safe for the worker and the test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the decoded log lines, in order.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// Issue 22 item 7: a stop says what it did with the sends in flight — how
// many finished, how many deliveries went back to the queue, how many it
// had to leave to the lease reaper — in its last line.
func TestStopSaysWhatItDid(t *testing.T) {
	t.Parallel()
	fcmSender, apnsSender := newBlocking(), newBlocking()
	logs := &logBuffer{}
	h := newHarness(t, map[string]Sender{"fcm": fcmSender, "apns": apnsSender}, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	waiting, stopping := make(chan struct{}, 1), make(chan struct{}, 1)
	h.w.sleep = func(ctx context.Context, _ time.Duration) bool {
		waiting <- struct{}{}
		<-ctx.Done() // the stop ends the throttle wait
		stopping <- struct{}{}
		return false
	}
	overQuota(h.w.throttles["fcm"], h.clock.Now()) // 1/s, burst 1: the second fcm send waits
	// Which fcm delivery gets the throttle's one token is up to the
	// scheduler: one of them finishes, the other is returned.
	fcm1, fcm2 := h.add(fakeDelivery{provider: "fcm"}), h.add(fakeDelivery{provider: "fcm"})
	cut := h.add(fakeDelivery{provider: "apns"})
	startWorker(t, h)
	recv(t, "the fcm send", fcmSender.started)
	recv(t, "the apns send", apnsSender.started)
	recv(t, "the throttle wait", waiting)

	stopCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- h.w.Stop(stopCtx) }()
	recv(t, "the stop", stopping)
	close(fcmSender.release) // one send finishes during the stop …
	eventually(t, "the finished send to be counted", func() bool { return h.w.stop.finished.Load() == 1 })
	cancel() // … and the stop's deadline cuts the other short
	if err := recv(t, "Stop to return", stopped); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	states := map[heraldtype.DeliveryState]int{}
	for _, id := range []int64{fcm1, fcm2} {
		states[h.store.get(id).State]++
	}
	if states[heraldtype.StateSent] != 1 || states[heraldtype.StatePending] != 1 {
		t.Errorf("fcm deliveries = %v, want one sent and one pending", states)
	}
	if got := h.store.get(cut).State; got != heraldtype.StateLeased {
		t.Errorf("the cut delivery = %s, want leased (left to the reaper)", got)
	}
	lines := logs.lines(t)
	var stoppingLine map[string]any
	for _, l := range lines {
		if l["msg"] == "dispatch: stopping: no new claims; waiting for the sends in flight" {
			stoppingLine = l
		}
	}
	if stoppingLine == nil || stoppingLine["in_flight"] != 3.0 {
		t.Errorf("stopping line = %v, want in_flight 3", stoppingLine)
	}
	last := lines[len(lines)-1]
	if last["msg"] != "dispatch: stopped" || last["sends_finished"] != 1.0 || last["returned_to_queue"] != 1.0 ||
		last["left_to_lease_reaper"] != 1.0 {
		t.Errorf("last log line = %v, want dispatch: stopped with 1 finished, 1 returned, 1 left to the reaper", last)
	}
}
