package bench

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// What a stalled run reports, so that a stall seen once in CI says what
// it was: where every goroutine of the herald process waited, and what
// every PostgreSQL backend of the database was doing or waiting for.

var (
	// goroutine 12 [select, 2 minutes]: / goroutine 12 gp=0x… m=nil [IO wait]:
	goroutineHeader = regexp.MustCompile(`^goroutine \d+ (?:gp=\S+ m=\S+ (?:mp=\S+ )?)?\[([^,\]]+)(?:, (\d+) minutes)?(?:, [^\]]*)?\]:$`)
	frameOffset     = regexp.MustCompile(`( \+0x[0-9a-f]+)?( fp=0x.*)?$`)
	frameArgs       = regexp.MustCompile(`\([^()]*\)$`)
	createdIn       = regexp.MustCompile(` in goroutine \d+$`)
)

// maxFrames bounds the frames printed for one group of goroutines.
const maxFrames = 24

// summarizeGoroutines groups the goroutines of a Go runtime dump by their
// wait state and stack (arguments and offsets dropped), largest group
// first, so a dump of thousands of goroutines reads as a few dozen stacks.
// Lines before the first goroutine (the signal's own header) are kept.
func summarizeGoroutines(lines []string) string {
	type group struct {
		state   string
		stack   []string
		count   int
		minutes string // the longest wait in the group, if the runtime gave one
	}
	var head []string
	groups := map[string]*group{}
	var order []*group
	var cur *group
	flush := func() {
		if cur == nil {
			return
		}
		key := cur.state + "\n" + strings.Join(cur.stack, "\n")
		if g, ok := groups[key]; ok {
			g.count++
			if len(cur.minutes) > len(g.minutes) || (len(cur.minutes) == len(g.minutes) && cur.minutes > g.minutes) {
				g.minutes = cur.minutes
			}
		} else {
			cur.count = 1
			groups[key] = cur
			order = append(order, cur)
		}
		cur = nil
	}
	for _, line := range lines {
		if m := goroutineHeader.FindStringSubmatch(line); m != nil {
			flush()
			cur = &group{state: m[1], minutes: m[2]}
			continue
		}
		if cur == nil {
			if len(head) < 2 && strings.TrimSpace(line) != "" { // SIGQUIT: quit, PC=…
				head = append(head, line)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(line, "\t") {
			line = frameOffset.ReplaceAllString(line, "")
		} else {
			line = createdIn.ReplaceAllString(frameArgs.ReplaceAllString(line, "(…)"), "")
		}
		cur.stack = append(cur.stack, line)
	}
	flush()
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Compare(b.count, a.count) })
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l + "\n")
	}
	total := 0
	for _, g := range order {
		total += g.count
	}
	fmt.Fprintf(&b, "%s in %s\n", count(total, "goroutine", "goroutines"), count(len(order), "group", "groups"))
	for _, g := range order {
		wait := ""
		if g.minutes != "" {
			wait = ", up to " + g.minutes + " minutes"
		}
		fmt.Fprintf(&b, "\n%d × [%s%s]\n", g.count, g.state, wait)
		for i, l := range g.stack {
			if i == maxFrames {
				fmt.Fprintf(&b, "\t… %s more\n", count(len(g.stack)-i, "line", "lines"))
				break
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// pgActivity describes the database's client backends other than the
// caller's own: state, what each waits for, who blocks it, how long its
// transaction and statement have run, and the statement. Idle backends
// outside a transaction are counted, not listed.
func pgActivity(ctx context.Context, pool *pgxpool.Pool) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rows, err := pool.Query(ctx, `SELECT pid, application_name, coalesce(state, ''),
	coalesce(wait_event_type || '/' || wait_event, ''), pg_blocking_pids(pid)::text,
	coalesce(extract(epoch FROM now() - xact_start), -1)::float8,
	coalesce(extract(epoch FROM now() - query_start), -1)::float8,
	left(regexp_replace(query, '\s+', ' ', 'g'), 240)
FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
ORDER BY xact_start NULLS LAST, pid`)
	if err != nil {
		return fmt.Sprintf("pg_stat_activity: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	idle := map[string]int{}
	for rows.Next() {
		var pid int
		var app, state, wait, blockers, query string
		var xact, stmt float64
		if err := rows.Scan(&pid, &app, &state, &wait, &blockers, &xact, &stmt, &query); err != nil {
			return fmt.Sprintf("pg_stat_activity: %v", err)
		}
		if state == "idle" {
			idle[app]++
			continue
		}
		fmt.Fprintf(&b, "pid %d %s: %s", pid, app, state)
		if wait != "" {
			fmt.Fprintf(&b, ", waiting %s", wait)
		}
		if blockers != "{}" {
			fmt.Fprintf(&b, ", blocked by %s", blockers)
		}
		if xact >= 0 {
			fmt.Fprintf(&b, ", transaction %.1f s", xact)
		}
		fmt.Fprintf(&b, ", statement %.1f s: %s\n", stmt, query)
	}
	if err := rows.Err(); err != nil {
		fmt.Fprintf(&b, "pg_stat_activity: %v\n", err)
	}
	apps := make([]string, 0, len(idle))
	for app := range idle {
		apps = append(apps, app)
	}
	slices.Sort(apps)
	for _, app := range apps {
		fmt.Fprintf(&b, "%s of %q\n", count(idle[app], "idle backend", "idle backends"), app)
	}
	return b.String()
}

// ownGoroutines summarizes this process's goroutines whose stacks pass
// through Herald's code (the run's enqueuers, the emulator, the store).
func ownGoroutines() string {
	var keep []string
	for _, g := range strings.Split(allStacks(), "\n\n") {
		if strings.Contains(g, "github.com/heraldhq/herald/") && !strings.Contains(g, "ownGoroutines") {
			keep = append(keep, g, "")
		}
	}
	return summarizeGoroutines(strings.Split(strings.Join(keep, "\n"), "\n"))
}

// allStacks is every goroutine's stack, as the runtime prints them.
func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}
