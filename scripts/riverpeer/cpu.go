package main

// CPU accounting mirrored from Herald's `herald bench` (internal/bench/
// machine.go and internal/cputime in the Herald repo) so that the figures
// compare: the whole machine from /proc/stat's aggregate "cpu" line, the
// processes named "postgres" from /proc/<pid>/stat (utime + stime), both
// scaled the same way (ticks ÷ the machine's total ticks × CPUs × wall),
// and this process's own CPU from getrusage(RUSAGE_SELF).

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU is this process's user + system CPU time so far (getrusage).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimes is one reading: /proc/stat's busy and idle ticks, the number of
// CPUs, the postgres processes' ticks and the emulator's (when its pid is
// known).
type cpuTimes struct {
	busy, idle, emu uint64
	db              map[int]uint64 // ticks per postgres pid
	cpus            int
	self            time.Duration
	at              time.Time
}

func readCPUTimes(emulatorPID int) (cpuTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	t, err := parseCPUTimes(b, time.Now())
	if err != nil {
		return t, err
	}
	t.db = commTicks("postgres")
	if emulatorPID > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(emulatorPID) + "/stat"); err == nil {
			if _, ticks, ok := parseProcStat(b); ok {
				t.emu = ticks
			}
		}
	}
	t.self = processCPU()
	return t, nil
}

// commTicks reads utime + stime of every process whose command name is
// comm, per pid. Herald's bench sums them into one number; kept per pid
// here so that a process of another database client that exits between
// the readings (this machine is shared) does not take its whole lifetime's
// ticks out of the difference. Where no postgres process exits, the two
// methods give the same figure.
func commTicks(comm string) map[int]uint64 {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	sum := map[int]uint64{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		if name, ticks, ok := parseProcStat(b); ok && name == comm {
			sum[pid] = ticks
		}
	}
	return sum
}

// parseProcStat returns comm and utime + stime (fields 14 and 15) of a
// /proc/<pid>/stat line, counting fields after comm's last ')'.
func parseProcStat(b []byte) (comm string, ticks uint64, ok bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, false
	}
	f := strings.Fields(string(b[end+1:]))
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

// parseCPUTimes reads the aggregate "cpu" line (user nice system idle
// iowait irq softirq steal; idle and iowait count as idle) and counts the
// "cpuN" lines.
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
			if i == 3 || i == 4 {
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

// usage is the CPU spent between two readings, in seconds.
type usage struct {
	wall, machine, busyShare, db, emu, self float64
	ownDB                                   float64 // the backends serving this database (ownPIDs)
	cpus                                    int
}

func usageSince(a, b cpuTimes, ownPIDs map[int]bool) usage {
	u := usage{wall: b.at.Sub(a.at).Seconds(), cpus: b.cpus, self: (b.self - a.self).Seconds()}
	total := (b.busy - a.busy) + (b.idle - a.idle)
	if total == 0 || u.wall <= 0 {
		return u
	}
	scale := float64(b.cpus) * u.wall / float64(total) // seconds per tick
	u.busyShare = float64(b.busy-a.busy) / float64(total)
	u.machine = float64(b.busy-a.busy) * scale
	var dbTicks, ownTicks uint64
	for pid, t := range b.db {
		if t > a.db[pid] { // a pid new since the first reading counts from 0
			dbTicks += t - a.db[pid]
			if ownPIDs[pid] {
				ownTicks += t - a.db[pid]
			}
		}
	}
	u.db = float64(dbTicks) * scale
	u.ownDB = float64(ownTicks) * scale
	if b.emu > a.emu {
		u.emu = float64(b.emu-a.emu) * scale
	}
	return u
}
