package jsonenc

import (
	"encoding/json"
	"testing"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "ctl \x00\x01\x1f\n\r\t", "한글 ✓ 🎉", "bad \xff\xfe utf8", "\u2028\u2029", "<html>&"} {
		var back string
		if err := json.Unmarshal(AppendString(nil, s), &back); err != nil {
			t.Fatalf("AppendString(%q) is not JSON: %v", s, err)
		}
		var want string
		std, _ := json.Marshal(s)
		_ = json.Unmarshal(std, &want)
		if back != want {
			t.Errorf("AppendString(%q) round-trips to %q, want %q", s, back, want)
		}
	}
}

func TestAppendPair(t *testing.T) {
	t.Parallel()
	got := string(AppendPair(AppendPair([]byte("{"), true, "a", "1"), false, "b", "\"")) + "}"
	if got != `{"a":"1","b":"\""}` {
		t.Fatalf("got %s", got)
	}
}
