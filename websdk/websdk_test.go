package websdk_test

import (
	"crypto/sha512"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/heraldhq/herald/websdk"
)

// TestFilesAndNames: each file's integrity is its bytes' SHA-384, the
// pinned name of herald.js changes with its bytes, and Lookup gives each
// name its caching.
func TestFilesAndNames(t *testing.T) {
	fs := websdk.Files()
	if len(fs) != 2 || fs[0].Name != "herald.js" || fs[1].Name != "herald-sw.js" {
		t.Fatalf("files: %+v", fs)
	}
	for _, f := range fs {
		sum := sha512.Sum384(f.Body)
		if f.Integrity != "sha384-"+base64.StdEncoding.EncodeToString(sum[:]) {
			t.Errorf("%s: integrity %s does not match its bytes", f.Name, f.Integrity)
		}
	}
	for _, c := range []struct{ name, cache string }{
		{"herald.js", "public, max-age=3600"},
		{strings.TrimPrefix(fs[0].Path, "/sdk/v1/"), "public, max-age=31536000, immutable"},
		{"herald-sw.js", "no-cache"},
	} {
		s, ok := websdk.Lookup(c.name)
		if !ok || s.CacheControl != c.cache {
			t.Errorf("Lookup(%q): %v, %q; want %q", c.name, ok, s.CacheControl, c.cache)
		}
	}
	for _, bad := range []string{"", "example.html", "herald.000000000000.js", "../herald.js"} {
		if _, ok := websdk.Lookup(bad); ok {
			t.Errorf("Lookup(%q) found a file", bad)
		}
	}
}

// TestNoDependencies: herald.js imports nothing and the service worker
// imports no other script, so a page needs exactly these files and no
// build step (issue 38 item 1).
func TestNoDependencies(t *testing.T) {
	for _, f := range websdk.Files() {
		for i, line := range strings.Split(string(f.Body), "\n") {
			l := strings.TrimSpace(line)
			if strings.HasPrefix(l, "//") || strings.HasPrefix(l, "*") {
				continue
			}
			if strings.HasPrefix(l, "import ") || strings.Contains(l, "import(") || strings.Contains(l, "require(") ||
				strings.Contains(l, "importScripts(") {
				t.Errorf("%s:%d loads other code: %s", f.Name, i+1, l)
			}
		}
	}
}
