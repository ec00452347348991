package session

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/seal"
	"github.com/treeloop/treeloop/lib/seal/sealtest"
)

// benchRun is a repository whose run run-b has n iterations logged, shaped
// like a run's (sealtest.WriteRun), the last one the current iteration; the earlier ones
// are settled and indexed by one seal. It returns the repository and the
// current iteration's directory.
func benchRun(b *testing.B, n int) (*git.Repo, string) {
	b.Helper()
	dir := b.TempDir()
	gitIn(b, dir, "init", "-q", "-b", "runner/b")
	repo, err := git.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	run := filepath.Join(dir, filepath.FromSlash(layout.Iterations), "run-b")
	if err := sealtest.WriteRun(run, n); err != nil {
		b.Fatal(err)
	}
	time.Sleep(seal.RacyWindow + 10*time.Millisecond)
	iter := filepath.Join(run, fmt.Sprintf("%04d", n))
	if _, err := sealRun(repo, iter, Confinement{}); err != nil { // index the earlier iterations
		b.Fatal(err)
	}
	return repo, iter
}

// sealRun seals the run's logs as Seal and Hold do for a session confined
// by c.
func sealRun(repo *git.Repo, iter string, c Confinement) (*iterLogs, error) {
	l, err := sealLogs(repo, "run-b", iter, "output.json")
	if err != nil {
		return nil, err
	}
	return l, l.reach(repo, "run-b", iter, c)
}

// BenchmarkSealLogs is one session's seal of the run's iteration logs
// (taken before the session, checked and put back after it, nothing
// changed) as the run grows: unconfined, the earlier iterations are
// checked by the seal index; confined by bwrap, they are out of the
// session's reach and only the current iteration is sealed.
func BenchmarkSealLogs(b *testing.B) {
	bwrap := config.Default().Sandbox
	bwrap.Mode = config.SandboxBwrap
	for _, n := range []int{10, 100, 1000} {
		repo, iter := benchRun(b, n)
		for _, c := range []struct {
			name string
			c    Confinement
		}{
			{"unconfined", Confinement{}},
			{"bwrap", Confinement{Sandbox: bwrap, Root: repo.Root(), Writable: []string{filepath.Join(iter, "output.json")}}},
		} {
			b.Run(fmt.Sprintf("%s/iterations=%d", c.name, n), func(b *testing.B) {
				for b.Loop() {
					l, err := sealRun(repo, iter, c.c)
					if err != nil {
						b.Fatal(err)
					}
					if reasons, err := l.Restore("the agent"); err != nil || len(reasons) > 0 {
						b.Fatal(reasons, err)
					}
				}
			})
		}
	}
}
