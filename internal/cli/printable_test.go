package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Issue 23 item 7: ids printed for an operator never carry a terminal
// escape, a bidi override or an invisible character raw.
func TestPrintableEscapesUnprintables(t *testing.T) {
	for in, want := range map[string]string{
		"dev-1":            "dev-1",
		"ユーザー":             "ユーザー",
		"a\u009b31mb":      `"a\u009b31mb"`,
		"evil\u202etxt.sh": `"evil\u202etxt.sh"`,
		"zw\u200bsp":       `"zw\u200bsp"`,
		"\ufeffbom":        `"\ufeffbom"`,
		"tab\there":        `"tab\there"`,
		"bad\xffutf8":      `"bad\xffutf8"`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPrintJSONEscapesUnprintables(t *testing.T) {
	v := map[string]string{"device_id": "d\u009b[2J\u202e\U000e0041", "name": "josé"}
	var out bytes.Buffer
	if err := printJSON(&out, v); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.ContainsAny(s, "\u009b\u202e\U000e0041") {
		t.Fatalf("printJSON wrote unprintables raw: %q", s)
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["device_id"] != v["device_id"] || back["name"] != "josé" {
		t.Fatalf("printJSON output %s decodes to %v (%v), want %v", s, back, err, v)
	}
}

// Issue 22 item 9: counts in the CLI's output are pluralised right.
func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 deliveries", 1: "1 delivery", 2: "2 deliveries", 1000: "1000 deliveries"} {
		if got := count(n, "delivery", "deliveries"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
