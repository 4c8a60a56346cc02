package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 20 item 2: herald rules put|list|get|dry-run|delete against a
// running server.
func TestRulesCommands(t *testing.T) {
	s := startDev(t)
	if code, _ := call(t, "PUT", s.api+"/v1/types/price_drop", `{"channels":["push"]}`); code != 200 {
		t.Fatalf("declare type: %d", code)
	}
	call(t, "PUT", s.api+"/v1/users/u1", `{}`)
	call(t, "POST", s.api+"/v1/interests", `{"user_id":"u1","subject":"product:42","kind":"VIEW"}`)
	dir := t.TempDir()
	ruleFile, eventFile := filepath.Join(dir, "rule.json"), filepath.Join(dir, "event.json")
	os.WriteFile(ruleFile, []byte(`{"when":{"event":"PRICE_CHANGE","detect":{"price_drop_pct":10}},
		"audience":{"interest":{"kinds":["VIEW"],"within":"168h"}},
		"notify":{"type":"price_drop","title":"{{.product_name}} is {{.drop_pct}}% off","body":"Now {{.current_price}}"}}`), 0o600)
	os.WriteFile(eventFile, []byte(`{"name":"PRICE_CHANGE","subject":"product:42",
		"data":{"product_name":"Kettle","previous_price":"10000","current_price":"8500"}}`), 0o600)
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	if out, code := run("rules", "put", "price-drop", "-f", ruleFile); code != 0 || !strings.Contains(out, "rule price-drop saved") {
		t.Fatalf("put: %d %s", code, out)
	}
	if out, code := run("rules", "list"); code != 0 || !strings.Contains(out, "price-drop") || !strings.Contains(out, "PRICE_CHANGE") {
		t.Fatalf("list: %d %s", code, out)
	}
	if out, code := run("rules", "get", "price-drop"); code != 0 || !strings.Contains(out, `"price_drop_pct": 10`) {
		t.Fatalf("get: %d %s", code, out)
	}
	out, code := run("rules", "dry-run", "price-drop", "-f", eventFile)
	if code != 0 || !strings.Contains(out, `"detected": true`) || !strings.Contains(out, `"audience_size": 1`) ||
		!strings.Contains(out, "Kettle is 15% off") {
		t.Fatalf("dry-run: %d %s", code, out)
	}
	if out, code := run("rules", "put", "bad", "-f", eventFile); code == 0 || !strings.Contains(out, "invalid_argument") {
		t.Fatalf("put of an event as a rule: %d %s", code, out)
	}
	if out, code := run("rules", "delete", "price-drop"); code != 0 || !strings.Contains(out, "deleted rule price-drop") {
		t.Fatalf("delete: %d %s", code, out)
	}
}

// Issue 20 item 5: a notification request for a user Herald does not
// know yet is retried, dead-lettered and recorded; herald events dead
// lists it, replay --dry-run counts it, and once the user exists herald
// events replay sends it.
func TestEventsCommands(t *testing.T) {
	s := startDev(t)
	brokers := s.logs.logValue("dev mode: Kafka broker started (in-process, Kafka protocol)", "brokers")
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	req := `{"notificationId":"n-late","userId":"late","notificationType":"WELCOME","title":"Hi","channels":["PUSH"]}`
	// Issue 30 items 1 and 4: a tombstone and bytes that are not JSON
	// are dead-lettered too, and cannot be replayed.
	if err := prod.ProduceSync(t.Context(), &kgo.Record{Topic: "notification.push.v1", Value: []byte(req)},
		&kgo.Record{Topic: "notification.push.v1"}, &kgo.Record{Topic: "notification.push.v1", Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	var out string
	waitFor(t, "the dead events", func() bool {
		out, _ = run("events", "dead", "--topic", "notification.push.v1")
		return strings.Count(out, "notification.push.v1") == 3
	})
	if !strings.Contains(out, "notifications") || !strings.Contains(out, "not found") || !strings.Contains(out, "tombstone") {
		t.Fatalf("dead events:\n%s", out)
	}
	// The dry run counts only what a replay would make again.
	if out, code := run("events", "replay", "--all", "--dry-run"); code != 0 ||
		!strings.Contains(out, "would replay 1 dead event; 2 dead events cannot be replayed") {
		t.Fatalf("dry run: %d %s", code, out)
	}
	// A replay that fails (the user is still unknown) fails the command.
	if out, code := run("events", "replay", "--all"); code == 0 || !strings.Contains(out, "replayed 0 dead events, 1 failed") {
		t.Fatalf("a failing replay: %d %s", code, out)
	}
	call(t, "PUT", s.api+"/v1/users/late", `{}`)
	call(t, "POST", s.api+"/v1/users/late/devices", `{"device_id":"d1","token":"tok-late","platform":"android","push_opt_in":true}`)
	if out, code := run("events", "replay", "--all"); code != 0 || !strings.Contains(out, "replayed 1 dead event, 0 failed") {
		t.Fatalf("replay: %d %s", code, out)
	}
	waitFor(t, "the push", func() bool {
		_, msgs := call(t, "GET", s.emulator+"/emulator/stats", "")
		return fmt.Sprint(msgs["accepted"]) == "1"
	})
}
