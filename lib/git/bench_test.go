package git

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchRepo is a repository of n committed files, 50 to a directory
// (src/d<i>/f<j>.go), with git's default settings, on branch main.
func benchRepo(b *testing.B, n int) *Repo {
	b.Helper()
	dir := b.TempDir()
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	b.Setenv("HOME", b.TempDir())
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		b.Setenv(k+"_NAME", "Bench")
		b.Setenv(k+"_EMAIL", "bench@example.com")
	}
	if _, err := run(dir, nil, "init", "-q", "-b", "main"); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("src/d%d/f%d.go", i/50, i%50))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("package d\n\nconst F%d = %d\n", i, i)), 0o644)
	}
	if _, err := run(dir, nil, "add", "-A"); err != nil {
		b.Fatal(err)
	}
	if _, err := run(dir, nil, "-c", "gc.auto=0", "commit", "-q", "-m", "base"); err != nil {
		b.Fatal(err)
	}
	return &Repo{root: dir}
}

// BenchmarkIndexReader: HiddenPaths and TrackedPaths (a scope of one
// directory) by the index reader beside `git ls-files -v` and `git
// ls-files --cached`, the plain path, at 1,000 and 50,000 files.
func BenchmarkIndexReader(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		r := benchRepo(b, n)
		b.Run(fmt.Sprintf("files=%d/hidden/reader", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, ok := r.hiddenInIndex(nil); !ok {
					b.Fatal("the index reader refused")
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/hidden/ls-files", n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := r.hiddenByGit(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/tracked/reader", n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := r.trackedInIndex([]string{"src/d1"}); !ok {
					b.Fatal("the index reader refused")
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/tracked/ls-files", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := r.trackedByGit([]string{"src/d1"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCommit: a commit of one staged change by CommitIndexAs (the
// plumbing commit) beside `git commit` (CommitAs), the plain path, at
// 1,000 and 50,000 files; staging is outside the timing.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		r := benchRepo(b, n)
		// No housekeeping: the loose objects of benchRepo would start a
		// repack at the first commit of either path.
		if _, err := r.Run("config", "gc.auto", "0"); err != nil {
			b.Fatal(err)
		}
		stage := func(i int) {
			b.StopTimer()
			os.WriteFile(filepath.Join(r.Root(), "src/d1/f1.go"), []byte(fmt.Sprint("package d // ", i, "\n")), 0o644)
			if err := r.AddAll(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.Run(fmt.Sprintf("files=%d/CommitIndexAs", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stage(i)
				if _, err := r.CommitIndexAs("loop", fmt.Sprint("plumbing ", i), Staged{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/git-commit", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stage(i)
				if _, err := r.CommitAs("loop", fmt.Sprint("porcelain ", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
