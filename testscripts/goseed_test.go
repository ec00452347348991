package testscripts

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/treeloop/treeloop/lib/evidence"
)

// goSeedDir is where the scripts' guards find the Go seed
// (RUNNER_GO_SEED_DIR): the seed directory of the user running the tests,
// shared by the scripts and kept between runs as a user's runs share
// theirs (the host's GOCACHE is shared alike); "" when there is none.
// A script about the seed itself names a directory of its own.
var goSeedDir = sync.OnceValue(func() string {
	d, err := evidence.GoSeedRoot()
	if err != nil {
		return ""
	}
	return d
})

// prebuildGoSeed compiles the seed for the toolchain on PATH, in the
// background, once per run of the ci tier: a script's guard that needs it
// meanwhile waits for it under its lock, and no script builds it itself
// (saying so on its stderr, which some scripts compare whole). The
// environment is what a script's guard has where it matters to the seed's
// key: PATH, and a home of its own (no go env file). Ended with the tests.
func prebuildGoSeed(t *testing.T) {
	dir := goSeedDir()
	if dir == "" {
		return
	}
	home := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		c := evidence.Caches{Root: filepath.Join(home, "caches")}
		if err := os.MkdirAll(filepath.Join(c.Root, "go-build"), 0o755); err != nil {
			return
		}
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
		if _, err := c.SeedGo(ctx, env, dir, nil); err != nil && ctx.Err() == nil {
			t.Logf("the Go seed: %v (the scripts' guards build it themselves)", err)
		}
		c.Wipe()
	}()
}
