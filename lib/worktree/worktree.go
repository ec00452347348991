// Package worktree manages the git worktrees runs work in
// ("Worktree runs"; seed 004 "Sandbox checkout"; DESIGN.md decision 19):
// runner-start --worktree creates one per run on runner/<id>, by default
// under .runner/worktrees/<id> (ignored), so the user's checkout and branch
// stay untouched and several runs of one repository can work at once, each
// with its own .runner/ (lock, iterations, run records). runner-worktree
// lists them and removes one, refusing uncommitted changes or a running
// runner, and keeping the branch.
package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
)

// Worktree is one run's worktree.
type Worktree struct {
	RunID  string `json:"run_id"`
	Branch string `json:"branch"` // runner/<id>
	Path   string `json:"path"`   // absolute
	Head   string `json:"head"`
	// Dirty: uncommitted changes (untracked files included).
	Dirty bool `json:"dirty"`
	// Running: a runner holds the worktree's .runner/lock.
	Running bool `json:"running"`
}

// List returns the worktrees of repo's repository that are on a run branch
// (runner/<id>), in git's order (the main checkout first), without Dirty
// and Running (see Inspect). The main checkout itself is listed only when
// it is on a run branch.
func List(repo *git.Repo) ([]Worktree, error) {
	out, err := repo.Run("worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	var ws []Worktree
	for _, block := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
		var w Worktree
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, " ")
			switch k {
			case "worktree":
				w.Path = v
			case "HEAD":
				w.Head = v
			case "branch":
				w.Branch = strings.TrimPrefix(v, "refs/heads/")
			}
		}
		id, ok := strings.CutPrefix(w.Branch, layout.BranchPrefix)
		if !ok || w.Path == "" {
			continue
		}
		w.RunID = id
		ws = append(ws, w)
	}
	return ws, nil
}

// Inspect fills in w's Dirty and Running (a git status in the worktree).
// A worktree whose directory is gone is neither.
func Inspect(w *Worktree) error {
	if _, err := os.Stat(w.Path); err != nil {
		return nil
	}
	wr, err := git.Open(w.Path)
	if err != nil {
		return err
	}
	st, err := wr.StatusPorcelain()
	if err != nil {
		return err
	}
	w.Dirty = len(st) > 0
	w.Running = Locked(filepath.Join(w.Path, filepath.FromSlash(layout.Lock)))
	return nil
}

// Locked reports whether a runner holds the lock file at path (runner-step
// and runner-loop hold it with flock for as long as they run).
func Locked(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Find returns the run worktree named by which: a run id or a path.
func Find(repo *git.Repo, which string) (Worktree, error) {
	ws, err := List(repo)
	if err != nil {
		return Worktree{}, err
	}
	abs, _ := filepath.Abs(which)
	for _, w := range ws {
		if w.RunID == which || w.Path == abs {
			return w, nil
		}
	}
	return Worktree{}, fmt.Errorf("no run worktree %q (runner-worktree list shows them)", which)
}

// Remove removes w's worktree, keeping its branch. It refuses a worktree
// with uncommitted changes (seed 004) or one a runner is working in, and
// the main checkout.
func Remove(repo *git.Repo, w Worktree) error {
	main, err := mainCheckout(repo)
	if err != nil {
		return err
	}
	if err := Inspect(&w); err != nil {
		return err
	}
	switch {
	case w.Path == main:
		return fmt.Errorf("%s is the repository's main checkout, not a run worktree", w.Path)
	case w.Running:
		return fmt.Errorf("a runner is working in %s (run %s): stop it first (runner-cancel -C %s)", w.Path, w.RunID, w.Path)
	case w.Dirty:
		return fmt.Errorf("%s has uncommitted changes: commit or discard them first (the branch %s keeps what is committed)", w.Path, w.Branch)
	}
	if _, err := repo.Run("worktree", "remove", w.Path); err != nil {
		return err
	}
	return nil
}

// mainCheckout is the repository's main working tree.
func mainCheckout(repo *git.Repo) (string, error) {
	out, err := repo.Run("worktree", "list", "--porcelain")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimPrefix(first, "worktree "), nil
}

// Add creates the worktree of run runID at dir on its branch runner/<id>:
// the existing branch, or a new one from the checkout's HEAD. A dir inside
// the checkout must be ignored by git (runner-init's .runner/.gitignore
// ignores worktrees/), or the checkout would show it as untracked.
func Add(repo *git.Repo, runID, dir string) error {
	if rel, err := filepath.Rel(repo.Root(), dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if _, err := repo.Run("check-ignore", "-q", "--no-index", rel+"/"); err != nil {
			return fmt.Errorf("%s is inside the checkout but not ignored by git: add worktrees/ to %s (runner-init does) or give a directory outside", rel, layout.Gitignore)
		}
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	}
	branch := layout.BranchPrefix + runID
	exists, err := repo.BranchExists(branch)
	if err != nil {
		return err
	}
	if exists {
		_, err = repo.Run("worktree", "add", "-q", dir, branch)
	} else {
		_, err = repo.Run("worktree", "add", "-q", "-b", branch, dir, "HEAD")
	}
	return err
}
