package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// Issue 35 item 4: herald webhooks list|get|create|update|delete|rotate|
// test|messages|replay against a running server; refusals first.
func TestWebhooksCommands(t *testing.T) {
	s := startDev(t)
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"webhooks", "create"}, "invalid_argument"},
		{[]string{"webhooks", "create", "--url", "http://169.254.169.254/latest"}, "url"},
		{[]string{"webhooks", "get", "wh_nope"}, "not_found"},
		{[]string{"webhooks", "test", "wh_nope"}, "not_found"},
		{[]string{"webhooks", "update", "wh_dev"}, "nothing to change"},
		{[]string{"webhooks", "update", "wh_dev", "--enable", "--disable"}, "cannot go together"},
		{[]string{"webhooks", "update", "wh_dev", "--all-events", "--event", "delivery.finished"}, "cannot go together"},
		{[]string{"webhooks", "update", "wh_dev", "--event", "delivery.lost"}, "events[0]"},
		{[]string{"webhooks", "messages", "wh_dev", "--state", "lost"}, "state"},
		{[]string{"webhooks", "replay", "wh_nope"}, "not_found"},
	} {
		if out, code := run(c.args...); code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %s; want a failure saying %q", c.args, code, out, c.want)
		}
	}

	if out, code := run("webhooks", "list"); code != 0 || !strings.Contains(out, "wh_dev") || !strings.Contains(out, "(every type)") ||
		!strings.Contains(out, "enabled") {
		t.Fatalf("list: %d %s", code, out)
	}
	if out, code := run("webhooks", "get", "wh_dev"); code != 0 || !strings.Contains(out, `"id": "wh_dev"`) || strings.Contains(out, "secret\"") {
		t.Fatalf("get: %d %s", code, out)
	}
	// The dev endpoint's receiver emulator answers the test.
	if out, code := run("webhooks", "test", "wh_dev"); code != 0 || !regexp.MustCompile(`^ok: answered 2\d\d in \d+ ms \(event evt_test_`).MatchString(out) {
		t.Fatalf("test: %d %s", code, out)
	}

	// A new endpoint on a port nothing listens on: registered, its secret
	// printed once; its test fails the command.
	out, code := run("webhooks", "create", "--url", "http://127.0.0.1:1/hooks", "--event", "delivery.finished", "--description", "nobody")
	m := regexp.MustCompile(`endpoint (wh_\S+) registered \(delivery\.finished\)\nsecret: (whsec_\S+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("create: %d %s", code, out)
	}
	id, secret := m[1], m[2]
	if out, code := run("webhooks", "test", id); code == 0 || !strings.Contains(out, "failed the test") || !strings.Contains(out, "failed: no answer") {
		t.Fatalf("test of an endpoint that is down: %d %s", code, out)
	}
	if out, code := run("webhooks", "test", id, "--json"); code == 0 || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("test --json: %d %s", code, out)
	}
	if out, code := run("webhooks", "update", id, "--disable", "--all-events"); code != 0 || !strings.Contains(out, "(every type), disabled") {
		t.Fatalf("update: %d %s", code, out)
	}
	out, code = run("webhooks", "rotate", id)
	if code != 0 || !strings.Contains(out, "secret: whsec_") || strings.Contains(out, secret) || !strings.Contains(out, "previous secret signs too until") {
		t.Fatalf("rotate: %d %s", code, out)
	}
	if out, code := run("webhooks", "list"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "disabled") || strings.Contains(out, "whsec_") {
		t.Fatalf("list after update: %d %s", code, out)
	}
	if out, code := run("webhooks", "messages", "wh_dev", "--state", "dead"); code != 0 || !strings.Contains(out, "SEQ") {
		t.Fatalf("messages: %d %s", code, out)
	}
	if out, code := run("webhooks", "replay", "wh_dev"); code != 0 || !strings.Contains(out, "replayed 0 messages") {
		t.Fatalf("replay: %d %s", code, out)
	}
	if out, code := run("webhooks", "delete", id); code != 0 || !strings.Contains(out, "deleted endpoint "+id) {
		t.Fatalf("delete: %d %s", code, out)
	}
	if out, code := run("webhooks", "get", id); code == 0 || !strings.Contains(out, "not_found") {
		t.Fatalf("get after delete: %d %s", code, out)
	}
}
