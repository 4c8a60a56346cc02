// Package websdk holds Herald's web SDK as the files a browser loads:
// herald.js, a dependency-free ES module with the <herald-inbox> web
// component and the Web Push registration, and herald-sw.js, the service
// worker script that shows Herald's pushes (issue 38). They are written by
// hand and embedded into the binary, so Herald needs no Node to build or
// run, and a page needs no build step to use them.
//
// The package only knows the files: their bytes, their Subresource
// Integrity hashes and how long a browser may cache each. httpapi serves
// them (GET /sdk/v1/{file}, GET /sdk/integrity, GET /sdk/example).
package websdk

import (
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"sync"
)

//go:embed herald.js herald-sw.js example.html
var files embed.FS

// Version is the path segment of the SDK's URLs (/sdk/v1/…): it changes
// only when the module's public API breaks, never for a fix.
const Version = "v1"

// File is one file of the SDK as it is served.
type File struct {
	// Name is the file's stable name: "herald.js", "herald-sw.js".
	Name string
	// Path is the URL path that pins these bytes: for herald.js its
	// fingerprinted name (/sdk/v1/herald.<hash>.js), served with immutable
	// caching, so a page that names it with its Integrity never breaks
	// when Herald is upgraded; for the service worker its stable name,
	// since a browser updates a worker only at the URL it registered.
	Path string
	// Integrity is the Subresource Integrity value, "sha384-…".
	Integrity string
	// ContentType is what the file is served as.
	ContentType string
	// ETag names the bytes, for revalidation of the stable names.
	ETag string
	// Body is the file's bytes.
	Body []byte
}

// Served is what a request for a name under /sdk/v1/ gets.
type Served struct {
	File
	// CacheControl is the Cache-Control header for the name asked for:
	// immutable for a fingerprinted name, revalidated after an hour for
	// herald.js and at every update check for the service worker.
	CacheControl string
}

// Cache-Control values: a fingerprinted name's bytes never change; the
// stable herald.js may change with an upgrade, so a browser rechecks it
// hourly; a service worker is revalidated at each of the browser's
// update checks (a worker that cannot be replaced quickly is a worker
// that cannot be fixed).
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheStable    = "public, max-age=3600"
	cacheWorker    = "no-cache"
)

var load = sync.OnceValue(func() []File {
	var out []File
	for _, name := range []string{"herald.js", "herald-sw.js"} {
		b, err := files.ReadFile(name)
		if err != nil {
			panic("websdk: " + err.Error()) // the embed directive names it
		}
		sum384 := sha512.Sum384(b)
		sum := sha256.Sum256(b)
		fp := hex.EncodeToString(sum[:6])
		f := File{Name: name, Path: "/sdk/" + Version + "/" + name,
			Integrity:   "sha384-" + base64.StdEncoding.EncodeToString(sum384[:]),
			ContentType: "text/javascript; charset=utf-8", ETag: `"` + fp + `"`, Body: b}
		if name == "herald.js" {
			f.Path = "/sdk/" + Version + "/" + fingerprinted(name, fp)
		}
		out = append(out, f)
	}
	return out
})

// fingerprinted inserts the hash before the extension: herald.<fp>.js.
func fingerprinted(name, fp string) string {
	base, _ := strings.CutSuffix(name, ".js")
	return base + "." + fp + ".js"
}

// Files returns the SDK's files, herald.js first.
func Files() []File { return load() }

// Lookup returns what serving name (the last segment of /sdk/v1/{name})
// means: a file's stable or fingerprinted name, with its caching.
func Lookup(name string) (Served, bool) {
	for _, f := range load() {
		switch {
		case name == f.Name && f.Name == "herald-sw.js":
			return Served{File: f, CacheControl: cacheWorker}, true
		case name == f.Name:
			return Served{File: f, CacheControl: cacheStable}, true
		case f.Path == "/sdk/"+Version+"/"+name:
			return Served{File: f, CacheControl: cacheImmutable}, true
		}
	}
	return Served{}, false
}

// Example returns the example page, which loads herald.js from the server
// that serves it (served with serve --dev only).
func Example() []byte {
	b, err := files.ReadFile("example.html")
	if err != nil {
		panic("websdk: " + err.Error())
	}
	js := load()[0]
	page := strings.ReplaceAll(string(b), "{{HERALD_JS}}", js.Path)
	return []byte(strings.ReplaceAll(page, "{{HERALD_JS_INTEGRITY}}", js.Integrity))
}
