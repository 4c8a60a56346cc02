package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/bench"
	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// TestFaultRunShort is the CI version of `herald faultrun`: 5,000
// notifications while the emulator answers 20 % UNAVAILABLE, 5 %
// QUOTA_EXCEEDED with Retry-After 1 s and UNREGISTERED for 2 % of tokens,
// and the herald process is SIGKILLed and restarted three times. Nothing
// may be lost, no at_most_once delivery sent twice, no send may come
// before a Retry-After (S0.3, S1.3, S4.2).
//
// PostgreSQL is restarted only when HERALD_FAULTRUN_RESTART_PG holds the
// restart command: in CI other packages' tests share the server and would
// fail. The full run (`herald faultrun`) restarts it.
func TestFaultRunShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault run takes about a minute")
	}
	dsn := pgtest.DSN(t)
	cfg := bench.FaultRunConfig{
		Database: dsn, HeraldBin: heraldBinary(t), Notifications: 5000, Recipients: 100, Kills: 3,
		Timeout: 110 * time.Second, Out: testWriter{t},
	}
	if c := os.Getenv("HERALD_FAULTRUN_RESTART_PG"); c != "" {
		cfg.PostgresRestart = strings.Fields(c)
	}
	rep, err := bench.FaultRun(t.Context(), cfg)
	if rep != nil {
		var b strings.Builder
		rep.Write(&b)
		t.Logf("fault run:\n%s", b.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kills != 3 || rep.Sent == 0 || rep.DeadUnregistered == 0 {
		t.Fatalf("the run did not exercise its faults: %+v", rep)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
