package testscripts

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// checkoutFiles are the checkout's files as a clone of it with the
// current changes would hold them: tracked and untracked, not ignored,
// relative paths with slashes.
func checkoutFiles() ([]string, error) {
	out, err := exec.Command("git", "-C", repoRoot(), "ls-files", "-z", "-co", "--exclude-standard").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(repoRoot(), f)); err == nil { // deleted, not yet staged
			files = append(files, f)
		}
	}
	return files, nil
}

// checkoutCmd is the testscript command `checkout DIR`: a copy of the
// treeloop checkout in DIR (checkoutFiles, modes and symlinks kept), for
// a recipe (README, docs/) that runs from a checkout and writes into it (just
// build's bin/, eval/results).
func checkoutCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: checkout DIR")
	}
	files, err := checkoutFiles()
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	for _, f := range files {
		src, dst := filepath.Join(repoRoot(), f), filepath.Join(dir, f)
		ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
		st, err := os.Lstat(src)
		ts.Check(err)
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			ts.Check(err)
			ts.Check(os.Symlink(target, dst))
			continue
		}
		data, err := os.ReadFile(src)
		ts.Check(err)
		ts.Check(os.WriteFile(dst, data, st.Mode().Perm()))
	}
}

// modproxyCmd is the testscript command `modproxy DIR VERSION`: a Go
// module proxy in DIR (the GOPROXY=file:// layout) that serves the
// checkout as github.com/treeloop/treeloop at VERSION, its only and latest
// version, so that `go install github.com/treeloop/treeloop/cmd/...@latest`
// runs as README has it, offline.
func modproxyCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: modproxy DIR VERSION")
	}
	const mod = "github.com/treeloop/treeloop"
	version := args[1]
	files, err := checkoutFiles()
	ts.Check(err)
	// A directory with a go.mod of its own is another module (a fixture):
	// the go command leaves it out of the module's zip.
	var nested []string
	for _, f := range files {
		if d := filepath.Dir(f); filepath.Base(f) == "go.mod" && d != "." {
			nested = append(nested, d+"/")
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		if slices.ContainsFunc(nested, func(d string) bool { return strings.HasPrefix(f, d) }) {
			continue
		}
		st, err := os.Lstat(filepath.Join(repoRoot(), f))
		ts.Check(err)
		if !st.Mode().IsRegular() {
			continue // a module zip holds regular files only
		}
		w, err := zw.Create(mod + "@" + version + "/" + f)
		ts.Check(err)
		src, err := os.Open(filepath.Join(repoRoot(), f))
		ts.Check(err)
		_, err = io.Copy(w, src)
		src.Close()
		ts.Check(err)
	}
	ts.Check(zw.Close())
	gomod, err := os.ReadFile(filepath.Join(repoRoot(), "go.mod"))
	ts.Check(err)
	at := filepath.Join(ts.MkAbs(args[0]), mod, "@v")
	ts.Check(os.MkdirAll(at, 0o755))
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(fmt.Sprintf(`{"Version":%q,"Time":"2026-01-02T03:04:05Z"}`, version)),
		version + ".mod":  gomod,
		version + ".zip":  buf.Bytes(),
		"../@latest":      []byte(fmt.Sprintf(`{"Version":%q,"Time":"2026-01-02T03:04:05Z"}`, version)),
	} {
		ts.Check(os.WriteFile(filepath.Join(at, name), data, 0o644))
	}
}
