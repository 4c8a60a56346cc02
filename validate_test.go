package herald

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
)

func TestNewIDIsSortableAndUnique(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 2000 {
		id := newID(base.Add(time.Duration(i) * time.Millisecond))
		if len(id) != 26 {
			t.Fatalf("id %q has length %d", id, len(id))
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id[:10] < prev {
			t.Fatalf("ids not time-ordered: %q after %q", id, prev)
		}
		prev = id[:10]
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	good := []string{"u1", "user-42", "a.b_c", "사용자", strings.Repeat("x", MaxIDLength)}
	bad := []string{"", "a/b", "..", ".", "a b", "a\x00b", "a%2f", strings.Repeat("x", MaxIDLength+1), "\xff", "a?b", "a#b", `a\b`}
	for _, id := range good {
		if err := validID("id", id); err != nil {
			t.Errorf("validID(%q) = %v, want ok", id, err)
		}
	}
	for _, id := range bad {
		err := validID("id", id)
		if heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("validID(%q) = %v, want invalid_argument", id, err)
		}
	}
}

func TestLoadTimezone(t *testing.T) {
	t.Parallel()
	for _, tz := range []string{"Asia/Seoul", "America/New_York", "UTC", "Europe/London"} {
		if _, err := loadTimezone("timezone", tz); err != nil {
			t.Errorf("%s: %v", tz, err)
		}
	}
	for _, tz := range []string{"", "Local", "Mars/Olympus", "../../etc/passwd", "Asia\\Seoul", strings.Repeat("A", 100)} {
		if _, err := loadTimezone("timezone", tz); heraldtype.ErrorCode(err) != heraldtype.EINVALID {
			t.Errorf("%q: got %v, want invalid_argument", tz, err)
		}
	}
}

func TestRequestHashIgnoresKeyButNotContent(t *testing.T) {
	t.Parallel()
	a := Request{IdempotencyKey: "k1", UserID: "u1", Type: "t", Title: "x", Data: map[string]string{"a": "1", "b": "2"}}
	b := a
	b.IdempotencyKey = "k2"
	b.Data = map[string]string{"b": "2", "a": "1"}
	ha, _ := requestHash(&a)
	hb, _ := requestHash(&b)
	if ha != hb {
		t.Fatal("hash depends on the key or on map order")
	}
	b.Title = "y"
	if hc, _ := requestHash(&b); hc == ha {
		t.Fatal("hash ignores the title")
	}
}
