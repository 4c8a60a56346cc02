package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestPGFloorScript runs scripts/pgfloor/run for two seconds a workload, so
// the floor docs/PERFORMANCE.md quotes for issue 6 stays reproducible: both
// workloads must move deliveries through enqueue, claim and outcome, and
// the script must print their CPU cost.
func TestPGFloorScript(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pgbench for four seconds")
	}
	dsn := pgtest.DSN(t)
	for _, tool := range []string{"pgbench", "psql"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (PostgreSQL's client tools)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("the script reads /proc/stat (Linux)")
	}
	out, err := exec.Command("../scripts/pgfloor/run", dsn, "2", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/pgfloor/run: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^(queue|records)\s+(\d+) deliveries in [0-9.]+ s = +\d+/s; .* (\d+) µs CPU per delivery`)
	found := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[2])
		us, _ := strconv.Atoi(m[3])
		if n == 0 || us == 0 {
			t.Errorf("%s: %s deliveries at %s µs each", m[1], m[2], m[3])
		}
		found[m[1]] = true
	}
	if !found["queue"] || !found["records"] {
		t.Fatalf("no figures for both workloads:\n%s", out)
	}
}
