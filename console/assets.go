package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
)

//go:embed assets/*
var assetFS embed.FS

// assetVersion is a hash of the embedded assets: their URLs carry it, so
// a browser may keep them for a day and still gets a new release's at
// once.
var assetVersion = func() string {
	h := sha256.New()
	names, _ := fs.Glob(assetFS, "assets/*")
	for _, n := range names {
		b, _ := fs.ReadFile(assetFS, n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

// assetURL is the URL of an embedded asset, for the templates.
func assetURL(name string) string { return Prefix + "assets/" + name + "?v=" + assetVersion }

// asset serves an embedded stylesheet or script. Assets are public: the
// sign-in page needs them before anyone has signed in.
func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := fs.ReadFile(assetFS, "assets/"+path.Base(name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(b)
}
