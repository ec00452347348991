package git

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunCommitsSince holds the one git log to the two it replaces, git
// merge-base --is-ancestor and RunCommits of the range, for every pair of
// commits of a random history with branches and merges, and for a commit
// the repository does not have.
func TestRunCommitsSince(t *testing.T) {
	r := newRepo(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var shas []string
	for i := range 14 {
		if i > 2 && rng.IntN(4) == 0 {
			// A side branch from an earlier commit, merged back or left.
			base := shas[rng.IntN(len(shas))]
			if _, err := r.Run("checkout", "-q", "-b", fmt.Sprintf("b%d", i), base); err != nil {
				t.Fatal(err)
			}
			write(t, r, fmt.Sprintf("side%d", i), "x")
			shas = append(shas, commitAll(t, r, fmt.Sprintf("chore(loop): run r iter %d node n%d status=done guard=pass", i+100, i)))
			if _, err := r.Run("checkout", "-q", "main"); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				if _, err := r.Run("merge", "-q", "--no-ff", "-m", "merge", fmt.Sprintf("b%d", i)); err != nil {
					t.Fatal(err)
				}
				head, _ := r.Run("rev-parse", "HEAD")
				shas = append(shas, string(head[:len(head)-1]))
			}
			continue
		}
		write(t, r, fmt.Sprintf("f%d", i), "x")
		shas = append(shas, commitAll(t, r, fmt.Sprintf("chore(loop): run r iter %d node n%d status=done guard=pass", i+1, i)))
	}
	for _, from := range shas {
		for _, to := range shas {
			if from == to {
				continue
			}
			_, err := r.Run("merge-base", "--is-ancestor", from, to)
			wantOK := err == nil
			want, err := r.RunCommits(from+".."+to, "r", "")
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.RunCommitsSince(from, to, "r")
			if ok != wantOK {
				t.Fatalf("%.7s..%.7s: ancestor %v, git merge-base says %v", from, to, ok, wantOK)
			}
			if !slices.EqualFunc(got, want, func(a, b RunCommit) bool { return a.SHA == b.SHA && a.Subject == b.Subject }) {
				t.Fatalf("%.7s..%.7s: %v, git log of the range gives %v", from, to, got, want)
			}
		}
	}
	if _, ok := r.RunCommitsSince("0123456789012345678901234567890123456789", shas[0], "r"); ok {
		t.Fatal("a commit the repository does not have is an ancestor")
	}
}

// TestDifferentialIgnored holds Ignored (ls-files, no index refresh) to
// the ignored paths of a git status --ignored=matching, sorted, over
// random work trees: tracked and untracked files, ignored by file
// patterns, directory patterns and negations, at every depth, with
// directories wholly ignored, partly and not at all.
func TestDifferentialIgnored(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "b", "build", "node_modules", "__pycache__", "x.pyc", "y.log", "keep.txt", "out", "z.o"}
	rules := []string{"*.pyc", "build/", "node_modules", "__pycache__/", "*.log", "out", "!keep.txt", "b/*.o", "/a/y.log", "**/out/"}
	for trial := range 40 {
		r := newRepo(t)
		var ignore []string
		for _, rule := range rules {
			if rng.IntN(2) == 0 {
				ignore = append(ignore, rule)
			}
		}
		write(t, r, ".gitignore", strings.Join(ignore, "\n")+"\n")
		var tracked []string
		for range 12 + rng.IntN(20) {
			depth := 1 + rng.IntN(4)
			parts := make([]string, depth)
			for i := range parts {
				parts[i] = names[rng.IntN(len(names))]
			}
			p := strings.Join(parts, "/")
			if os.MkdirAll(filepath.Join(r.Root(), filepath.Dir(p)), 0o755) != nil {
				continue // a file where a directory would go
			}
			if os.WriteFile(filepath.Join(r.Root(), p), []byte(p), 0o644) != nil {
				continue // a directory where the file would go
			}
			if rng.IntN(3) == 0 {
				tracked = append(tracked, p)
			}
		}
		if len(tracked) > 0 {
			if _, err := r.Run(append([]string{"add", "-f", "--"}, tracked...)...); err != nil {
				t.Fatal(err)
			}
		}
		st, err := r.status(true, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(st.Ignored)
		slices.Sort(want)
		got, err := r.Ignored()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (.gitignore %q, tracked %q):\nIgnored %q\nstatus  %q", trial, ignore, tracked, got, want)
		}
		for _, scope := range [][]string{{"a"}, {"b", "build"}} {
			st, err := r.status(true, scope)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(st.Ignored)
			slices.Sort(want)
			got, err := r.Ignored(scope...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trial %d, scope %q (.gitignore %q):\nIgnored %q\nstatus  %q", trial, scope, ignore, got, want)
			}
		}
	}
}
