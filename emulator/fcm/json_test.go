package fcm

import (
	"encoding/json"
	"maps"
	"testing"
)

// splitObject and jsonString must agree with encoding/json on every valid
// document: the same members with the same bytes, the same strings, and
// never success where encoding/json fails.
func FuzzSplitObject(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x","a":"y"}`, `{"a" : { "b" : [1, {"c": "}"}] } , "d":null}`,
		`{"k\u00e9y":"v\"al\\ue"}`, `{"a":"\ud83d\ude00","b":true,"c":false,"d":-1.5e3}`,
		`{"message":{"token":"t","data":{"k":"v"},"android":{"priority":"high","ttl":"60s"}}}`,
		`[]`, `"s"`, `null`, `{"a":[]}`, `{"":""}`, "{\"a\":\"\xff\"}", `{"a":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		var want map[string]json.RawMessage
		werr := json.Unmarshal(doc, &want)
		got, ok := splitObject(doc)
		if ok {
			if werr != nil {
				t.Fatalf("splitObject(%q) ok, encoding/json: %v", doc, werr)
			}
			if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
				t.Fatalf("splitObject(%q) = %q, encoding/json %q", doc, got, want)
			}
		} else if werr == nil && want != nil {
			t.Fatalf("splitObject(%q) failed where encoding/json decoded %q", doc, want)
		}
		var ws string
		serr := json.Unmarshal(doc, &ws)
		if s, ok := jsonString(doc); ok && (serr != nil || s != ws) {
			t.Fatalf("jsonString(%q) = %q, encoding/json %q, %v", doc, s, ws, serr)
		} else if !ok && serr == nil && len(doc) > 0 && doc[0] == '"' {
			t.Fatalf("jsonString(%q) failed where encoding/json decoded %q", doc, ws)
		}
	})
}
