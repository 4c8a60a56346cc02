package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cliRunner runs herald commands against one server, as a user would.
type cliRunner struct {
	t      *testing.T
	server string
	dir    string
}

// with is r reporting to t (a subtest's).
func (r *cliRunner) with(t *testing.T) *cliRunner {
	c := *r
	c.t = t
	return &c
}

func (r *cliRunner) run(args ...string) (string, int) {
	r.t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append(args, "--server", r.server), &out, &errb, nil)
	return out.String() + errb.String(), code
}

// stdin runs a command that must succeed with in as its standard input.
func (r *cliRunner) stdin(in string, args ...string) string {
	r.t.Helper()
	var out bytes.Buffer
	root := newRootCmd(&env{stdout: &out, stderr: &out})
	root.SetArgs(append(args, "--server", r.server))
	root.SetIn(strings.NewReader(in))
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.ExecuteContext(context.Background()); err != nil {
		r.t.Fatalf("herald %s < %s: %v\n%s", strings.Join(args, " "), in, err, out.String())
	}
	return out.String()
}

// ok runs a command that must succeed and print every one of want.
func (r *cliRunner) ok(args []string, want ...string) string {
	r.t.Helper()
	out, code := r.run(args...)
	if code != 0 {
		r.t.Fatalf("herald %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			r.t.Fatalf("herald %s: no %q in\n%s", strings.Join(args, " "), w, out)
		}
	}
	return out
}

// fails runs a command that must exit non-zero, saying every one of want.
func (r *cliRunner) fails(args []string, want ...string) {
	r.t.Helper()
	out, code := r.run(args...)
	if code == 0 {
		r.t.Fatalf("herald %s: exit 0, want an error\n%s", strings.Join(args, " "), out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			r.t.Fatalf("herald %s: no %q in\n%s", strings.Join(args, " "), w, out)
		}
	}
}

// okJSON runs a command with --json and decodes what it printed.
func (r *cliRunner) okJSON(args []string, v any) {
	r.t.Helper()
	out := r.ok(append(args, "--json"))
	if err := json.Unmarshal([]byte(out), v); err != nil {
		r.t.Fatalf("herald %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// file writes a file for --file and returns its path.
func (r *cliRunner) file(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// matches reports whether out has a line matching the regular expression.
func matches(t *testing.T, out, re string) {
	t.Helper()
	if !regexp.MustCompile("(?m)" + re).MatchString(out) {
		t.Fatalf("no line matching %q in\n%s", re, out)
	}
}

// Issue 32 item 6: types, users, devices, preferences, interests and a
// notification are set up and read from the command line, in tables and
// as JSON, against a running server; bad input is a clear error and a
// non-zero exit.
func TestSetupCommands(t *testing.T) {
	s := startDev(t)
	r := &cliRunner{t: t, server: s.api, dir: t.TempDir()}

	t.Run("types", func(t *testing.T) {
		r := r.with(t)
		out := r.ok([]string{"types", "put", "promo", "--channel", "push", "--channel", "in_app", "--counts-toward-cap",
			"--dedupe-window", "30m", "--quiet-hours=false"})
		matches(t, out, `^channels: +push,in_app$`)
		matches(t, out, `^daily cap: +on$`)
		matches(t, out, `^quiet hours: +off$`)
		matches(t, out, `^dedupe window: +30m`)
		// serve --dev signs tracked links with a random secret (issue 35 item 2).
		matches(t, r.ok([]string{"types", "put", "news", "--channel", "email", "--email-tracking"}), `^e-mail tracking: +on$`)
		r.ok([]string{"types", "put", "order_shipped", "-f", r.file("type.json", `{"channels":["push"],"priority":"HIGH","transactional":true,"quiet_hours":false}`)},
			"HIGH")
		matches(t, r.ok([]string{"types", "get", "order_shipped"}), `^source: +api$`)
		matches(t, r.ok([]string{"types", "get", "order_shipped"}), `^digest: +off$`)
		r.ok([]string{"types", "put", "comment", "-f", r.file("digest.json",
			`{"digest":{"window":"10m","key":"{{.post_id}}","max_items":50,"title":"{{.Count}} new comments"}}`)})
		matches(t, r.ok([]string{"types", "get", "comment"}), `^digest: +10m0s by \{\{\.post_id\}\}, at most 50 items, first collect$`)
		r.fails([]string{"types", "put", "comment", "-f", r.file("bad-digest.json", `{"digest":{"title":"x"}}`)}, "invalid_argument",
			"digest.window")
		// An escalation (issue 36 item 3), shown in one line; a bad step
		// named by its field.
		matches(t, r.ok([]string{"types", "get", "order_shipped"}), `^escalation: +off$`)
		r.ok([]string{"types", "put", "pickup", "-f", r.file("escalate.json",
			`{"channels":["in_app"],"escalate":[{"after":"10m","unless":"read","channels":["push"]}]}`)})
		matches(t, r.ok([]string{"types", "get", "pickup"}), `^escalation: +after 10m0s unless read: push$`)
		r.fails([]string{"types", "put", "pickup", "-f", r.file("bad-escalate.json",
			`{"escalate":[{"after":"10m","unless":"seen","channels":["push"]}]}`)}, "invalid_argument", "escalate[0].unless")
		var typ struct {
			Name     string `json:"name"`
			Priority string `json:"priority"`
		}
		r.okJSON([]string{"types", "get", "order_shipped"}, &typ)
		if typ.Name != "order_shipped" || typ.Priority != "HIGH" {
			t.Fatalf("types get --json: %+v", typ)
		}
		out = r.ok([]string{"types", "list"}, "NAME", "CHANNELS")
		matches(t, out, `^order_shipped +push +HIGH +at_least_once`)
		matches(t, out, `^promo +push,in_app +NORMAL`)
		var list struct {
			Types []struct{ Name string } `json:"types"`
		}
		r.okJSON([]string{"types", "list"}, &list)
		if len(list.Types) != 5 { // comment, news, order_shipped, pickup, promo
			t.Fatalf("types list --json: %+v", list)
		}
		// Defaults for an undeclared type.
		matches(t, r.ok([]string{"types", "get", "nobody_declared_me"}), `^source: +default$`)
		r.fails([]string{"types", "put", "x", "--priority", "URGENT"}, "invalid_argument", "priority")
		r.fails([]string{"types", "put", "x", "-f", r.file("bad-type.json", `{"chanels":["push"]}`)}, "invalid_argument", "chanels")
		r.fails([]string{"types", "put", "x", "-f", r.file("type2.json", `{}`), "--critical"}, "give --file or --critical, not both")
		r.fails([]string{"types", "put", "x", "-f", r.file("empty.json", ``)}, "is empty")
		r.fails([]string{"types", "put", "x", "-f", r.file("two.json", `{} {}`)}, "more than one JSON document")
		r.fails([]string{"types", "put", "x", "-f", filepath.Join(r.dir, "missing.json")}, "no such file")
	})

	t.Run("users", func(t *testing.T) {
		r := r.with(t)
		out := r.ok([]string{"users", "put", "u1", "--timezone", "Asia/Seoul", "--locale", "ko-KR", "--email", "kim@example.com"})
		matches(t, out, `^id: +u1$`)
		matches(t, out, `^timezone: +Asia/Seoul$`)
		var u struct{ ID, Timezone, Email string }
		r.okJSON([]string{"users", "get", "u1"}, &u)
		if u.ID != "u1" || u.Timezone != "Asia/Seoul" || u.Email != "kim@example.com" {
			t.Fatalf("users get --json: %+v", u)
		}
		matches(t, r.ok([]string{"users", "put", "u2", "-f", r.file("user.json", `{"timezone":"Europe/Berlin"}`)}), `^timezone: +Europe/Berlin$`)
		matches(t, r.ok([]string{"users", "get", "u2"}), `^timezone: +Europe/Berlin$`)
		r.fails([]string{"users", "put", "u3", "--timezone", "Mars/Olympus"}, "invalid_argument", "timezone")
		// An error the server answered prints as its code, status and
		// message.
		r.fails([]string{"users", "get", "nobody"}, "herald: not_found (HTTP 404): ")
		r.fails([]string{"users", "get"}, "accepts 1 arg")
	})

	t.Run("devices", func(t *testing.T) {
		r := r.with(t)
		r.ok([]string{"devices", "register", "u1", "--device-id", "phone-1", "--platform", "android", "--token", "tok-phone-1"},
			"device phone-1 of user u1 registered (android, ACTIVE, push on)")
		r.ok([]string{"devices", "register", "u1", "-f", r.file("device.json",
			`{"device_id":"tablet","platform":"ios","token":"tok-tablet-0123456789abcdef","push_opt_in":false}`)}, "push off")
		out := r.ok([]string{"devices", "list", "u1"}, "DEVICE", "PLATFORM")
		matches(t, out, `^phone-1 +android +ACTIVE +on `)
		matches(t, out, `^tablet +ios +ACTIVE +off .* tok-tablet-01234…$`)
		var list struct {
			Devices []struct {
				ID    string `json:"device_id"`
				Token string `json:"token"`
			} `json:"devices"`
		}
		r.okJSON([]string{"devices", "list", "u1"}, &list)
		if len(list.Devices) != 2 || list.Devices[1].Token != "tok-tablet-0123456789abcdef" {
			t.Fatalf("devices list --json: %+v", list)
		}
		r.ok([]string{"devices", "heartbeat", "phone-1"}, "device phone-1 marked seen")
		r.fails([]string{"devices", "register", "u1", "--device-id", "x"}, "--device-id, --token and --platform are required")
		r.fails([]string{"devices", "register", "u1", "--device-id", "x", "--platform", "symbian", "--token", "t"}, "invalid_argument", "platform")
		r.fails([]string{"devices", "register", "nobody", "--device-id", "x", "--platform", "ios", "--token", "t"}, "not_found")
		r.ok([]string{"devices", "delete", "u1", "tablet"}, "deleted device tablet of user u1")
		if out := r.ok([]string{"devices", "list", "u1"}); strings.Contains(out, "tablet") {
			t.Fatalf("a deleted device is listed:\n%s", out)
		}
		r.fails([]string{"devices", "delete", "u1", "tablet"}, "device tablet", "not_found")
	})

	t.Run("preferences", func(t *testing.T) {
		r := r.with(t)
		out := r.ok([]string{"preferences", "put", "u1", "--type-off", "promo", "--opt-out", "sms",
			"--quiet-hours", "22:00-08:00", "--type-channels", "order_shipped=push,in_app", "--daily-cap", "5"})
		matches(t, out, `^opted out of: +sms$`)
		matches(t, out, `^quiet hours: +22:00-08:00$`)
		matches(t, out, `^daily cap: +5$`)
		matches(t, out, `^timezone: +Asia/Seoul$`)
		matches(t, out, `^order_shipped +on +push,in_app`)
		matches(t, out, `^promo +off +any`)
		var p struct {
			Types map[string]struct {
				Disabled bool `json:"disabled"`
			} `json:"types"`
		}
		r.okJSON([]string{"preferences", "get", "u1"}, &p)
		if !p.Types["promo"].Disabled {
			t.Fatalf("preferences get --json: %+v", p)
		}
		r.ok([]string{"preferences", "put", "u2", "-f", r.file("prefs.json", `{"opted_out_channels":["email"]}`)}, "email")
		matches(t, r.ok([]string{"preferences", "get", "u2"}), `^opted out of: +email$`)
		// -f - reads standard input, as docs/cli.md shows.
		out = r.stdin(`{"types":{"promo":{"disabled":true}},"quiet_hours":{"start":"23:00","end":"07:00"}}`,
			"preferences", "put", "u2", "-f", "-")
		matches(t, out, `^quiet hours: +23:00-07:00$`)
		matches(t, out, `^opted out of: +none$`)
		r.fails([]string{"preferences", "put", "u1", "--quiet-hours", "22:00"}, "--quiet-hours", "HH:MM-HH:MM")
		r.fails([]string{"preferences", "put", "u1", "--type-channels", "promo"}, "TYPE=ch1,ch2")
		r.fails([]string{"preferences", "put", "u1", "--opt-out", "fax"}, "invalid_argument", "opted_out_channels")
		r.fails([]string{"preferences", "put", "u1", "-f", r.file("bad-prefs.json", `{"types":{"promo":{"disabld":true}}}`)},
			"invalid_argument (HTTP 400): types.promo.disabld: ") // the whole path, as the server names it
	})

	t.Run("interests", func(t *testing.T) {
		r := r.with(t)
		r.ok([]string{"interests", "record", "--user", "u1", "--subject", "product:42", "--kind", "WATCH", "--data", "target_price=8000"},
			"recorded 1 interest\n")
		r.ok([]string{"interests", "record", "-f", r.file("interests.json", `{"interests":[
			{"user_id":"u1","subject":"product:7","kind":"VIEW"},{"user_id":"u2","subject":"product:42","kind":"VIEW"}]}`)},
			"recorded 2 interests\n")
		out := r.ok([]string{"interests", "list", "u1"}, "SUBJECT")
		matches(t, out, `^product:42 +WATCH +\S+ +target_price=8000$`)
		matches(t, out, `^product:7 +VIEW `)
		var page struct {
			Interests []struct{ Subject string } `json:"interests"`
		}
		r.okJSON([]string{"interests", "list", "u1", "--subject", "product:7"}, &page)
		if len(page.Interests) != 1 || page.Interests[0].Subject != "product:7" {
			t.Fatalf("interests list --json: %+v", page)
		}
		r.fails([]string{"interests", "record", "--user", "u1"}, "--user, --subject and --kind are required")
		r.fails([]string{"interests", "record", "--user", "u1", "--subject", "s", "--kind", "VIEW", "--data", "novalue"}, "key=value")
		r.fails([]string{"interests", "record", "--user", "u1", "--subject", "s", "--kind", "VIEW", "--at", "yesterday"}, "--at", "RFC 3339")
		r.fails([]string{"interests", "record", "--user", "u1", "--subject", "s", "--kind", "not a kind!"}, "invalid_argument", "kind")
	})

	t.Run("notifications", func(t *testing.T) {
		r := r.with(t)
		var sent struct {
			ID       string `json:"id"`
			Replayed bool   `json:"replayed"`
		}
		out := r.ok([]string{"send", "--user", "u1", "--type", "order_shipped", "--title", "Shipped", "--body", "On its way",
			"--channel", "push", "--idempotency-key", "order-1-shipped"})
		if err := json.Unmarshal([]byte(out), &sent); err != nil || sent.ID == "" || sent.Replayed {
			t.Fatalf("send: %v\n%s", err, out)
		}
		r.ok([]string{"send", "-f", r.file("trigger.json", `{"user_id":"u1","type":"order_shipped","title":"Shipped","body":"On its way","channels":["push"]}`),
			"--idempotency-key", "order-1-shipped"}, `"replayed": true`, sent.ID)
		waitFor(t, "the notification to be sent", func() bool {
			out, _ := r.run("notifications", "get", sent.ID)
			return regexp.MustCompile(`(?m)^status: +SENT$`).MatchString(out)
		})
		out = r.ok([]string{"notifications", "get", sent.ID}, "1 delivery:", "phone-1")
		matches(t, out, `^channels: +push SENT$`)
		matches(t, out, `^title: +Shipped$`)
		var n struct {
			Status     string `json:"status"`
			Deliveries []struct {
				Attempts []any `json:"attempts"`
			} `json:"deliveries"`
		}
		r.okJSON([]string{"notifications", "get", sent.ID}, &n)
		if n.Status != "SENT" || len(n.Deliveries) != 1 || len(n.Deliveries[0].Attempts) != 1 {
			t.Fatalf("notifications get --json: %+v", n)
		}
		matches(t, r.ok([]string{"notifications", "list", "--user", "u1"}), `^`+sent.ID+` +u1 +order_shipped +SENT +push SENT`)
		var hist struct {
			Notifications []struct {
				ID string `json:"notification_id"`
			} `json:"notifications"`
		}
		r.okJSON([]string{"notifications", "list", "--type", "order_shipped", "--status", "SENT"}, &hist)
		if len(hist.Notifications) != 1 || hist.Notifications[0].ID != sent.ID {
			t.Fatalf("notifications list --json: %+v", hist)
		}
		r.fails([]string{"send", "-f", r.file("t2.json", `{}`), "--title", "x"}, "give --file or --title, not both")
		r.fails([]string{"send", "--type", "x"}, "--user is required")
		r.fails([]string{"send", "--user", "u1", "--type", "x", "--send-at", "tomorrow"}, "--send-at", "RFC 3339")
		r.fails([]string{"notifications", "get", "no-such-id"}, "not_found")
		r.fails([]string{"notifications", "list", "--from", "last week"}, "--from", "RFC 3339")
		r.fails([]string{"notifications", "list", "--status", "LOST"}, "invalid_argument", "status")

		// Cancelling: a notification for tomorrow, by its key.
		later := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		out = r.ok([]string{"send", "--user", "u1", "--type", "cart", "--title", "Your cart", "--send-at", later,
			"--cancellation-key", "order-2"})
		if err := json.Unmarshal([]byte(out), &sent); err != nil || sent.ID == "" {
			t.Fatalf("send: %v\n%s", err, out)
		}
		out = r.ok([]string{"notifications", "cancel", "--key", "order-2", "--user", "u1"}, "1 notification: cancelled 1, sent 0")
		matches(t, out, ` +`+sent.ID+` +push +cancelled +cancelled$`)
		matches(t, r.ok([]string{"notifications", "get", sent.ID}), `^cancellation key: +order-2$`)
		matches(t, r.ok([]string{"notifications", "get", sent.ID}), `^status: +CANCELLED \(cancelled\)$`)
		r.fails([]string{"notifications", "cancel", "--user", "u1"}, "invalid_argument", "cancellation_key")
	})
}

// The setup commands' help is written for the person at the terminal:
// no requirement or issue numbers.
func TestSetupCommandsHelp(t *testing.T) {
	internal := regexp.MustCompile(`\bS\d\.\d|\bissue \d|\bseed \d`)
	for _, group := range [][]string{
		{"users", "put", "get"}, {"devices", "list", "register", "delete", "heartbeat"}, {"types", "list", "get", "put"},
		{"preferences", "get", "put"}, {"interests", "record", "list"}, {"notifications", "get", "list", "cancel"}, {"send"},
	} {
		for _, sub := range append([]string{""}, group[1:]...) {
			args := []string{group[0]}
			if sub != "" {
				args = append(args, sub)
			}
			var out bytes.Buffer
			if code := Run(context.Background(), append(args, "--help"), &out, &out, nil); code != 0 {
				t.Fatalf("herald %s --help: exit %d", strings.Join(args, " "), code)
			}
			if m := internal.FindString(out.String()); m != "" {
				t.Errorf("herald %s --help says %q:\n%s", strings.Join(args, " "), m, out.String())
			}
		}
	}
}
