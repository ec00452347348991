package testscripts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The JavaScript test runners the scripts run (vitest, jest, mocha) are
// pinned in testscripts/node (package.json and its package-lock.json, the
// one place to bump them). nodemodules installs them once per version set
// (`npm ci`) into a cache under /var/tmp, which the bubblewrap sandbox
// does not hide, named by the lock file's digest: every script of a test
// run, and every later run on the same machine, shares that install; a
// file lock makes parallel scripts (and test binaries) wait for the one
// that installs. CI starts with no cache, so its first script pays the
// install. npm must reach its registry: without it the scripts that need
// the runners fail, they are not skipped.

// nodeInstallTimeout bounds the install.
const nodeInstallTimeout = 15 * time.Minute

// nodeCache is the cache's node_modules directory, installed on first use.
var nodeCache = sync.OnceValues(func() (string, error) {
	src := filepath.Join(repoRoot(), "testscripts", "node")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join("/var/tmp", "treeloop-node-"+hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return modules, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(done); err == nil {
		return modules, nil // another process installed it meanwhile
	}
	if err := installNode(src, dir); err != nil {
		return "", err
	}
	return modules, os.WriteFile(done, lock, 0o644)
})

// installNode runs `npm ci` for src's package files in a fresh directory
// beside dir and moves its node_modules into dir.
func installNode(src, dir string) error {
	work, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, n := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, n), data, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeInstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci (the JavaScript test runners of testscripts/node): %v: %s", err, out)
	}
	os.RemoveAll(filepath.Join(dir, "node_modules"))
	return os.Rename(filepath.Join(work, "node_modules"), filepath.Join(dir, "node_modules"))
}

// nodemodules DIR gives the repository DIR a node_modules directory of
// its own holding the pinned runners: a link to each package of the
// shared install, and .bin's links (relative, so they lead through
// those), as an installed project has them. Its own directory, so what a
// run writes there (vitest's .vite cache) stays the script's.
func nodemodules(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: nodemodules DIR")
	}
	cache, err := nodeCache()
	if err != nil {
		ts.Fatalf("nodemodules: %v", err)
	}
	dst := filepath.Join(ts.MkAbs(args[0]), "node_modules")
	ents, err := os.ReadDir(cache)
	if err != nil {
		ts.Fatalf("nodemodules: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dst, ".bin"), 0o755); err != nil {
		ts.Fatalf("nodemodules: %v", err)
	}
	for _, e := range ents {
		switch e.Name() {
		case ".bin":
			ts.Check(copyLinks(filepath.Join(cache, ".bin"), filepath.Join(dst, ".bin")))
		case ".package-lock.json", ".vite", ".cache":
		default:
			ts.Check(os.Symlink(filepath.Join(cache, e.Name()), filepath.Join(dst, e.Name())))
		}
	}
}

// copyLinks makes in dst a copy of each symbolic link of src.
func copyLinks(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return errors.New(p + ": not a symbolic link")
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		return os.Symlink(target, filepath.Join(dst, d.Name()))
	})
}
