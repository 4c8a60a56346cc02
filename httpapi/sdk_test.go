package httpapi_test

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldhq/herald/websdk"
)

// TestSDKIsServedWithItsIntegrity: the hash GET /sdk/integrity publishes is
// the hash of the bytes the pinned path serves, which are cached as
// immutable, loadable from any origin and revalidated by ETag (issue 38
// item 1).
func TestSDKIsServedWithItsIntegrity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	r := e.do("GET", "/sdk/integrity", nil, "Authorization", "")
	var got struct {
		Version string
		Files   []struct{ Name, Path, Integrity string }
	}
	if r.status != 200 || json.Unmarshal(r.body, &got) != nil || got.Version != "v1" || len(got.Files) != 2 {
		t.Fatalf("GET /sdk/integrity: %d %s", r.status, r.body)
	}
	for _, f := range got.Files {
		js := e.do("GET", f.Path, nil, "Authorization", "", "Origin", "https://app.example.com")
		sum := sha512.Sum384(js.body)
		if want := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); js.status != 200 || f.Integrity != want {
			t.Fatalf("%s: %d, published %s, served bytes hash to %s", f.Path, js.status, f.Integrity, want)
		}
		if ct := js.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
			t.Errorf("%s: Content-Type %q", f.Path, ct)
		}
		if a := js.header.Get("Access-Control-Allow-Origin"); a != "*" {
			t.Errorf("%s: Access-Control-Allow-Origin %q, want *", f.Path, a)
		}
		cc := js.header.Get("Cache-Control")
		switch f.Name {
		case "herald.js":
			if f.Path == "/sdk/v1/herald.js" || !strings.Contains(cc, "immutable") {
				t.Errorf("herald.js is published at %s with Cache-Control %q: want a pinned, immutable path", f.Path, cc)
			}
			plain := e.do("GET", "/sdk/v1/herald.js", nil)
			if string(plain.body) != string(js.body) || strings.Contains(plain.header.Get("Cache-Control"), "immutable") {
				t.Errorf("/sdk/v1/herald.js: other bytes or immutable (%q)", plain.header.Get("Cache-Control"))
			}
			if !strings.Contains(string(js.body), "customElements.define(\"herald-inbox\"") {
				t.Error("herald.js does not define <herald-inbox>")
			}
		case "herald-sw.js":
			if cc != "no-cache" {
				t.Errorf("the service worker's Cache-Control is %q, want no-cache", cc)
			}
		}
		if again := e.do("GET", f.Path, nil, "If-None-Match", js.header.Get("ETag")); again.status != 304 || len(again.body) != 0 {
			t.Errorf("%s with its ETag: %d, %d bytes; want 304", f.Path, again.status, len(again.body))
		}
	}
	if r := e.do("GET", "/sdk/v1/nothing.js", nil); r.status != 404 {
		t.Errorf("an unknown SDK file: %d", r.status)
	}
}

// TestSDKExampleOnlyWhenAsked: the example page is a development server's
// (serve --dev); another server answers 404.
func TestSDKExampleOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	if r := newEnv(t, envOptions{}).do("GET", "/sdk/example", nil); r.status != 404 {
		t.Errorf("without SDKExample: %d", r.status)
	}
	r := newEnv(t, envOptions{sdkExample: true}).do("GET", "/sdk/example", nil)
	js := websdk.Files()[0]
	if r.status != 200 || !strings.Contains(string(r.body), `src="`+js.Path+`" integrity="`+js.Integrity+`"`) {
		t.Fatalf("with SDKExample: %d %s", r.status, r.body)
	}
}
