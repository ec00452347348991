package evidence

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// standInGo writes a go for SeedGo's tests into a directory of its own and
// returns the environment that finds it: `go env` prints the variables
// (GOFLAGS as the environment has it), `go build std` writes two cache
// files into $GOCACHE and counts its runs in builds.log, failing when
// $FAIL_BUILD is set. The real toolchain's seed (go build std, ~60 CPU s)
// is built once by the script suite, whose Go guards then start from it.
func standInGo(t *testing.T) (env []string, builds string) {
	t.Helper()
	dir := t.TempDir()
	builds = filepath.Join(dir, "builds.log")
	script := `#!/bin/sh
case "$1" in
env) printf 'go1.99\n/goroot\nlinux\namd64\n%s\n1\n\n' "$GOFLAGS" ;;
build)
  echo "$*" >> ` + builds + `
  [ -z "$FAIL_BUILD" ] || { echo "build failed" >&2; exit 1; }
  mkdir -p "$GOCACHE/ab" && echo object > "$GOCACHE/ab/abcd-d" && echo README > "$GOCACHE/README" ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + ":/usr/bin:/bin"}, builds
}

func emptyCache(t *testing.T) Caches {
	t.Helper()
	c := Caches{Root: t.TempDir()}
	if err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSeedGoBuildsOnceCopies(t *testing.T) {
	env, builds := standInGo(t)
	root := t.TempDir()
	var said []string
	building := func(dir string) { said = append(said, dir) }
	for i := range 2 {
		c := emptyCache(t)
		seeded, err := c.SeedGo(context.Background(), env, root, building)
		if err != nil || !seeded {
			t.Fatalf("run %d: seeded=%v err=%v", i, seeded, err)
		}
		got, err := os.ReadFile(filepath.Join(c.Root, "go-build", "ab", "abcd-d"))
		if err != nil || string(got) != "object\n" {
			t.Fatalf("run %d: the seeded cache's object: %q %v", i, got, err)
		}
		// A copy, not a link: the guard's tests may write their cache.
		var a, b syscall.Stat_t
		syscall.Stat(filepath.Join(c.Root, "go-build", "ab", "abcd-d"), &a)
		syscall.Stat(filepath.Join(said[0], "ab", "abcd-d"), &b)
		if a.Ino == b.Ino {
			t.Fatalf("run %d: the cache's file is the seed's (inode %d)", i, a.Ino)
		}
	}
	log, _ := os.ReadFile(builds)
	if string(log) != "build std\n" || len(said) != 1 {
		t.Fatalf("go build std ran %q, said %q: want once", log, said)
	}
	if !strings.HasPrefix(said[0], root+string(filepath.Separator)) {
		t.Fatalf("seed %s not under %s", said[0], root)
	}
	// Another toolchain configuration (GOFLAGS) is another seed.
	c := emptyCache(t)
	if seeded, err := c.SeedGo(context.Background(), append(env, "GOFLAGS=-trimpath"), root, building); err != nil || !seeded {
		t.Fatalf("GOFLAGS=-trimpath: seeded=%v err=%v", seeded, err)
	}
	if len(said) != 2 || said[1] == said[0] {
		t.Fatalf("GOFLAGS=-trimpath used the seed of no GOFLAGS: %q", said)
	}
}

func TestSeedGoLeavesAlone(t *testing.T) {
	env, builds := standInGo(t)
	root := t.TempDir()
	// A cache that holds anything is the guard's own.
	c := emptyCache(t)
	os.WriteFile(filepath.Join(c.Root, "go-build", "README"), []byte("x"), 0o644)
	if seeded, err := c.SeedGo(context.Background(), env, root, nil); err != nil || seeded {
		t.Fatalf("a cache with a file: seeded=%v err=%v", seeded, err)
	}
	// No go on PATH: nothing to seed, no error.
	c = emptyCache(t)
	if seeded, err := c.SeedGo(context.Background(), []string{"PATH=" + t.TempDir()}, root, nil); err != nil || seeded {
		t.Fatalf("no go: seeded=%v err=%v", seeded, err)
	}
	if _, err := os.Stat(builds); !os.IsNotExist(err) {
		t.Fatalf("go build ran: %v", err)
	}
}

func TestSeedGoFailedBuild(t *testing.T) {
	env, builds := standInGo(t)
	root := t.TempDir()
	c := emptyCache(t)
	seeded, err := c.SeedGo(context.Background(), append(env, "FAIL_BUILD=1"), root, nil)
	if err == nil || seeded || !strings.Contains(err.Error(), "build failed") {
		t.Fatalf("a failed build: seeded=%v err=%v", seeded, err)
	}
	ents, _ := os.ReadDir(filepath.Join(c.Root, "go-build"))
	if len(ents) != 0 {
		t.Fatalf("the cache is not empty after a failed build: %v", ents)
	}
	// Nothing half-built is left for the next one to take; a build
	// stopped midway (its .tmp- directory) is cleared by the next.
	left, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, p := range left {
		if !strings.HasSuffix(p, ".lock") {
			t.Fatalf("left behind: %s", p)
		}
	}
	stale := strings.TrimSuffix(left[0], ".lock") + ".tmp-123"
	os.MkdirAll(filepath.Join(stale, "ab"), 0o755)
	if seeded, err := c.SeedGo(context.Background(), env, root, nil); err != nil || !seeded {
		t.Fatalf("after the failure: seeded=%v err=%v", seeded, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stopped build's directory is still there: %v", err)
	}
	if log, _ := os.ReadFile(builds); strings.Count(string(log), "build std") != 2 {
		t.Fatalf("builds: %q", log)
	}
}

// TestSeedGoWaitsForLock: a second runner waits for the lock the first
// holds while it builds, then takes the seed the first built; a wait for
// a lock ends with its context.
func TestSeedGoWaitsForLock(t *testing.T) {
	env, builds := standInGo(t)
	root := t.TempDir()
	// Learn the seed's name from a first build, then take it away.
	var seed string
	if _, err := emptyCache(t).SeedGo(context.Background(), env, root, func(d string) { seed = d }); err != nil {
		t.Fatal(err)
	}
	if err := wipeDir(seed); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFile(context.Background(), seed+".lock")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lockFile(ctx, seed+".lock"); err == nil {
		t.Fatal("a held lock was taken")
	}
	c := emptyCache(t)
	done := make(chan error)
	go func() {
		_, err := c.SeedGo(context.Background(), env, root, nil)
		done <- err
	}()
	// The first runner's build, under the lock, appearing whole (renamed
	// into place) as ensureSeed's does: the second runner, which may look
	// for the seed before it waits for the lock, never sees half of it.
	tmp := seed + ".tmp-first"
	if err := os.MkdirAll(filepath.Join(tmp, "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "ab", "abcd-d"), []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, seed); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(c.Root, "go-build", "ab", "abcd-d")); string(got) != "first\n" {
		t.Fatalf("the second runner's cache: %q, want the first runner's seed", got)
	}
	if log, _ := os.ReadFile(builds); strings.Count(string(log), "build std") != 1 {
		t.Fatalf("builds: %q", log)
	}
}

func TestGoSeedRoot(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv(GoSeedEnv, "")
	if got, err := GoSeedRoot(); err != nil || got != filepath.Join(cache, "treeloop", "go-std") {
		t.Fatalf("the default: %q %v", got, err)
	}
	t.Chdir(cache)
	t.Setenv(GoSeedEnv, "seeds")
	if got, err := GoSeedRoot(); err != nil || got != filepath.Join(cache, "seeds") {
		t.Fatalf("%s=seeds: %q %v (want it absolute)", GoSeedEnv, got, err)
	}
	t.Setenv(GoSeedEnv, "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if got, err := GoSeedRoot(); err == nil {
		t.Fatalf("no cache directory: %q", got)
	}
}

// TestSeedGoNoTime: with less than SeedBuildMargin left, no seed is built
// (the guard compiles what it needs itself); one that exists is copied.
func TestSeedGoNoTime(t *testing.T) {
	env, builds := standInGo(t)
	root := t.TempDir()
	short, cancel := context.WithTimeout(context.Background(), SeedBuildMargin-time.Minute)
	defer cancel()
	if seeded, err := emptyCache(t).SeedGo(short, env, root, nil); err != nil || seeded {
		t.Fatalf("too little time: seeded=%v err=%v", seeded, err)
	}
	if _, err := os.Stat(builds); !os.IsNotExist(err) {
		t.Fatalf("a seed was built with too little time: %v", err)
	}
	long, cancel := context.WithTimeout(context.Background(), SeedBuildMargin+time.Minute)
	defer cancel()
	if seeded, err := emptyCache(t).SeedGo(long, env, root, nil); err != nil || !seeded {
		t.Fatalf("time enough: seeded=%v err=%v", seeded, err)
	}
	if seeded, err := emptyCache(t).SeedGo(short, env, root, nil); err != nil || !seeded {
		t.Fatalf("a seed that exists, little time: seeded=%v err=%v", seeded, err)
	}
}
