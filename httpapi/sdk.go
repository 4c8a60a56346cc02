package httpapi

import (
	"net/http"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/websdk"
)

// sdkFile: GET /sdk/v1/{file} serves a file of the web SDK (package
// websdk): herald.js under its stable name and its fingerprinted one, and
// the service worker. Any origin may load them (a module script is always
// fetched with CORS), and no credential is needed: they are public code.
func (s *Server) sdkFile(w http.ResponseWriter, r *http.Request) error {
	f, ok := websdk.Lookup(r.PathValue("file"))
	if !ok {
		return &heraldtype.Error{Code: heraldtype.ENOTFOUND, Message: "the web SDK has no file of this name"}
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Content-Type", f.ContentType)
	h.Set("Cache-Control", f.CacheControl)
	h.Set("ETag", f.ETag)
	h.Set("X-Content-Type-Options", "nosniff")
	if match := r.Header.Get("If-None-Match"); match != "" && match == f.ETag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	_, _ = w.Write(f.Body)
	return nil
}

// sdkIntegrity: GET /sdk/integrity names each SDK file's pinned URL and
// its Subresource Integrity hash, computed from the bytes this binary
// serves, for a page's <script integrity="…">.
func (s *Server) sdkIntegrity(w http.ResponseWriter, r *http.Request) error {
	type file struct {
		Name      string `json:"name"`
		Path      string `json:"path"`
		Integrity string `json:"integrity"`
	}
	out := struct {
		Version string `json:"version"`
		Files   []file `json:"files"`
	}{Version: websdk.Version}
	for _, f := range websdk.Files() {
		out.Files = append(out.Files, file{Name: f.Name, Path: f.Path, Integrity: f.Integrity})
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// sdkExample: GET /sdk/example is a page showing the inbox of the quick
// start's user, served only when Config.SDKExample is set (serve --dev).
func (s *Server) sdkExample(w http.ResponseWriter, r *http.Request) error {
	if !s.sdkExampleOn {
		return &heraldtype.Error{Code: heraldtype.ENOTFOUND, Message: "the web SDK's example page is served by a development server (serve --dev) only"}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(websdk.Example())
	return nil
}
