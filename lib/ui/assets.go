package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// The page: hand-written HTML, CSS and JavaScript embedded in the binary, no
// bundler, no CDN. Assets are served under content-hashed names
// (/assets/app.<hash>.js) that are cached for good; the index, which names
// them, is never cached.

//go:embed static
var staticFS embed.FS

type asset struct {
	data  []byte
	ctype string
}

type assets struct {
	index  []byte
	byName map[string]asset
	mod    time.Time
}

// loadAssets hashes the static files and writes their hashed names into
// index.html in place of "{{name}}".
func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]asset{}, mod: time.Now()}
	index, err := staticFS.ReadFile("static/index.html")
	if err != nil {
		return nil, err
	}
	ents, err := staticFS.ReadDir("static")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if name == "index.html" || e.IsDir() {
			continue
		}
		data, err := staticFS.ReadFile("static/" + name)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		a.byName[hashed] = asset{data: data, ctype: mime.TypeByExtension(ext)}
		index = bytes.ReplaceAll(index, []byte("{{"+name+"}}"), []byte("/assets/"+hashed))
	}
	a.index = index
	return a, nil
}

func (a *assets) serveIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	http.ServeContent(w, r, "index.html", a.mod, bytes.NewReader(a.index))
}

func (a *assets) serveAsset(w http.ResponseWriter, r *http.Request) {
	as, ok := a.byName[r.PathValue("name")]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no such asset")
		return
	}
	w.Header().Set("Content-Type", as.ctype)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	http.ServeContent(w, r, "", a.mod, bytes.NewReader(as.data))
}
