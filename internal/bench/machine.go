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
	// processes over the phase, when the bench ran on a PostgreSQL
	// database: the server's own (checkpointer, WAL writer, autovacuum…)
	// and the backends of the bench's database, not other databases'
	// clients; part of BusySeconds.
	DatabaseSeconds float64 `json:"database_seconds,omitempty"`
	// DatabaseMicrosPerDelivery is DatabaseSeconds per delivery.
	DatabaseMicrosPerDelivery float64 `json:"database_micros_per_delivery,omitempty"`
}

// cpuTimes is one reading of /proc/stat's aggregate "cpu" line, in clock
// ticks, and the number of per-CPU lines; db is the ticks of each
// PostgreSQL process counted, when they were read.
type cpuTimes struct {
	busy, idle uint64
	db         map[procKey]uint64
	cpus       int
	at         time.Time
}

// procKey names one process across readings: a pid and its start time,
// so a pid reused by another process is another process.
type procKey struct {
	pid   int
	start uint64
}

// readCPUTimes reads /proc/stat, and the ticks of the PostgreSQL processes
// that serve database (see dbTicks) when database is not "". Without
// /proc/stat (not Linux) the machine figures are left out.
func readCPUTimes(database string) (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	t, err := parseCPUTimes(b, time.Now())
	if err == nil && database != "" {
		t.db = procTicks("postgres", func(pid int) bool { return servesDatabase(pid, database) })
	}
	return t, err
}

// procTicks reads the user and system ticks of every process whose
// command name is comm (/proc/<pid>/stat) and that keep accepts. Like
// /proc/stat's they are in USER_HZ.
func procTicks(comm string, keep func(pid int) bool) map[procKey]uint64 {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[procKey]uint64{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if st, ok := parseProcStat(b); ok && st.comm == comm && (keep == nil || keep(pid)) {
			out[procKey{pid, st.start}] = st.ticks
		}
	}
	return out
}

// ticksSince is the ticks the processes of b spent since a: a process in
// both, the difference; one that started since, all of its ticks. A
// process that ended in between takes its last ticks with it (before, the
// sums of the two readings were compared, and a busy process of another
// client ending mid-run made the figure drop, or vanish).
func ticksSince(a, b map[procKey]uint64) uint64 {
	var sum uint64
	for k, t := range b {
		if was, ok := a[k]; ok {
			if t > was {
				sum += t - was
			}
			continue
		}
		sum += t
	}
	return sum
}

// servesDatabase says whether the PostgreSQL process pid is one the bench
// should count: the server's own processes (checkpointer, WAL writer,
// background writer, autovacuum…), which work for every database, and
// the backends of database — not another database's clients (another
// session's tests, a peer's benchmark). A client backend's title is
// "postgres: USER DATABASE HOST(PORT) STATE" (or "[local]").
func servesDatabase(pid int, database string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return titleServes(string(bytes.TrimRight(b, "\x00")), database)
}

// titleServes is servesDatabase on a process title.
func titleServes(title, database string) bool {
	f := strings.Fields(strings.TrimPrefix(strings.ReplaceAll(title, "\x00", " "), "postgres:"))
	if len(f) >= 3 && (strings.Contains(f[2], "(") || f[2] == "[local]") {
		return f[1] == database // a client backend
	}
	return true
}

// procStat is what parseProcStat reads of a /proc/<pid>/stat line.
type procStat struct {
	comm  string
	ticks uint64 // utime + stime
	start uint64 // starttime, in ticks after boot
}

// parseProcStat returns the command name, utime + stime and start time of
// a /proc/<pid>/stat line: "pid (comm) state ppid … utime stime … starttime
// …", utime, stime and starttime being the 14th, 15th and 22nd fields.
// comm may hold spaces and parentheses, so the fields are counted from
// its last ')'.
func parseProcStat(b []byte) (procStat, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is the 3rd field (state): utime is f[11], stime f[12],
	// starttime f[19].
	if len(f) < 20 {
		return procStat{}, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{comm: string(b[open+1 : end]), ticks: u + st, start: start}, true
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
	if db := ticksSince(a.db, b.db); db > 0 {
		m.DatabaseSeconds = float64(db) / float64(total) * float64(b.cpus) * wall
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
// and the local PostgreSQL's serving database when it is not "".
type machineMeter struct {
	meter
	start    cpuTimes
	ok       bool
	database string
}

func withMachine(m meter, database string) meter {
	t, err := readCPUTimes(database)
	return &machineMeter{meter: m, start: t, ok: err == nil, database: database}
}

func (m *machineMeter) stop() (Resources, error) {
	r, err := m.meter.stop()
	if err != nil || !m.ok {
		return r, err
	}
	if t, err := readCPUTimes(m.database); err == nil {
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
