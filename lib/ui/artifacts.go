package ui

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A node's artifacts (seed 000 §3.4): .runner/nodes/<id>/artifacts/, the
// files sessions saved for it, listed for the node view and served one by
// one. They are what a session wrote: a file is served inline only as
// plain text or as an image of a common kind, never as a page the browser
// would run, and always under a sandboxing content security policy.

// artifact is one file of the list.
type artifact struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// handleArtifacts lists node id's artifacts: {"node", "files", "bytes"}.
func (s *Server) handleArtifacts(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		writeError(w, http.StatusBadRequest, "bad_node", "node id must match "+idPattern.String())
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	dir := path.Join("nodes", id, "artifacts")
	files := []artifact{}
	var total int64
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, artifact{Name: strings.TrimPrefix(p, dir+"/"), Bytes: info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		fileError(w, dir, err)
		return
	}
	slices.SortFunc(files, func(a, b artifact) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, map[string]any{"node": id, "files": files, "bytes": total})
}

// inlineTypes are the content types an artifact is shown as in the page;
// any other is a download.
var inlineTypes = map[string]bool{"text/plain": true, "image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// handleArtifact serves one of node id's artifacts.
func (s *Server) handleArtifact(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("name")
	if !idPattern.MatchString(id) || !fs.ValidPath(name) || name == "." {
		writeError(w, http.StatusBadRequest, "bad_artifact", "want /api/nodes/<id>/artifacts/<path>")
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	rel := path.Join("nodes", id, "artifacts", name)
	f, st, err := openFile(root, rel)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	defer f.Close()
	typ, _, _ := mime.ParseMediaType(mime.TypeByExtension(path.Ext(name)))
	if strings.HasPrefix(typ, "text/") {
		typ = "text/plain"
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("X-File-Size", strconv.FormatInt(st.Size(), 10))
	if inlineTypes[typ] {
		if typ == "text/plain" {
			typ += "; charset=utf-8"
		}
		h.Set("Content-Type", typ)
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	}
	http.ServeContent(w, r, "", st.ModTime(), f)
}
