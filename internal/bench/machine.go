package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// MachineCPU is the whole machine's CPU use during the measured phase, read
// from /proc/stat: Herald, the emulator, the load generator, the database
// and the kernel together. On a machine where they all share the CPUs (as
// issue 6's targets are measured) it is what a delivery costs end to end,
// and so what bounds deliveries/s.
type MachineCPU struct {
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus"`
	// BusySeconds is CPU time spent outside idle and I/O wait, summed over
	// every CPU.
	BusySeconds float64 `json:"busy_seconds"`
	// Busy is BusySeconds over CPUs × the phase's wall time (1.0 = every
	// CPU busy throughout).
	Busy float64 `json:"busy"`
	// MicrosPerDelivery is BusySeconds per delivery the emulator accepted.
	MicrosPerDelivery float64 `json:"micros_per_delivery,omitempty"`
	// Ceiling is the deliveries/s this machine would sustain at that cost
	// with every CPU busy: CPUs / MicrosPerDelivery.
	Ceiling float64 `json:"ceiling_per_sec,omitempty"`
	// DatabaseSeconds is the CPU time of this machine's PostgreSQL
	// processes (those named "postgres") over the phase, when the bench
	// ran on a PostgreSQL database; part of BusySeconds.
	DatabaseSeconds float64 `json:"database_seconds,omitempty"`
	// DatabaseMicrosPerDelivery is DatabaseSeconds per delivery.
	DatabaseMicrosPerDelivery float64 `json:"database_micros_per_delivery,omitempty"`
}

// cpuTimes is one reading of /proc/stat's aggregate "cpu" line, in clock
// ticks, and the number of per-CPU lines; db is the ticks of the
// PostgreSQL processes, when they were read.
type cpuTimes struct {
	busy, idle, db uint64
	cpus           int
	at             time.Time
}

// readCPUTimes reads /proc/stat, and the PostgreSQL processes' ticks when
// withDB. Without /proc/stat (not Linux) the machine figures are left out.
func readCPUTimes(withDB bool) (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	t, err := parseCPUTimes(b, time.Now())
	if err == nil && withDB {
		t.db = commTicks("postgres")
	}
	return t, err
}

// commTicks sums the user and system ticks of every process whose command
// name is comm (/proc/<pid>/stat). Like /proc/stat's they are in USER_HZ.
// A process that ends between two readings takes its ticks with it; the
// database's backends and helpers live as long as the bench's pool.
func commTicks(comm string) uint64 {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var sum uint64
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if name, ticks, ok := parseProcStat(b); ok && name == comm {
			sum += ticks
		}
	}
	return sum
}

// parseProcStat returns the command name and utime + stime of a
// /proc/<pid>/stat line: "pid (comm) state ppid … utime stime …", utime and
// stime being the 14th and 15th fields. comm may hold spaces and
// parentheses, so the fields are counted from its last ')'.
func parseProcStat(b []byte) (comm string, ticks uint64, ok bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is the 3rd field (state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return "", 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return string(b[open+1 : end]), u + st, true
}

// parseCPUTimes reads the aggregate line "cpu user nice system idle iowait
// irq softirq steal guest guest_nice" (guest time is already inside user
// and nice, so it is not added again) and counts the "cpuN" lines.
func parseCPUTimes(b []byte, at time.Time) (cpuTimes, error) {
	t := cpuTimes{at: at}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			t.cpus++
			continue
		}
		if len(f) < 5 {
			return cpuTimes{}, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		for i, s := range f[1:min(len(f), 9)] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("/proc/stat: %w", err)
			}
			if i == 3 || i == 4 { // idle, iowait
				t.idle += v
			} else {
				t.busy += v
			}
		}
		found = true
	}
	if !found || t.cpus == 0 {
		return cpuTimes{}, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return t, nil
}

// machineSince is the machine's CPU use between two readings. The share of
// busy ticks, times the CPUs and the wall time, gives busy seconds without
// knowing the kernel's clock tick.
func machineSince(a, b cpuTimes) *MachineCPU {
	busy, total := b.busy-a.busy, (b.busy-a.busy)+(b.idle-a.idle)
	wall := b.at.Sub(a.at).Seconds()
	if total == 0 || wall <= 0 {
		return nil
	}
	share := float64(busy) / float64(total)
	m := &MachineCPU{CPUs: b.cpus, Busy: share, BusySeconds: share * float64(b.cpus) * wall}
	if b.db > a.db {
		m.DatabaseSeconds = float64(b.db-a.db) / float64(total) * float64(b.cpus) * wall
	}
	return m
}

// perDelivery fills in the cost of one delivery and the ceiling it implies.
func (m *MachineCPU) perDelivery(sent uint64) {
	if m == nil || sent == 0 || m.BusySeconds <= 0 {
		return
	}
	m.MicrosPerDelivery = m.BusySeconds * 1e6 / float64(sent)
	m.Ceiling = float64(m.CPUs) * 1e6 / m.MicrosPerDelivery
	m.DatabaseMicrosPerDelivery = m.DatabaseSeconds * 1e6 / float64(sent)
}

// machineMeter adds the machine's CPU use to another meter's figures,
// and the local PostgreSQL's when withDB.
type machineMeter struct {
	meter
	start  cpuTimes
	ok     bool
	withDB bool
}

func withMachine(m meter, withDB bool) meter {
	t, err := readCPUTimes(withDB)
	return &machineMeter{meter: m, start: t, ok: err == nil, withDB: withDB}
}

func (m *machineMeter) stop() (Resources, error) {
	r, err := m.meter.stop()
	if err != nil || !m.ok {
		return r, err
	}
	if t, err := readCPUTimes(m.withDB); err == nil {
		r.Machine = machineSince(m.start, t)
	}
	return r, nil
}

func (m *MachineCPU) String() string {
	out := fmt.Sprintf("%.1f CPU-s busy (%.0f %% of %d CPUs)", m.BusySeconds, m.Busy*100, m.CPUs)
	if m.MicrosPerDelivery > 0 {
		out += fmt.Sprintf(" = %.0f µs per delivery", m.MicrosPerDelivery)
		if m.DatabaseMicrosPerDelivery > 0 {
			out += fmt.Sprintf(" (PostgreSQL's processes %.0f)", m.DatabaseMicrosPerDelivery)
		}
		out += fmt.Sprintf(": at most %.0f deliveries/s on this machine", m.Ceiling)
	}
	return out + " [everything: Herald, emulator, load generator, database, kernel]"
}
