package artifacts

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
)

// artifactRepo is a repository whose base commit holds node a's
// artifacts report.md (6 bytes) and sub/b.txt (1 byte), and tools.json
// beside them (no artifact).
func artifactRepo(t *testing.T) (string, *git.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	write(t, dir, layout.NodeArtifacts("a")+"/report.md", "report")
	write(t, dir, layout.NodeArtifacts("a")+"/sub/b.txt", "b")
	write(t, dir, layout.NodeTools("a"), "{}")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "base")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, repo, gittest.Run(t, dir, "rev-parse", "HEAD")
}

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestList: a node's artifacts sorted by name with their sizes and
// total; none for a node without the directory; a link among them an
// error naming it.
func TestList(t *testing.T) {
	dir, _, _ := artifactRepo(t)
	files, total, err := List(dir, "a")
	if err != nil || total != 7 || !slices.Equal(files, []File{{"report.md", 6}, {"sub/b.txt", 1}}) {
		t.Errorf("List(a) = %v, %d, %v", files, total, err)
	}
	if files, total, err := List(dir, "b"); err != nil || files != nil || total != 0 {
		t.Errorf("List(b) = %v, %d, %v; want none", files, total, err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, filepath.FromSlash(layout.NodeArtifacts("a")), "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := List(dir, "a"); err == nil || !strings.Contains(err.Error(), layout.NodeArtifacts("a")+"/link is not a regular file") {
		t.Errorf("a link listed: %v", err)
	}
}

// TestEnforce: after a session, a node's artifacts directory at the limit
// stays; one past it, or holding a link, goes back to the base's (a
// directory the base did not have is removed), with a reason each; no
// nodes directory is nothing to check.
func TestEnforce(t *testing.T) {
	dir, repo, base := artifactRepo(t)
	if reasons, err := Enforce(repo, base, 7); err != nil || len(reasons) != 0 {
		t.Fatalf("at the limit: %q, %v", reasons, err)
	}
	write(t, dir, layout.NodeArtifacts("a")+"/big.bin", "xx")
	write(t, dir, layout.NodeArtifacts("a")+"/report.md", "rewritten")
	write(t, dir, layout.NodeArtifacts("c")+"/ok.txt", "ok")
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(layout.NodeArtifacts("d"))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, filepath.FromSlash(layout.NodeArtifacts("d")), "l")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, dir, "add", "-A")
	reasons, err := Enforce(repo, base, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 2 || !strings.Contains(reasons[0], layout.NodeArtifacts("a")+" over its limit (it holds 12 bytes, more than artifacts_limit_bytes=7)") || !strings.Contains(reasons[1], layout.NodeArtifacts("d")+" over its limit (") {
		t.Errorf("reasons %q", reasons)
	}
	if files, _, err := List(dir, "a"); err != nil || !slices.Equal(files, []File{{"report.md", 6}, {"sub/b.txt", 1}}) {
		t.Errorf("a after: %v, %v; want the base's", files, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(layout.NodeArtifacts("d")))); !os.IsNotExist(err) {
		t.Errorf("d's directory, new, is still there: %v", err)
	}
	if files, _, _ := List(dir, "c"); len(files) != 1 {
		t.Errorf("c, within its limit, changed: %v", files)
	}
	if out := gittest.Run(t, dir, "diff", "--cached", "--name-only", base, "--", layout.NodeArtifacts("a"), layout.NodeArtifacts("d")); out != "" {
		t.Errorf("the index still holds what was put back: %q", out)
	}
	empty := t.TempDir()
	gittest.Run(t, empty, "init", "-q")
	r, _ := git.Open(empty)
	if reasons, err := Enforce(r, "HEAD", 1); err != nil || reasons != nil {
		t.Errorf("no nodes directory: %q, %v", reasons, err)
	}
}

// TestAtCommit: the artifacts each node holds in a commit, from git
// alone: a node's other files are no artifacts, the work tree is not
// read.
func TestAtCommit(t *testing.T) {
	dir, repo, base := artifactRepo(t)
	write(t, dir, layout.NodeArtifacts("a")+"/later.txt", "not committed")
	got, err := AtCommit(repo, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got["a"], []File{{"report.md", 6}, {"sub/b.txt", 1}}) {
		t.Errorf("AtCommit = %v", got)
	}
	if _, err := AtCommit(repo, "no-such-commit"); err == nil {
		t.Error("a commit that is not there read")
	}
}
