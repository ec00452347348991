package evidence

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
	"strings"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// GoSeedEnv names the directory of the Go seeds, overriding the default
// (<user cache directory>/treeloop/go-std).
const GoSeedEnv = "RUNNER_GO_SEED_DIR"

// GoSeedRoot is the directory that holds a seed per Go toolchain:
// $RUNNER_GO_SEED_DIR, else go-std in treeloop's directory of the user's
// cache directory (os.UserCacheDir). Errors: neither is set.
func GoSeedRoot() (string, error) {
	if d := os.Getenv(GoSeedEnv); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "treeloop", "go-std"), nil
}

// SeedBuildMargin is the least time a context must leave for SeedGo to
// build a seed (about a minute of both cores' time on a small machine):
// with less, the guard's own run, which compiles only the packages it
// needs, would be left too little of the iteration's budget.
const SeedBuildMargin = 10 * time.Minute

// errNoTime: the context leaves too little time to build a seed.
var errNoTime = errors.New("too little time left to build a seed")

// SeedGo starts an empty private Go build cache from a seed: Go's
// standard library compiled by the runner (go build std, in an empty
// directory, with env but GOCACHE), outside every session, once per
// toolchain (GOVERSION, GOROOT, GOOS, GOARCH, GOFLAGS, CGO_ENABLED and
// GOEXPERIMENT as env makes them), in root/<key>. A cold cache costs a
// small module's first guard ~20 CPU seconds for the standard library
// alone; copied from the seed, one or two. The seed is copied, never
// linked: a test the guard runs may write its own cache, never the seed.
// Under what sandbox a seed may be trusted is the caller's to decide
// (DESIGN.md decision 25: only what no session can write reaches the
// guard). building, when not nil, is called before a seed is built (the
// long part), which happens only when ctx leaves SeedBuildMargin. It
// returns whether the cache was seeded: not when it holds anything
// already, go is not on env's PATH, or there is no seed and no time to
// build one. Errors: the seed cannot be built or copied (the cache is
// left empty).
func (c Caches) SeedGo(ctx context.Context, env []string, root string, building func(dir string)) (bool, error) {
	cache := filepath.Join(c.Root, "go-build")
	if ents, err := os.ReadDir(cache); err != nil || len(ents) > 0 {
		return false, err
	}
	goBin, err := lookPath("go", env)
	if err != nil {
		return false, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return false, fmt.Errorf("the Go seed's directory: %w", err)
	}
	work, err := os.MkdirTemp(root, "work-")
	if err != nil {
		return false, fmt.Errorf("the Go seed's directory: %w", err)
	}
	defer os.RemoveAll(work)
	out, err := goCmd(ctx, goBin, work, env, "", "env", "GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT").Output()
	if err != nil {
		return false, fmt.Errorf("go env: %w", err)
	}
	sum := sha256.Sum256(out)
	seed := filepath.Join(root, hex.EncodeToString(sum[:12]))
	if err := ensureSeed(ctx, goBin, work, env, seed, building); err != nil {
		if errors.Is(err, errNoTime) {
			return false, nil
		}
		return false, err
	}
	if err := copyTree(seed, cache); err != nil {
		_ = os.RemoveAll(cache)
		_ = os.MkdirAll(cache, 0o755)
		return false, fmt.Errorf("copy the Go seed %s: %w", seed, err)
	}
	return true, nil
}

// ensureSeed builds the seed dir unless it exists, under a lock that
// makes a second runner wait for the first one's build; the seed appears
// whole (renamed into place) or not at all.
func ensureSeed(ctx context.Context, goBin, work string, env []string, seed string, building func(string)) error {
	if _, err := os.Stat(seed); err == nil {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < SeedBuildMargin {
		return errNoTime
	}
	unlock, err := lockFile(ctx, seed+".lock")
	if err != nil {
		return fmt.Errorf("lock the Go seed: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(seed); err == nil {
		return nil
	}
	// What a build stopped midway left behind.
	old, _ := filepath.Glob(seed + ".tmp-*")
	for _, o := range old {
		_ = wipeDir(o)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(seed), filepath.Base(seed)+".tmp-")
	if err != nil {
		return fmt.Errorf("the Go seed's directory: %w", err)
	}
	if building != nil {
		building(seed)
	}
	cmd := goCmd(ctx, goBin, work, env, tmp, "build", "std")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		_ = wipeDir(tmp)
		return fmt.Errorf("go build std for the Go seed: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, seed); err != nil {
		_ = wipeDir(tmp)
		return fmt.Errorf("the Go seed's directory: %w", err)
	}
	return nil
}

// goCmd is go with args in dir, with env, outside any workspace, with
// GOCACHE set to cache when it is not "".
func goCmd(ctx context.Context, goBin, dir string, env []string, cache string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(env, "GOWORK=off", "PWD="+dir)
	if cache != "" {
		cmd.Env = append(cmd.Env, "GOCACHE="+cache)
	}
	return cmd
}

// lookPath is exec.LookPath of name on env's PATH.
func lookPath(name string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// lockFile takes an exclusive flock on path, waiting until it is free or
// ctx ends. The returned func releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		// Another runner builds the seed: a flock has no event to wait
		// on that a context can end, so look again shortly.
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// wipeDir removes a Go build cache directory (its files read-only).
func wipeDir(dir string) error { return Caches{Root: dir}.Wipe() }

// copyTree copies the regular files and directories under src into dst
// (which exists), keeping their modes; anything else is left out.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case info.Mode().IsRegular():
			return fsutil.CopyFile(p, to, info.Mode().Perm()|0o200)
		}
		return nil
	})
}
