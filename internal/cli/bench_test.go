package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchCommand runs a small in-process benchmark and reads its JSON.
func TestBenchCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(t.Context(), []string{"bench", "--users", "20", "--notifications", "200", "--recipients", "10",
		"--worker-poll", "20ms", "--json"}, &out, &errOut, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res struct {
		Sent uint64 `json:"sent"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Sent != 200 {
		t.Fatalf("result %s: %v", out.String(), err)
	}
	if !strings.Contains(errOut.String(), "deliver") {
		t.Fatalf("no progress on stderr: %q", errOut.String())
	}
}

func TestFaultRunNeedsPostgres(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(t.Context(), []string{"faultrun", "--database", "x.db"}, &out, &errOut, nil); code == 0 {
		t.Fatal("faultrun accepted a SQLite database")
	}
}
