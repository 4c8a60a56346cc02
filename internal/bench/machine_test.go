package bench

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

const procStatFile = `cpu  %s 0 0 0 0 0
cpu0 1 2 3 4 5 6 7 8 0 0
cpu1 1 2 3 4 5 6 7 8 0 0
intr 12345 0 0
ctxt 987654
`

// TestMachineSince: busy time is user+nice+system+irq+softirq+steal, idle
// is idle+iowait, and busy seconds come from their share of the wall time
// on every CPU, so no clock tick rate is needed.
func TestMachineSince(t *testing.T) {
	at := time.Unix(1000, 0)
	// user nice system idle iowait irq softirq steal
	a, err := parseCPUTimes([]byte(strings.Replace(procStatFile, "%s", "100 0 50 800 50", 1)), at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseCPUTimes([]byte(strings.Replace(procStatFile, "%s", "400 10 190 850 70", 1)), at.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if a.cpus != 2 || a.busy != 150 || a.idle != 850 {
		t.Fatalf("parsed %+v; want 2 CPUs, 150 busy, 850 idle ticks", a)
	}
	// 450 busy and 70 idle ticks: 86.5 % of 2 CPUs for 2 s.
	m := machineSince(a, b)
	want := 450.0 / 520 * 2 * 2
	if m == nil || m.CPUs != 2 || math.Abs(m.BusySeconds-want) > 1e-9 {
		t.Fatalf("machine %+v; want %.3f busy seconds on 2 CPUs", m, want)
	}
	m.perDelivery(10000)
	if math.Abs(m.MicrosPerDelivery-want*100) > 1e-6 || math.Abs(m.Ceiling-2e6/(want*100)) > 1e-6 {
		t.Fatalf("per delivery %+v", *m)
	}
	if !strings.Contains(m.String(), "µs per delivery") {
		t.Fatalf("String() = %q", m.String())
	}
	if machineSince(a, a) != nil {
		t.Fatal("no time passed, but a figure came out")
	}
	var nilMachine *MachineCPU
	nilMachine.perDelivery(1) // no /proc/stat: nothing to fill in
}

func TestParseCPUTimesRejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "intr 1 2\n", "cpu 1 2\n", "cpu a b c d e\ncpu0 1 1 1 1\n", "cpu 1 2 3 4 5\n"} {
		if _, err := parseCPUTimes([]byte(in), time.Now()); err == nil {
			t.Errorf("parseCPUTimes(%q) succeeded", in)
		}
	}
}

// TestReadCPUTimes reads this machine's /proc/stat where there is one.
func TestReadCPUTimes(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat on this system")
	}
	c, err := readCPUTimes("test")
	if err != nil || c.cpus < 1 || c.busy+c.idle == 0 {
		t.Fatalf("readCPUTimes() = %+v, %v", c, err)
	}
	// This process, by its own name, after 100 ms of work (ticks are
	// 10 ms).
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
		x++
	}
	own := procTicks(strings.TrimSpace(string(self)), func(pid int) bool { return pid == os.Getpid() })
	if len(own) != 1 {
		t.Fatalf("procTicks(%q) = %v, want this process alone", self, own)
	}
	for k, n := range own {
		if k.pid != os.Getpid() || k.start == 0 || n == 0 {
			t.Fatalf("procTicks(%q) = %v after 100 ms of work (%d)", self, own, x)
		}
	}
}

// TestParseProcStat reads a process's name and CPU ticks, even with
// spaces and parentheses in its name.
func TestParseProcStat(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 123 0 0 0 1500 250 0 0 20 0 1 0 100 0 0\n"
	st, ok := parseProcStat([]byte(line))
	if !ok || st.comm != "postgres: a (b) c" || st.ticks != 1750 || st.start != 100 {
		t.Fatalf("parseProcStat = %+v, %v; want the name, 1750 ticks, started at 100", st, ok)
	}
	for _, bad := range []string{"", "4242 postgres S 1", "4242 (postgres) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 x y 0 0 0 0 0 0 0 0",
		"4242 (x) S 1 2 3 4 5 6 7 8 9 1 2 0 0 0 0 0 0 0 z"} {
		if _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) succeeded", bad)
		}
	}
}

// TestMachineSinceDatabase: the database's ticks are a share of the same
// total as the machine's.
func TestMachineSinceDatabase(t *testing.T) {
	at := time.Unix(1000, 0)
	// Process 1 spends 30 ticks; 2 ends (its 500 ticks must not make the
	// figure drop); 3 starts and spends 15; 4's pid is reused by another
	// process, which spends 5.
	a := cpuTimes{busy: 100, idle: 100, cpus: 2, at: at, db: map[procKey]uint64{{1, 10}: 10, {2, 10}: 500, {4, 10}: 40}}
	b := cpuTimes{busy: 250, idle: 150, cpus: 2, at: at.Add(time.Second), db: map[procKey]uint64{{1, 10}: 40, {3, 50}: 15, {4, 60}: 5}}
	m := machineSince(a, b)
	// 150 busy and 50 database ticks of 200: 1.5 and 0.5 CPU-seconds.
	if math.Abs(m.BusySeconds-1.5) > 1e-9 || math.Abs(m.DatabaseSeconds-0.5) > 1e-9 {
		t.Fatalf("machine %+v; want 1.5 busy and 0.5 database seconds", *m)
	}
	m.perDelivery(1000)
	if math.Abs(m.DatabaseMicrosPerDelivery-500) > 1e-6 || !strings.Contains(m.String(), "PostgreSQL's processes 500") {
		t.Fatalf("%+v: %s", *m, m)
	}
}

// TestTitleServes: the bench counts the server's own processes and its
// database's backends, not another database's clients.
func TestTitleServes(t *testing.T) {
	for title, want := range map[string]bool{
		"postgres: checkpointer":                                           true,
		"postgres: walwriter":                                              true,
		"postgres: autovacuum worker test":                                 true,
		"postgres: postgres test 127.0.0.1(43210) idle":                    true,
		"postgres: postgres riverpeer 127.0.0.1(43211) SELECT":             false,
		"postgres: postgres test [local] idle":                             true,
		"postgres: bob other [local] idle in transaction":                  false,
		"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/var/lib/postgresql": true,
	} {
		if got := titleServes(title, "test"); got != want {
			t.Errorf("titleServes(%q, test) = %v, want %v", title, got, want)
		}
	}
}

// TestRetryWait: the load generator retries what a client of the API
// should, as long as the answer says.
func TestRetryWait(t *testing.T) {
	for _, c := range []struct {
		err  error
		wait time.Duration
		ok   bool
	}{
		{&statusError{status: 503, retryAfter: time.Second}, time.Second, true},
		{&statusError{status: 503, retryAfter: time.Minute}, 2 * time.Second, true},
		{&statusError{status: 429}, 100 * time.Millisecond, true},
		{&statusError{status: 400}, 0, false},
		{&statusError{status: 409}, 0, false},
		{errors.New("connection reset"), 100 * time.Millisecond, true},
	} {
		if wait, ok := retryWait(c.err, 100*time.Millisecond, 2*time.Second); wait != c.wait || ok != c.ok {
			t.Errorf("retryWait(%v) = %v, %v; want %v, %v", c.err, wait, ok, c.wait, c.ok)
		}
	}
}
