package campaign

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var testLimits = FetchLimits{MaxItems: 3, MaxFields: 2, MaxValues: 40}

// Issue 31 item 3: the streaming decoder keeps the asked users' content
// as json.Unmarshal would, skips the rest, and refuses an answer over a
// bound naming it, never quoting the answer.
func TestDecodeFetchAnswer(t *testing.T) {
	t.Parallel()
	asked := map[string]bool{"u1": true, "u2": true}
	got, err := DecodeFetchAnswer(strings.NewReader(`{"users":{"u1":{"items":[{"name":"Kettle","price":12.5},"b",null],
		"fields":{"greeting":"hi","n":[1,2]},"extra":{"x":1}},"u2":{"items":null},"u9":{"items":[1,2,3]}},"next":"x"}`), testLimits, asked)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]UserContent{
		"u1": {Items: []any{map[string]any{"name": "Kettle", "price": 12.5}, "b", nil}, Fields: map[string]any{"greeting": "hi", "n": []any{1.0, 2.0}}},
		"u2": {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	for body, msg := range map[string]string{
		`{"users":{"u1":{"items":[1,2,3,4]}}}`:                 `has more than 3 items for user "u1" (campaigns.fetch_max_items)`,
		`{"users":{"u1":{"fields":{"a":1,"b":2,"c":3}}}}`:      `has more than 2 fields for user "u1" (campaigns.fetch_max_fields)`,
		`{"users":{"u9":[` + strings.Repeat("1,", 50) + `1]}}`: "holds more than 40 values (campaigns.fetch_max_values)",
		`{"users":{"u1":{"items":"SECRET"}}}`:                  "has items that is not a list",
		`{"users":["SECRET"]}`:                                 "has users that is not an object",
		`["SECRET"]`:                                           "is not an object",
		`{"users":{}} SECRET`:                                  "",
		`{"users":{"u1":{"items":[SECRET]}}}`:                  "",
	} {
		_, err := DecodeFetchAnswer(strings.NewReader(body), testLimits, asked)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", body, err, msg)
		}
	}
}

// FuzzDecodeFetchAnswer (issue 31 item 7): whatever an endpoint answers,
// the decoder does not panic, keeps only asked users, holds to the
// bounds, and accepts only valid JSON.
func FuzzDecodeFetchAnswer(f *testing.F) {
	for _, s := range []string{
		`{"users":{"u1":{"items":[{"a":1}],"fields":{"b":"c"}}}}`,
		`{"users":{"u1":{"items":[1,2,3,4]}}}`,
		`{"users":null}`, `null`, `{"users":{"u2":{"fields":null,"items":[[[]]]}}}`,
		`{"users":{"u1":{"items":[1]}},"users":{"u2":{}}}`, `{"users":{}} x`, `{"a":[{"b":{"c":[1,true,null,"s"]}}]}`,
	} {
		f.Add([]byte(s))
	}
	asked := map[string]bool{"u1": true, "u2": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := DecodeFetchAnswer(bytes.NewReader(body), testLimits, asked)
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		for id, uc := range got {
			if !asked[id] || len(uc.Items) > testLimits.MaxItems || len(uc.Fields) > testLimits.MaxFields {
				t.Fatalf("%q: %q %+v", body, id, uc)
			}
		}
	})
}
