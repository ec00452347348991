package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A node's artifacts: listed with their sizes, served one by one as plain
// text (a page too) or an image inline, anything else as a download,
// always sandboxed;
// a symbolic link or a path out of the directory is not served.
func TestArtifacts(t *testing.T) {
	dir := fixture(t)
	art := filepath.Join(dir, ".runner/nodes/root/artifacts")
	for name, body := range map[string]string{"report.md": "# Report\n", "shots/page.png": "\x89PNG", "page.html": "<script>alert(1)</script>", "bench.tar": "tar"} {
		p := filepath.Join(art, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(art, "link")); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	r := get(t, s.url+"/api/nodes/root/artifacts")
	want := `{"bytes":41,"files":[{"name":"bench.tar","bytes":3},{"name":"page.html","bytes":25},{"name":"report.md","bytes":9},{"name":"shots/page.png","bytes":4}],"node":"root"}`
	if r.code != 200 || strings.Join(strings.Fields(r.body), "") != want {
		t.Fatalf("list: %d %s\nwant %s", r.code, r.body, want)
	}
	for _, c := range []struct{ name, typ, disposition string }{
		{"report.md", "text/plain; charset=utf-8", ""},
		{"shots/page.png", "image/png", ""},
		{"page.html", "text/plain; charset=utf-8", ""}, // a page the session wrote is never run: shown as text
		{"bench.tar", "application/octet-stream", "attachment"},
	} {
		r := get(t, s.url+"/api/nodes/root/artifacts/"+c.name)
		if r.code != 200 || r.header.Get("Content-Type") != c.typ || !strings.HasPrefix(r.header.Get("Content-Disposition"), c.disposition) ||
			!strings.Contains(r.header.Get("Content-Security-Policy"), "sandbox") || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v", c.name, r.code, r.header)
		}
	}
	if r := get(t, s.url+"/api/nodes/root/artifacts/link"); r.code == 200 {
		t.Errorf("a symbolic link was served: %s", r.body)
	}
	if r := get(t, s.url+"/api/nodes/root/artifacts/..%2F..%2Fstate%2Ftree.json"); r.code == 200 {
		t.Errorf("a path out of the directory was served: %s", r.body)
	}
	if r := get(t, s.url+"/api/nodes/nope/artifacts"); r.code != 200 || !strings.Contains(r.body, `"files":[]`) {
		t.Errorf("a node without artifacts: %d %s", r.code, r.body)
	}
}

// TestArtifactsBadPaths: a node id outside the id pattern, or an artifact
// path that is not a valid local path, is a 400 before any file is read.
func TestArtifactsBadPaths(t *testing.T) {
	s := start(t, Options{Root: fixture(t)})
	wantError(t, get(t, s.url+"/api/nodes/-x/artifacts"), 400, "bad_node")
	wantError(t, get(t, s.url+"/api/nodes/-x/artifacts/a.txt"), 400, "bad_artifact")
	wantError(t, get(t, s.url+"/api/nodes/a/artifacts/x%2F..%2F..%2Fy"), 400, "bad_artifact")
}
