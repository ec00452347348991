package git

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// CommitIndexAs commits the index as it stands, on top of HEAD, made by
// by ("loop", "operator"; told to hooks through CommitEnv), even when
// nothing is staged, and returns the new commit id.
//
// `git commit` refreshes the whole index first (an lstat of every tracked
// file, then the index written back): on a large work tree most of its
// time (bench/fastpaths.md), and the loop's commit comes right after
// `git add -A` refreshed it. So where nothing but the commit
// object itself can differ, the commit is made with git's plumbing:
// `write-tree`, `commit-tree -p HEAD` with the message cleaned as `git
// commit -F` cleans it (Cleanup), and `update-ref -m "commit: <subject>"
// HEAD <new> <old>`, which moves the branch and writes both reflogs as
// `git commit` does, and fails when HEAD moved meanwhile. Then git's
// automatic housekeeping, where `git commit` would start it, but in the
// foreground (housekeep).
//
// Everything else goes through `git commit` (DESIGN.md decision 11: the
// user's hooks, config and signing apply): a pre-commit,
// prepare-commit-msg, commit-msg or post-commit hook in the hooks
// directory, any core.hooksPath, hook.* or commit.cleanup setting,
// commit.gpgSign on (commit-tree does not read it), or no HEAD yet. One
// `git config` answers for the settings, read while commit-tree runs.
//
// staged is the index's tree when the caller has it already (iter-log end
// wrote it: Staged); it is committed in place of a write-tree while the
// index is still the file it was written from. The zero Staged, or one
// the index no longer matches, costs the write-tree. `git commit` ignores
// it: it commits the index.
func (r *Repo) CommitIndexAs(by, message string, staged Staged) (string, error) {
	parent, err := r.HeadCommit()
	if err != nil {
		return r.CommitAs(by, message)
	}
	dirs, plain := r.plainGitDir()
	if !plain || hasCommitHook(filepath.Join(dirs, "hooks")) {
		return r.commitChecked(by, message, parent, staged)
	}
	msg := Cleanup(message)
	if msg == "" {
		return "", errors.New("git commit: an empty commit message")
	}
	// The settings are read while the commit object is made: making it
	// moves nothing (commit-tree only writes the object), so when the
	// settings send the commit through git commit, it is left unreferenced
	// for git gc to prune.
	type settings struct {
		c   commitSettings
		err error
	}
	read := make(chan settings, 1)
	go func() {
		c, err := r.commitConfig()
		read <- settings{c, err}
	}()
	commit, err := r.commitTree(by, msg, parent, staged)
	cfg := <-read
	if cfg.err != nil {
		return "", cfg.err
	}
	if !cfg.c.plain() {
		return r.commitChecked(by, message, parent, staged)
	}
	if err != nil {
		return "", err
	}
	subject, _, _ := strings.Cut(msg, "\n")
	env := []string{CommitEnv + "=" + by}
	if _, err := runEnv(r.root, env, nil, "update-ref", "-m", "commit: "+subject, "HEAD", commit, parent); err != nil {
		return "", err
	}
	r.housekeep(cfg.c, filepath.Join(dirs, "objects"))
	return commit, nil
}

// housekeep runs git's automatic housekeeping (`git maintenance run
// --auto`: gc --auto, which repacks loose objects) where git commit
// would start it after a commit, when the user's settings ask for it:
// maintenance.auto on, and more loose objects than gc.auto (0: never;
// needsMaintenance). git would run it detached, and a repack still
// running when the next session starts writes the git directory under it
// (info/refs, packs); the runner's commits happen between sessions, so it
// runs here in the foreground (gc.autoDetach and maintenance.autoDetach
// off) and is over when the commit returns. As with git commit, its
// failure does not undo the commit. objects is the object directory.
//
// Loose objects nothing references (the seal's copies of iteration logs
// among them) are not packed, only pruned once two weeks old: when they
// alone keep the count past gc.auto, every later commit would run a
// housekeeping that cannot help. git's detached gc then leaves gc.log,
// and gc --auto stays off while it is younger than a day (gc.logExpiry's
// default); the runner writes gc.log as git would and heeds it the same
// way.
func (r *Repo) housekeep(c commitSettings, objects string) {
	if !c.maintenance || !needsMaintenance(objects, c.gcAuto) {
		return
	}
	gcLog := filepath.Join(filepath.Dir(objects), "gc.log")
	if st, err := os.Stat(gcLog); err == nil && time.Since(st.ModTime()) < gcLogExpiry {
		return
	}
	_, _ = r.Run("-c", "gc.autoDetach=false", "-c", "maintenance.autoDetach=false", "maintenance", "run", "--auto", "--quiet")
	if needsMaintenance(objects, c.gcAuto) {
		_ = os.WriteFile(gcLog, []byte(unreachableWarning), 0o644) // as git gc would; losing it costs a housekeeping
	}
}

// gcLogExpiry is gc.logExpiry's default: how long gc --auto stays off
// after a gc that left too many loose objects.
const gcLogExpiry = 24 * time.Hour

// unreachableWarning is what git gc writes to gc.log when loose objects it
// cannot pack or prune yet keep it past gc.auto.
const unreachableWarning = "warning: There are too many unreachable loose objects; run 'git prune' to remove them.\n"

// housekeepAfterCommit is housekeep after a `git commit`, which the
// runner's git makes with automatic housekeeping off (runEnv): the
// settings and the object directory are read from git.
func (r *Repo) housekeepAfterCommit() {
	c, err := r.commitConfig()
	if err != nil {
		return
	}
	objects := ""
	if dir, plain := r.plainGitDir(); plain {
		objects = filepath.Join(dir, "objects")
	} else {
		out, err := r.Run("rev-parse", "--path-format=absolute", "--git-path", "objects")
		if err != nil {
			return
		}
		objects = strings.TrimSpace(string(out))
	}
	r.housekeep(c, objects)
}

// commitTree makes the commit object of the index (staged's tree while
// the index is the file it was written from, else a write-tree) with the
// cleaned message msg on parent, and returns its id; no reference moves.
func (r *Repo) commitTree(by, msg, parent string, staged Staged) (string, error) {
	tree := r.stagedTree(staged)
	if tree == "" {
		var err error
		if tree, err = r.WriteTree(by); err != nil {
			return "", err
		}
	}
	out, err := runEnv(r.root, []string{CommitEnv + "=" + by}, []byte(msg), "commit-tree", tree, "-p", parent)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// SequencerState are the names, in a work tree's git directory, of the
// state a merge, a cherry-pick, a revert or a rebase leaves for `git
// commit` to finish: with MERGE_HEAD it makes a merge commit with a second
// parent, with CHERRY_PICK_HEAD it takes that commit's author. The
// plumbing commit reads none of it; policy seals it with git's settings.
var SequencerState = []string{"MERGE_HEAD", "MERGE_MODE", "MERGE_MSG", "SQUASH_MSG", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer", "rebase-merge", "rebase-apply"}

// inProgress names the operations SequencerState entries stand for, with
// the command that ends each.
var inProgress = []struct{ name, op, abort string }{
	{"rebase-merge", "rebase", "git rebase --continue or --abort"},
	{"rebase-apply", "rebase", "git rebase --continue or --abort"},
	{"MERGE_HEAD", "merge", "git commit or git merge --abort"},
	{"CHERRY_PICK_HEAD", "cherry-pick", "git cherry-pick --continue or --abort"},
	{"REVERT_HEAD", "revert", "git revert --continue or --abort"},
	{"sequencer", "cherry-pick or revert sequence", "git cherry-pick --quit or git revert --quit"},
}

// InProgress reports a merge, cherry-pick, revert or rebase in progress in
// the work tree (its state in the work tree's git directory): its name
// and the command that ends it; ok is false when none is. Read from the
// files for a plain .git directory, else git names the directory (one
// rev-parse).
func (r *Repo) InProgress() (op, end string, ok bool, err error) {
	dir, plain := r.plainGitDir()
	if !plain {
		out, err := r.Run("rev-parse", "--path-format=absolute", "--git-dir")
		if err != nil {
			return "", "", false, err
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, p := range inProgress {
		if _, err := os.Lstat(filepath.Join(dir, p.name)); err == nil {
			return p.op, p.abort, true, nil
		}
	}
	return "", "", false, nil
}

// commitSettings are the settings CommitIndexAs reads.
type commitSettings struct {
	other       bool // a setting only `git commit` honours
	sign        bool // commit.gpgSign
	maintenance bool // maintenance.auto (default on)
	gcAuto      int  // gc.auto (default 6700; 0: off)
}

// plain reports whether the plumbing commit makes the commit `git commit`
// would.
func (c commitSettings) plain() bool { return !c.other && !c.sign }

// commitConfig reads the settings that decide between the plumbing commit
// and `git commit`, from every config file git reads, in one git process.
// Names come lowercased (section and key), the last value wins.
func (r *Repo) commitConfig() (commitSettings, error) {
	c := commitSettings{maintenance: true, gcAuto: 6700}
	out, err := r.Run("config", "-z", "--get-regexp", `^(core\.hookspath|commit\.gpgsign|commit\.cleanup|hook\..*|maintenance\.auto|gc\.auto)$`)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return c, nil // none set
		}
		return c, err
	}
	for _, kv := range splitZ(out) {
		key, value, hasValue := strings.Cut(kv, "\n")
		switch key {
		case "commit.gpgsign":
			c.sign = !hasValue || !gitfile.ConfigFalse(value)
		case "maintenance.auto":
			c.maintenance = !hasValue || !gitfile.ConfigFalse(value)
		case "gc.auto":
			n, unit := gitfile.ConfigInt(value, 6700) // a value git refuses: the default
			c.gcAuto = n
			c.other = c.other || unit // with a unit ("1k"): left to git commit
		default: // core.hookspath, commit.cleanup, hook.*
			c.other = true
		}
	}
	return c, nil
}

// plainGitDir is the repository's git directory when it is the work
// tree's own .git directory (plainDotGit) and no variable points git elsewhere (the
// hooks and objects are then its hooks/ and objects/); ok is false
// otherwise (a linked worktree, GIT_DIR), where the plumbing commit is
// not used.
func (r *Repo) plainGitDir() (dir string, ok bool) {
	for _, v := range []string{"GIT_OBJECT_DIRECTORY", "GIT_INDEX_FILE"} {
		if os.Getenv(v) != "" {
			return "", false
		}
	}
	return r.plainDotGit()
}

// commitHooks are the hooks `git commit` runs and the plumbing does not
// (post-index-change and reference-transaction run in both).
var commitHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"}

// hasCommitHook reports whether dir holds one of commitHooks (executable
// or not: git warns about the latter, and `git commit` is left to).
func hasCommitHook(dir string) bool {
	for _, h := range commitHooks {
		if _, err := os.Stat(filepath.Join(dir, h)); err == nil || !errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

// needsMaintenance is git's own test for gc.auto (too_many_loose_objects):
// more loose objects in objects/17 than gc.auto/256, rounded up. The
// pack count (gc.autoPackLimit) is checked by `git maintenance run
// --auto` itself when it runs.
func needsMaintenance(objects string, gcAuto int) bool {
	if gcAuto <= 0 {
		return false
	}
	n := gitfile.LooseObjects(objects, "17")
	return n > (gcAuto+255)/256
}

// Cleanup is the message `git commit -F` commits under the default
// cleanup (commit.cleanup unset, no editor: "whitespace"): each line's
// trailing whitespace removed, runs of empty lines made one, leading and
// trailing empty lines dropped, one final newline; "" when nothing is
// left.
func Cleanup(message string) string {
	var b bytes.Buffer
	empties := 0
	for _, line := range strings.Split(message, "\n") {
		line = strings.TrimRight(line, " \t\r") // git's isspace: not \v, \f
		if line == "" {
			empties++
			continue
		}
		if empties > 0 && b.Len() > 0 {
			b.WriteByte('\n')
		}
		empties = 0
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// commitChecked commits through git commit (the user's hooks and the
// settings only it honours run) and then holds the commit to what the
// runner staged (DESIGN.md decision 21): a hook that changed the index, or
// anything else that makes the committed tree differ from the staged one,
// is an error and the branch goes back to parent.
func (r *Repo) commitChecked(by, message, parent string, staged Staged) (string, error) {
	want := r.stagedTree(staged)
	if want == "" {
		var err error
		if want, err = r.WriteTree(by); err != nil {
			return "", err
		}
	}
	commit, err := r.CommitAs(by, message)
	if err != nil {
		return "", err
	}
	out, err := r.Run("rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	if got := strings.TrimSpace(string(out)); got != want {
		if _, uerr := runEnv(r.root, nil, nil, "update-ref", "-m", "treeloop: a commit that is not what was staged, undone", "HEAD", parent, commit); uerr != nil {
			return "", fmt.Errorf("git commit: the committed tree %.12s is not the staged %.12s (a commit hook changed it), and moving the branch back failed: %v", got, want, uerr)
		}
		if _, rerr := r.Run("read-tree", want); rerr != nil {
			return "", rerr
		}
		return "", fmt.Errorf("git commit: the committed tree %.12s is not the staged %.12s (a commit hook changed what was staged); the branch is back at %.12s", got, want, parent)
	}
	return commit, nil
}
