package audience

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Issue 31 item 3: a webhook's answer is read as a stream and cut at the
// page's limit without reading the rest.
func TestDecodeWebhookAnswer(t *testing.T) {
	t.Parallel()
	ids, err := DecodeWebhookAnswer(strings.NewReader(`{"next":{"x":[1]},"users":["a","b","c"]}`), 10)
	if err != nil || !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("%v %v", ids, err)
	}
	// Cut at 2: the malformed rest is never read.
	ids, err = DecodeWebhookAnswer(strings.NewReader(`{"users":["a","b","c", nonsense`), 2)
	if err != nil || !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("cut: %v %v", ids, err)
	}
	for body, msg := range map[string]string{
		`{"users":["a",7]}`:   "has users[1] that is not a string",
		`{"users":"SECRET"}`:  "has users that is not a list",
		`null`:                "is null",
		`{"users":[]} SECRET`: "",
	} {
		if _, err := DecodeWebhookAnswer(strings.NewReader(body), 10); err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: %v, want %q", body, err, msg)
		}
	}
}

// FuzzDecodeWebhookAnswer (issue 31 item 7): whatever a webhook answers,
// the decoder does not panic and never returns more ids than asked; an
// answer it read whole is valid JSON.
func FuzzDecodeWebhookAnswer(f *testing.F) {
	for _, s := range []string{`{"users":["a","b"]}`, `{"users":null}`, `{"users":["a",1]}`, `{"x":[{"y":null}],"users":[]}`,
		`{"users":["a","b","c","d"]}`, `[]`, `{"users":[]}{}`} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		if limit < 1 || limit > 1000 {
			return
		}
		ids, err := DecodeWebhookAnswer(bytes.NewReader(body), limit)
		if err != nil {
			return
		}
		if len(ids) > limit {
			t.Fatalf("%d ids for a limit of %d", len(ids), limit)
		}
		if len(ids) < limit && !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
	})
}
