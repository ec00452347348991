package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/proc"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// The step's facts (DESIGN.md decision 20): runner-step sets
// these after `loop-commit check` so that its commands do not ask git
// again for what the step already knows. Every command works without
// them, and none trusts them blindly: Open takes the root only when it is
// the directory asked for and holds a .git; CurrentBranch and HeadCommit
// take branch and HEAD only when .git/HEAD and the branch's loose ref say
// exactly that now (two small file reads), else they ask git. So a stale
// or forged value costs a git process, never a wrong answer. agent-exec
// and guard-run never pass them on to the agent or the guard (Strip).
//
// In a step (Open took the root from RUNNER_STEP_ROOT), HEAD and the
// branch are read from git's files wherever git keeps them the plain way
// (looseHead), before loop-commit check has told them too: the step's
// first commands (tree-validate's audit, an iteration allocated ahead)
// start no rev-parse or symbolic-ref for them. The files are what git
// itself reads; anything else is left to git.
//
// RUNNER_STEP_GIT_DIRS is the repository's git directories (Dirs: common,
// own, hooks; one a line), which runner-enter asks git for in the same
// process as the root, before the step's first command and any session:
// the seals of agent-exec and guard-run and the sandbox's read-only
// directories take them from there. They are taken only in a step, for
// a plain repository (.git a directory, no GIT_DIR or GIT_COMMON_DIR),
// where the common and the own directory must be <root>/.git; the hooks
// directory (core.hooksPath) is the step's answer from its start.
const (
	StepRoot    = "RUNNER_STEP_ROOT"     // the work tree's top-level directory
	StepBranch  = "RUNNER_STEP_BRANCH"   // the run branch's short name
	StepHead    = "RUNNER_STEP_HEAD"     // the commit the step started from
	StepGitDirs = "RUNNER_STEP_GIT_DIRS" // Dirs, one a line
)

// StepVars lists the step's variables, with the porcelain's request that
// its commands hold signals (lib/proc): none is the agent's or the guard's.
var StepVars = []string{StepRoot, StepBranch, StepHead, StepGitDirs, proc.DeferSignalsEnv}

// Env is d as the step's variable (StepGitDirs=...), "" when d is empty
// (OpenDirs could not tell them).
func (d Dirs) Env() string {
	if d == (Dirs{}) {
		return ""
	}
	return StepGitDirs + "=" + d.Common + "\n" + d.Git + "\n" + d.Hooks
}

// stepDirs is StepGitDirs when r is the step's repository, a plain one,
// and the variable names its <root>/.git and an absolute hooks directory.
func (r *Repo) stepDirs() (Dirs, bool) {
	v := os.Getenv(StepGitDirs)
	if !r.step || v == "" {
		return Dirs{}, false
	}
	gitDir, ok := r.plainDotGit()
	if !ok {
		return Dirs{}, false
	}
	d, err := parseDirs(v)
	if err != nil || d.Common != gitDir || d.Git != gitDir || !filepath.IsAbs(d.Hooks) {
		return Dirs{}, false
	}
	return d, true
}

// plainDotGit is <root>/.git when git keeps the repository there the plain
// way: no GIT_DIR or GIT_COMMON_DIR, .git a directory (not a linked
// worktree's file) and no commondir file in it (which would move the
// config, the hooks and the refs elsewhere).
func (r *Repo) plainDotGit() (string, bool) {
	if os.Getenv("GIT_DIR") != "" || os.Getenv("GIT_COMMON_DIR") != "" {
		return "", false
	}
	gitDir := filepath.Join(r.root, ".git")
	if st, err := os.Lstat(gitDir); err != nil || !st.IsDir() {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return gitDir, true
}

// Strip returns env without the step's variables and with the user's own
// git variables in place of the hermetic ones (HermeticEnv): the
// environment of an agent or a guard.
func Strip(env []string) []string {
	return slices.DeleteFunc(userEnv(slices.Clone(env)), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(StepVars, name)
	})
}

// stepRoot is RUNNER_STEP_ROOT when it names the directory abs, is
// spelled as git spells a top level (no symbolic link on the way, as
// rev-parse --show-toplevel prints it) and has a .git (a directory, or a
// worktree's file).
func stepRoot(abs string) (string, bool) {
	root := os.Getenv(StepRoot)
	if root == "" || !filepath.IsAbs(root) || !sameDir(root, abs) {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(root); err != nil || real != root {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		return "", false
	}
	return root, true
}

// stepHead is the branch and HEAD from git's files (looseHead): in a
// step, wherever they are kept the plain way; otherwise only when they say
// what the step's variables say.
func (r *Repo) stepHead() (branch, head string, ok bool) {
	if r.step {
		return r.looseHead()
	}
	branch, head = os.Getenv(StepBranch), os.Getenv(StepHead)
	if branch == "" || head == "" {
		return "", "", false
	}
	if b, h, ok := r.looseHead(); !ok || b != branch || h != head {
		return "", "", false
	}
	return branch, head, true
}

// looseHead is the checked-out branch and its commit read from git's files
// as git reads them (gitfile.LooseHead), without a git process, when git
// keeps them there (plainDotGit). Anything else (a packed or reftable
// ref, a detached HEAD) is left to git. It does not check that the ref
// names a commit, as rev-parse HEAD^{commit} does: a session cannot
// leave the branch moved (policy puts it back), and a ref that names
// another object fails the first git command that needs a commit (the
// audit's git log, the commit).
func (r *Repo) looseHead() (branch, head string, ok bool) {
	gitDir, ok := r.plainDotGit()
	if !ok {
		return "", "", false
	}
	return gitfile.LooseHead(gitDir)
}

// HeadIs reports whether HEAD is the commit sha right now, read from
// git's files as looseHead reads them, without a git process: for a
// caller that holds the commit HEAD should be (runner-record after the
// iteration's commit, from meta.json). false when the files say otherwise
// or cannot tell (a packed ref, a detached HEAD, a worktree): the caller
// then asks git (HeadCommit).
func (r *Repo) HeadIs(sha string) bool {
	_, head, ok := r.looseHead()
	return ok && sha != "" && head == sha
}
