package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// `herald deliveries list --state unknown` shows what the worker whose
// lease expired reported afterwards, and `deliveries get` says it too
// (issue 24 item 3).
func TestDeliveriesShowLateReport(t *testing.T) {
	t.Parallel()
	const delivery = `{"id": 7, "notification_id": "n1", "user_id": "u1", "type": "nudge", "channel": "push",
		"provider": "fcm", "state": "unknown", "attempt": 1, "max_attempts": 4, "run_at": "2026-11-26T05:00:00Z",
		"last_error_code": "lease_expired", "created_at": "2026-11-26T05:00:00Z", "late_report": "not_sent"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/deliveries":
			if r.URL.Query().Get("state") != "unknown" {
				t.Errorf("list asked for %s", r.URL.RawQuery)
			}
			_, _ = w.Write([]byte(`{"deliveries": [` + delivery + `]}`))
		case "/v1/deliveries/7":
			_, _ = w.Write([]byte(delivery))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), append(args, "--server", srv.URL), &out, &errb, nil); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	out := run("deliveries", "list", "--state", "unknown")
	lines := strings.Split(out, "\n")
	head, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	if head[len(head)-1] != "REPORTED" || row[len(row)-1] != "not_sent" {
		t.Fatalf("list without the late report:\n%s", out)
	}
	if out := run("deliveries", "get", "7"); !regexp.MustCompile(`(?m)^late report: +not_sent$`).MatchString(out) {
		t.Fatalf("get without the late report:\n%s", out)
	}
}
