package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Issue 19 item 8: herald campaigns list|get|run against a running
// server (serve --dev), the run carried out by the elected leader's runner.
func TestCampaignsCommands(t *testing.T) {
	s := startDev(t)
	call(t, "PUT", s.api+"/v1/types/recommendation", `{"channels":["push"]}`)
	call(t, "PUT", s.api+"/v1/users/u1", `{}`)
	call(t, "POST", s.api+"/v1/users/u1/devices", `{"device_id":"d1","token":"tok-1","platform":"android","push_opt_in":true}`)
	if code, out := call(t, "PUT", s.api+"/v1/campaigns/daily-reco", `{"type":"recommendation","title":"Picks for {{.User.ID}}",
		"schedule":{"cron":"0 9 * * *","time_zone":"Asia/Seoul"},"audience":{"active_within":"168h"}}`); code != 201 {
		t.Fatalf("PUT campaign: %d %v", code, out)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	out, code := run("campaigns", "list")
	if code != 0 || !strings.Contains(out, "daily-reco") || !strings.Contains(out, "0 9 * * * Asia/Seoul") || !strings.Contains(out, "active 168h") {
		t.Fatalf("campaigns list: %d\n%s", code, out)
	}
	out, code = run("campaigns", "run", "daily-reco")
	if code != 0 || !strings.Contains(out, "run manual-") {
		t.Fatalf("campaigns run: %d\n%s", code, out)
	}
	waitFor(t, "the run to finish", func() bool {
		out, _ = run("campaigns", "get", "daily-reco", "--runs")
		return strings.Contains(out, " done ")
	})
	if f := strings.Fields(strings.Split(out, "\n")[1]); len(f) < 6 || f[2] != "1" || f[3] != "1" {
		t.Fatalf("runs:\n%s", out)
	}
	runID := strings.Fields(strings.Split(out, "\n")[1])[0]
	// Running the finished run again reaches nobody twice.
	if out, code := run("campaigns", "run", "daily-reco", "--run", runID); code != 0 {
		t.Fatalf("re-run: %d %s", code, out)
	}
	out, code = run("campaigns", "get", "daily-reco")
	if code != 0 || !strings.Contains(out, `"last_run_id": "`+runID+`"`) {
		t.Fatalf("campaigns get: %d\n%s", code, out)
	}
	if out, code := run("campaigns", "run", "nope"); code == 0 || !strings.Contains(out, "not found") {
		t.Fatalf("run of no campaign: %d %s", code, out)
	}
}
