package bench

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

const procStat = `cpu  %s 0 0 0 0 0
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
	a, err := parseCPUTimes([]byte(strings.Replace(procStat, "%s", "100 0 50 800 50", 1)), at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseCPUTimes([]byte(strings.Replace(procStat, "%s", "400 10 190 850 70", 1)), at.Add(2*time.Second))
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
	c, err := readCPUTimes(true)
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
	if n := commTicks(strings.TrimSpace(string(self))); n == 0 {
		t.Fatalf("commTicks(%q) = 0 after 100 ms of work (%d)", self, x)
	}
}

// TestParseProcStat reads a process's name and CPU ticks, even with
// spaces and parentheses in its name.
func TestParseProcStat(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 123 0 0 0 1500 250 0 0 20 0 1 0 100 0 0\n"
	comm, ticks, ok := parseProcStat([]byte(line))
	if !ok || comm != "postgres: a (b) c" || ticks != 1750 {
		t.Fatalf("parseProcStat = %q, %d, %v; want the name, 1750 ticks", comm, ticks, ok)
	}
	for _, bad := range []string{"", "4242 postgres S 1", "4242 (postgres) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 x y 0"} {
		if _, _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) succeeded", bad)
		}
	}
}

// TestMachineSinceDatabase: the database's ticks are a share of the same
// total as the machine's.
func TestMachineSinceDatabase(t *testing.T) {
	at := time.Unix(1000, 0)
	a := cpuTimes{busy: 100, idle: 100, db: 10, cpus: 2, at: at}
	b := cpuTimes{busy: 250, idle: 150, db: 60, cpus: 2, at: at.Add(time.Second)}
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
