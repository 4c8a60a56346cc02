package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The commands for a running server call it through heraldclient: a
// listing is read a page at a time (--limit, then the --cursor it prints),
// a reminder listing by user reads that user's, an id or a time that cannot
// be one is refused before any call, and an error the server answered
// prints as code (HTTP status): message.
func TestServerCommandsThroughTheClient(t *testing.T) {
	s := startDev(t)
	r := &cliRunner{t: t, server: s.api, dir: t.TempDir()}
	call(t, "PUT", s.api+"/v1/types/digest", `{}`)
	for _, u := range []string{"u1", "u2"} {
		call(t, "PUT", s.api+"/v1/users/"+u, `{}`)
	}
	for i, u := range []string{"u1", "u1", "u1", "u2"} {
		if code, out := call(t, "PUT", s.api+fmt.Sprintf("/v1/reminders/digest-%d", i), `{"user_id":"`+u+`","type":"digest",
			"title":"Your week","schedule":{"rrule":"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0"}}`); code != 201 {
			t.Fatalf("PUT reminder: %d %v", code, out)
		}
	}

	t.Run("paged listing", func(t *testing.T) {
		r := r.with(t)
		out := r.ok([]string{"reminders", "list", "--user", "u1", "--limit", "2"}, "KEY")
		m := regexp.MustCompile(`(?m)^more: --cursor (\S+)$`).FindStringSubmatch(out)
		if m == nil || strings.Count(out, "digest-") != 2 {
			t.Fatalf("first page of 2:\n%s", out)
		}
		out = r.ok([]string{"reminders", "list", "--user", "u1", "--limit", "2", "--cursor", m[1]})
		if strings.Count(out, "digest-") != 1 || strings.Contains(out, "more:") || strings.Contains(out, " u2 ") {
			t.Fatalf("last page, u1's only:\n%s", out)
		}
		var page struct {
			Reminders []struct{ Key, UserID string } `json:"reminders"`
		}
		r.okJSON([]string{"reminders", "list", "--user", "u2"}, &page)
		if len(page.Reminders) != 1 || page.Reminders[0].Key != "digest-3" {
			t.Fatalf("reminders list --user u2 --json: %+v", page)
		}
	})

	t.Run("digests", func(t *testing.T) {
		r := r.with(t)
		call(t, "PUT", s.api+"/v1/types/weekly", `{"channels":["in_app"],"digest":{"window":"1h","title":"{{.Count}} updates"}}`)
		if code, out := call(t, "POST", s.api+"/v1/notifications", `{"user_id":"u1","type":"weekly","title":"x"}`); code != 202 {
			t.Fatalf("trigger: %d %v", code, out)
		}
		matches(t, r.ok([]string{"digests", "list", "--user", "u1"}, "ID"), ` +u1 +weekly +open +\S+ +1 +-$`)
		r.ok([]string{"digests", "list", "--state", "sent"}, "ID")
		r.fails([]string{"digests", "list", "--state", "done"}, "herald: invalid_argument (HTTP 400): ")
		r.fails([]string{"digests", "get", "nope"}, "herald: not_found (HTTP 404): ")
	})

	t.Run("get and cancel", func(t *testing.T) {
		r := r.with(t)
		r.ok([]string{"reminders", "get", "digest-0"}, `"key": "digest-0"`, `"state": "active"`)
		r.ok([]string{"reminders", "cancel", "digest-0"}, "cancelled reminder digest-0")
		r.ok([]string{"reminders", "cancel", "--user", "u2"}, "cancelled 1 reminder\n")
		matches(t, r.ok([]string{"reminders", "list", "--state", "stopped"}), `^digest-3 +u2 +digest +stopped `)
		r.fails([]string{"reminders", "get", "nope"}, "herald: not_found (HTTP 404): ")
	})

	t.Run("refused before the call", func(t *testing.T) {
		r := r.with(t)
		r.fails([]string{"events", "dead", "x1"}, `"x1" is not a dead event id`)
		r.fails([]string{"events", "replay", "0"}, `dead event 0: "0" is not a dead event id`, "1 of 1 replays failed")
		r.fails([]string{"deliveries", "list", "--from", "yesterday"}, "--from", "RFC 3339")
		r.fails([]string{"deliveries", "replay", "--all", "--to", "2026-11-01"}, "--to", "RFC 3339")
		r.fails([]string{"deliveries", "get", "x"}, `"x" is not a delivery id`)
		var out strings.Builder
		if code := Run(context.Background(), []string{"users", "get", "u1", "--server", "localhost:8080"}, &out, &out, nil); code == 0 ||
			!strings.Contains(out.String(), `--server "localhost:8080"`) {
			t.Fatalf("a server without a scheme: exit %d\n%s", code, out.String())
		}
		// A server that cannot be reached: the exchange that failed.
		out.Reset()
		if code := Run(context.Background(), []string{"users", "get", "u1", "--server", "http://127.0.0.1:1"}, &out, &out, nil); code == 0 ||
			!strings.HasPrefix(out.String(), `herald: Get "http://127.0.0.1:1/v1/users/u1": `) {
			t.Fatalf("an unreachable server: exit %d\n%s", code, out.String())
		}
	})

	t.Run("the server's errors", func(t *testing.T) {
		r := r.with(t)
		r.fails([]string{"events", "dead", "12345"}, "herald: not_found (HTTP 404): ")
		r.fails([]string{"rules", "put", "bad", "-f", r.file("rule.json", `{"when":{"event":"E"},"notify":{"type":"digest"},"audince":{}}`)},
			"herald: invalid_argument (HTTP 400): audince: ")
		r.fails([]string{"deliveries", "list", "--state", "lost"}, "invalid_argument (HTTP 400): ", "state")
	})
}
