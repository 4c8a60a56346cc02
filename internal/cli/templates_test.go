package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 37: herald templates list|get|put|versions|preview|test-send
// against a running server; refusals first.
func TestTemplatesCommands(t *testing.T) {
	s := startDev(t)
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append(args, "--server", s.api), &out, &errb, nil)
		return out.String() + errb.String(), code
	}
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("order.json", `{"default_locale":"en","sample_data":{"order":"A-1","at":"2026-11-28T06:04:00Z"},
 "locales":{"en":{"in_app":{"title":"Order {{.order}}","body":"Shipped {{date \"long\" .at}}"},"push":{"title":"Order {{.order}}","body":"Shipped"}},
            "ko":{"in_app":{"title":"주문 {{.order}}","body":"{{date \"time\" .at}} 발송"}}}}`)
	bad := file("bad.json", `{"default_locale":"en","sample_data":{"order":"A-1"},"locales":{"en":{"sms":{"text":"{{.nickname}}"}}}}`)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"templates", "put", "order"}, "--file is required"},
		{[]string{"templates", "put", "order", "-f", bad}, "templates.locales.en.sms.text"},
		{[]string{"templates", "get", "order"}, "not_found"},
		{[]string{"templates", "test-send", "order"}, "--user is required"},
		{[]string{"templates", "test-send", "order", "--user", "kim"}, "no templates"},
		{[]string{"templates", "preview", "order", "--data", "nokey"}, "key=value"},
		{[]string{"templates", "preview", "order", "--version", "2", "-f", good}, "not both"},
		{[]string{"templates", "versions", "order", "--limit", "1000"}, "limit"},
	} {
		if out, code := run(c.args...); code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %s; want a failure saying %q", c.args, code, out, c.want)
		}
	}

	for _, args := range [][]string{
		{"types", "put", "order", "--channel", "push", "--channel", "in_app"},
		{"users", "put", "kim", "--locale", "ko-KR", "--timezone", "Asia/Seoul"},
	} {
		if out, code := run(args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, out)
		}
	}
	for v := 1; v <= 2; v++ {
		if out, code := run("templates", "put", "order", "-f", good); code != 0 || !strings.Contains(out, "order: version "+string(rune('0'+v))+" saved (en, ko)") {
			t.Fatalf("put %d: %d %s", v, code, out)
		}
	}
	if out, code := run("templates", "list"); code != 0 || !regexp.MustCompile(`order\s+2\s+en\s+en ko\s+push,in_app`).MatchString(out) {
		t.Fatalf("list: %d %s", code, out)
	}
	if out, code := run("templates", "get", "order", "--version", "1"); code != 0 || !strings.Contains(out, `"version": 1`) || !strings.Contains(out, `"default_locale": "en"`) {
		t.Fatalf("get: %d %s", code, out)
	}
	out, code := run("templates", "versions", "order", "--limit", "1")
	if code != 0 || !strings.Contains(out, "VERSION") || !strings.Contains(out, "more: --before 2") {
		t.Fatalf("versions: %d %s", code, out)
	}
	if out, code := run("templates", "versions", "order", "--before", "2", "--json"); code != 0 || !strings.Contains(out, `"version": 1`) || strings.Contains(out, `"version": 2`) {
		t.Fatalf("versions --before: %d %s", code, out)
	}
	// The preview in every locale and for kim, in her locale and zone
	// (CLDR's Korean time: 오후 3:04 in Seoul).
	out, code = run("templates", "preview", "order", "--user", "kim")
	if code != 0 || !strings.Contains(out, "locale en") || !strings.Contains(out, "Shipped November 28, 2026") ||
		!strings.Contains(out, "user kim (locale ko-KR picks ko, zone Asia/Seoul") || !strings.Contains(out, "in_app: 주문 A-1 / 오후 3:04 발송") {
		t.Fatalf("preview: %d %s", code, out)
	}
	if out, code := run("templates", "preview", "order", "-f", bad); code != 0 || !strings.Contains(out, "draft") || !strings.Contains(out, "does not render") {
		t.Fatalf("preview of a draft: %d %s", code, out)
	}
	// A test-send: kim has no device, so push is skipped, said so; the
	// in-app item is written.
	out, code = run("templates", "test-send", "order", "--user", "kim")
	if code != 0 || !regexp.MustCompile(`notification \S+ for kim`).MatchString(out) ||
		!regexp.MustCompile(`push\s+skipped\s+0\s+the user has no device that takes push notifications \(no_device\)`).MatchString(out) ||
		!regexp.MustCompile(`in_app\s+queued\s+1`).MatchString(out) {
		t.Fatalf("test-send: %d %s", code, out)
	}
	if out, code := run("templates", "test-send", "order", "--user", "kim", "--channel", "in_app", "--data", "order=B-2", "--data", "at=2026-11-28T06:04:00Z", "--json"); code != 0 ||
		!strings.Contains(out, `"status": "queued"`) || strings.Contains(out, `"push"`) {
		t.Fatalf("test-send --json: %d %s", code, out)
	}
}
