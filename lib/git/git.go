// Package git is a thin adapter over the real git CLI (DESIGN.md decision
// 11: users' hooks, config and signing apply). Every call runs
// `git -C <root> …` with LC_ALL=C and no terminal prompts; errors are one
// line: "git <subcommand>: <first line of git's stderr>". Paths are
// repository-relative with forward slashes.
package git

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/trace"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// Repo is a git work tree.
type Repo struct {
	root string
	// step: the root came from the step (RUNNER_STEP_ROOT), so this
	// process is one of a step's commands (lib/git/step.go).
	step bool
}

// Open finds the work tree containing dir.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if root, ok := stepRoot(abs); ok { // the step knows it
		return &Repo{root: root, step: true}, nil
	}
	out, err := run(abs, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("not a git repository: %s", dir)
	}
	return &Repo{root: strings.TrimRight(string(out), "\n")}, nil
}

// OpenDirs is Open, never from the step's variables, with the
// repository's git directories (Dirs), in one git process: runner-enter
// takes both as a step begins and tells the step's commands the
// directories (StepGitDirs).
func OpenDirs(dir string) (*Repo, Dirs, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, Dirs{}, err
	}
	out, err := run(abs, nil, append([]string{"rev-parse", "--show-toplevel"}, dirsArgs...)...)
	if err != nil {
		return nil, Dirs{}, fmt.Errorf("not a git repository: %s", dir)
	}
	root, rest, _ := strings.Cut(string(out), "\n")
	d, err := parseDirs(rest)
	if err != nil {
		// A newline in a path: the step's commands ask git themselves.
		r, err := Open(abs)
		return r, Dirs{}, err
	}
	return &Repo{root: root}, d, nil
}

// Dirs are a repository's git directories, absolute, as git names them.
type Dirs struct {
	Common string // the common directory: config, info/, refs/
	Git    string // the work tree's own (a linked worktree's differs)
	Hooks  string // the hooks directory (core.hooksPath where set)
}

// dirsArgs asks rev-parse for Dirs, one a line.
var dirsArgs = []string{"--path-format=absolute", "--git-common-dir", "--git-dir", "--git-path", "hooks"}

// parseDirs reads dirsArgs' three lines.
func parseDirs(out string) (Dirs, error) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		return Dirs{}, fmt.Errorf("git rev-parse: %d lines for the common, the work tree's and the hooks directory", len(lines))
	}
	return Dirs{Common: lines[0], Git: lines[1], Hooks: lines[2]}, nil
}

// Dirs is the repository's git directories: the step's (StepGitDirs)
// where it told them and they hold, else git's answer (one rev-parse).
func (r *Repo) Dirs() (Dirs, error) {
	if d, ok := r.stepDirs(); ok {
		return d, nil
	}
	out, err := r.Run(append([]string{"rev-parse"}, dirsArgs...)...)
	if err != nil {
		return Dirs{}, err
	}
	return parseDirs(string(out))
}

// Root is the absolute top-level directory.
func (r *Repo) Root() string { return r.root }

func run(dir string, stdin []byte, args ...string) ([]byte, error) {
	return runEnv(dir, nil, stdin, args...)
}

// noAutoHousekeeping keeps the runner's own git from starting git's
// automatic housekeeping (`git gc --auto`, `git maintenance run --auto`,
// which git commit and others start, detached, when loose objects pile
// up): a repack left running would write the git directory while the next
// session runs. The runner runs it itself, in the foreground, after its
// commits (housekeep). `git config` reads the user's settings and `git
// maintenance` is that run: neither gets it.
var noAutoHousekeeping = []string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}

// runEnv runs git in dir with env added. A sheltered git (proc.ShelterChild)
// that died of SIGINT or SIGTERM got the signal its caller's process group
// was sent in the instant between its fork and its own process group, before
// it ran: it did nothing, and runs again (at most twice more).
func runEnv(dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	for try := 0; ; try++ {
		out, err := runOnce(dir, env, stdin, args...)
		if try == 2 || !proc.Sheltered() || !killedAtStart(err) {
			return out, err
		}
	}
}

// killedAtStart reports whether err is a git that died of SIGINT or SIGTERM.
func killedAtStart(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGINT)
}

func runOnce(dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	argv := []string{"-C", dir}
	if sub := subcommand(args); sub != "config" && sub != "maintenance" {
		argv = append(argv, noAutoHousekeeping...)
	}
	cmd := exec.Command("git", append(argv, args...)...)
	// GIT_OPTIONAL_LOCKS=0: git status never takes index.lock just to
	// refresh the index, so a step killed in loop-commit check (before any
	// iteration exists to recover) leaves no stale lock for the next
	// step's `git add` to fail on (a cause of the crash
	// harness's failures). Writes still take it.
	// GIT_NO_REPLACE_OBJECTS=1: a replace ref (refs/replace/, which a
	// session can write) never swaps an object the runner reads; the rest
	// of the hermetic environment comes from the step (Hermetic).
	cmd.Env = append(append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1"), env...)
	// In a step, a signal to the step's process group must not stop git
	// halfway: the step commits its iteration first (DESIGN.md decision 12).
	proc.ShelterChild(cmd)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	trace.Git(subcommand(args), time.Since(t0))
	if err != nil {
		msg := firstLine(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), &Error{Args: args, Msg: msg, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// Error is a failed git command.
type Error struct {
	Args   []string
	Msg    string // first non-empty line of stderr
	Stderr string
	Err    error
}

func (e *Error) Error() string { return "git " + subcommand(e.Args) + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// subcommand is the git command args run, past the "-c name=value" pairs
// before it.
func subcommand(args []string) string {
	for {
		switch {
		case len(args) > 2 && args[0] == "-c":
			args = args[2:]
		case len(args) > 1 && strings.HasPrefix(args[0], "--work-tree="):
			args = args[1:]
		default:
			return args[0]
		}
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Run runs git with args in the work tree and returns its stdout.
func (r *Repo) Run(args ...string) ([]byte, error) { return run(r.root, nil, args...) }

// CurrentBranch is the checked-out branch, "" when HEAD is detached. It works
// on an unborn branch.
func (r *Repo) CurrentBranch() (string, error) {
	if branch, _, ok := r.stepHead(); ok {
		return branch, nil
	}
	out, err := r.Run("symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return "", nil // detached HEAD
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// HeadCommit is HEAD's full sha; an error when there is no commit yet.
func (r *Repo) HeadCommit() (string, error) {
	if _, head, ok := r.stepHead(); ok {
		return head, nil
	}
	out, err := r.Run("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("git rev-parse: HEAD has no commit yet")
	}
	return strings.TrimSpace(string(out)), nil
}

// ResolveCommit is the full commit id rev names; the step's HEAD when rev
// is it and the repository still says so (no git process).
func (r *Repo) ResolveCommit(rev string) (string, error) {
	if _, head, ok := r.stepHead(); ok && rev == head {
		return head, nil
	}
	out, err := r.Run("rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// HasCommits reports whether HEAD points to a commit.
func (r *Repo) HasCommits() bool {
	_, err := r.HeadCommit()
	return err == nil
}

// BranchExists reports whether refs/heads/name exists.
func (r *Repo) BranchExists(name string) (bool, error) {
	_, err := r.Run("show-ref", "--verify", "--quiet", "refs/heads/"+name)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// CheckoutNewBranch creates name at HEAD and checks it out, keeping the
// working tree (works on an unborn branch too).
func (r *Repo) CheckoutNewBranch(name string) error {
	_, err := r.Run("checkout", "-q", "-b", name)
	return err
}

// Checkout checks out an existing branch.
func (r *Repo) Checkout(name string) error {
	_, err := r.Run("checkout", "-q", name)
	return err
}

// StatusPorcelain lists the changes of the work tree, untracked files
// included, one entry per path ("XY path"); empty means clean.
func (r *Repo) StatusPorcelain() ([]string, error) {
	out, err := r.Run("status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var entries []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		entries = append(entries, f)
		if len(f) > 1 && (f[0] == 'R' || f[0] == 'C') {
			i++ // the rename's source path follows
		}
	}
	return entries, nil
}

// AddAll stages every change (git add -A).
func (r *Repo) AddAll() error {
	_, err := r.Run("add", "-A")
	return err
}

// Commit commits what is staged with message and returns the new sha.
func (r *Repo) Commit(message string) (string, error) {
	return r.commit(message, false)
}

// CommitEnv names, in git's environment and so its hooks', who commits:
// "loop" or "operator"; unset for a human. The pre-commit hook's
// tree-validate --staged reads it (--by) to judge changes to runner-owned
// fields (DESIGN.md decision 16).
const CommitEnv = "TREELOOP_COMMIT"

// CommitAs commits even when nothing is staged, made by by ("loop", "operator"), told to
// the hooks through CommitEnv.
func (r *Repo) CommitAs(by, message string) (string, error) {
	return r.commit(message, true, CommitEnv+"="+by)
}

func (r *Repo) commit(message string, allowEmpty bool, env ...string) (string, error) {
	args := []string{"commit", "-q", "-F", "-"}
	if allowEmpty {
		args = append(args, "--allow-empty")
	}
	if _, err := runEnv(r.root, env, []byte(message), args...); err != nil {
		return "", err
	}
	r.housekeepAfterCommit()
	return r.committed()
}

// committed is HEAD's commit right after a commit: read from git's files
// where they are kept the plain way (looseHead: no rev-parse
// after every iteration's commit), else from git.
func (r *Repo) committed() (string, error) {
	if _, head, ok := r.looseHead(); ok {
		return head, nil
	}
	return r.HeadCommit()
}

// CommitPaths commits the work tree's content of paths alone (git commit
// --only), whatever else is staged, with env added to git's environment
// (the pre-commit hook reads TREELOOP_COMMIT from it), and returns the new
// sha.
func (r *Repo) CommitPaths(message string, env []string, paths ...string) (string, error) {
	args := append([]string{"commit", "-q", "-F", "-", "--only", "--"}, paths...)
	if _, err := runEnv(r.root, env, []byte(message), args...); err != nil {
		return "", err
	}
	r.housekeepAfterCommit()
	return r.committed()
}

// ShowFile returns the bytes of path at rev ("" or ":" for the index). ok is
// false when the path does not exist there; other failures are errors
// (rev not a commit, path not a file). One git process (cat-file --batch)
// answers both questions (it was three).
func (r *Repo) ShowFile(rev, path string) (data []byte, ok bool, err error) {
	files, err := r.ShowFiles(File{Rev: rev, Path: path})
	if err != nil {
		return nil, false, err
	}
	return files[0].Data, files[0].OK, files[0].Err
}

// File is one file for ShowFiles: Path at Rev ("" or ":" for the index),
// and once read, ShowFile's answer for it: its bytes (Data), whether it
// exists there (OK), or why it cannot be read (Err).
type File struct {
	Rev, Path string
	Data      []byte
	OK        bool
	Err       error
}

// ShowFiles is ShowFile for several files in one git process,
// returned in order, each with its own answer; the error is git's failure,
// or an *ErrTampered: a file read at a commit is verified by its hash up
// to the commit's id (verify.go). In a step, where every object the
// files take is loose, no git runs (looseShowFiles, the same answers).
func (r *Repo) ShowFiles(files ...File) ([]File, error) {
	if res, ok := r.looseShowFiles(files); ok {
		return res, nil
	}
	res := slices.Clone(files)
	var in strings.Builder
	for _, f := range files {
		if strings.ContainsAny(f.Rev+f.Path, "\n\r") { // not sayable on cat-file's input lines
			for i := range res {
				res[i].Data, res[i].OK, res[i].Err = r.showFileArgs(res[i].Rev, res[i].Path)
			}
			return res, nil
		}
		if f.Rev == "" || f.Rev == ":" {
			in.WriteString(":" + f.Path + "\n")
		} else {
			in.WriteString(strings.Join(chainRequests(f.Rev, f.Path), "\n") + "\n")
		}
	}
	out, err := run(r.root, []byte(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	for i := range res {
		f := &res[i]
		if f.Rev != "" && f.Rev != ":" {
			// Verified from the commit down (verify.go).
			if f.Data, f.OK, out, f.Err = verifyChain(f.Rev, f.Path, out); f.Err != nil {
				var tampered *ErrTampered
				if errors.As(f.Err, &tampered) {
					return nil, f.Err
				}
			}
			continue
		}
		typ, body, rest, ok := batchObject(out)
		out = rest
		switch {
		case !ok:
			// missing
		case typ != "blob":
			f.Err = fmt.Errorf("git cat-file: %s:%s is a %s, not a file", f.Rev, f.Path, typ)
		default:
			f.Data, f.OK = body, true
		}
	}
	return res, nil
}

// showFileArgs is ShowFile through cat-file's arguments, for names with a
// line break.
func (r *Repo) showFileArgs(rev, path string) (data []byte, ok bool, err error) {
	spec := rev + ":" + path
	if rev == "" || rev == ":" {
		spec = ":" + path
	} else if _, err := r.Run("rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, false, fmt.Errorf("git rev-parse: unknown revision %s", rev)
	}
	if _, err := r.Run("cat-file", "-e", spec); err != nil {
		return nil, false, nil
	}
	out, err := r.Run("cat-file", "blob", spec)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// batchObject reads one answer of `git cat-file --batch`
// (gitfile.ReadBatch): ok false for a missing one or a line that is not
// cat-file's (rest: what follows it), rest nil when the output ends early.
func batchObject(out []byte) (typ string, body, rest []byte, ok bool) {
	rec, rest, err := gitfile.ReadBatch(out)
	if err != nil || rec.Missing {
		return "", nil, rest, false
	}
	return rec.Type, rec.Body, rest, true
}

// Diff is `git diff --binary REV` (the work tree's tracked changes against
// REV, staged ones included).
func (r *Repo) Diff(rev string) ([]byte, error) { return r.Run("diff", "--binary", rev) }

// LogOneline is `git log --oneline -n N`, one entry per line.
func (r *Repo) LogOneline(n int) ([]string, error) {
	out, err := r.Run("log", "--oneline", fmt.Sprintf("-n%d", n))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}

// CommitMessage is the full message of rev, without the trailing newline.
func (r *Repo) CommitMessage(rev string) (string, error) {
	out, err := r.Run("log", "-1", "--format=%B", rev)
	return strings.TrimRight(string(out), "\n"), err
}

// Status is the repository's state from one `git status --porcelain=v2
// --branch` (one scan of the work tree and no separate
// rev-parse/symbolic-ref).
type Status struct {
	Head   string   // HEAD's commit, "" on an unborn branch
	Branch string   // the checked-out branch, "" when HEAD is detached
	Paths  []string // changed paths, staged or not, untracked included (ignored not); a rename's both names
	// Ignored lists the ignored files, and the ignored directories as a
	// whole ("dir/"), when asked for (ChangesSince).
	Ignored []string
}

// Status reads the repository's state in one git process. scope, when
// given, limits the changed paths to those at or under its paths (literal,
// repository-relative; git then reads only those parts of the
// work tree); none means the whole work tree.
func (r *Repo) Status(scope ...string) (Status, error) { return r.status(false, scope) }

func (r *Repo) status(ignored bool, scope []string) (Status, error) {
	// --no-ahead-behind: a run branch pushed with an upstream would make
	// --branch walk the history to count commits nobody reads here.
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind", "--untracked-files=all", "--no-renames"}
	if ignored {
		args = append(args, "--ignored=matching")
	}
	if len(scope) > 0 {
		// With a pathspec (policy's scope: the runner's files and the
		// protected paths' leading directories), the threads that
		// preload the index (each matches its share of every entry
		// against the pathspec, to lstat the few that match) cost more
		// than they save; without them git makes the same lstat calls
		// itself, with the same answer, sooner for policy's scope and no
		// slower for a pathspec over the whole tree (bench/fastpaths.md).
		args = append([]string{"-c", "core.preloadIndex=false"}, args...)
	}
	out, err := runEnv(r.root, literal(scope), nil, append(args, pathspec(scope)...)...)
	if err != nil {
		return Status{}, err
	}
	var st Status
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "# branch.oid "):
			if oid := strings.TrimPrefix(f, "# branch.oid "); oid != "(initial)" {
				st.Head = oid
			}
		case strings.HasPrefix(f, "# branch.head "):
			if b := strings.TrimPrefix(f, "# branch.head "); b != "(detached)" {
				st.Branch = b
			}
		case strings.HasPrefix(f, "1 "):
			st.Paths = append(st.Paths, nthField(f, 8))
		case strings.HasPrefix(f, "2 "):
			st.Paths = append(st.Paths, nthField(f, 9))
			if i+1 < len(fields) {
				i++
				st.Paths = append(st.Paths, fields[i]) // the rename's source
			}
		case strings.HasPrefix(f, "u "):
			st.Paths = append(st.Paths, nthField(f, 10))
		case strings.HasPrefix(f, "? "):
			st.Paths = append(st.Paths, f[2:])
		case strings.HasPrefix(f, "! "):
			st.Ignored = append(st.Ignored, f[2:])
		}
	}
	return st, nil
}

// nthField is what follows the first n space-separated fields of s (a
// path, which may hold spaces itself).
func nthField(s string, n int) string {
	for range n {
		_, s, _ = strings.Cut(s, " ")
	}
	return s
}

// ChangedPathsSince lists, sorted and deduplicated, every path that differs
// between rev and the work tree: modified, deleted, renamed (both names),
// staged or not, and untracked (not ignored) files. scope, when given,
// limits the list to the paths at or under its paths (literal,
// repository-relative), and git reads only those parts of the work tree;
// none means the whole work tree. When rev is HEAD's commit
// (as after policy puts HEAD back), one git status answers; a path staged
// and then changed back in the work tree is listed then too.
func (r *Repo) ChangedPathsSince(rev string, scope ...string) ([]string, error) {
	changed, _, err := r.ChangesSince(rev, scope...)
	return changed, err
}

// ChangesSince is ChangedPathsSince, and the ignored paths under scope as
// well: files, and directories as a whole ("dir/").
func (r *Repo) ChangesSince(rev string, scope ...string) (changed, ignored []string, err error) {
	if st, err := r.status(true, scope); err == nil && st.Head != "" && st.Head == rev {
		paths := st.Paths
		slices.Sort(paths)
		return slices.Compact(paths), st.Ignored, nil
	}
	// HEAD is not rev: rev against the work tree, by content. Unlike the
	// status above, this lists no path whose only change is in the index
	// (staged, the work tree back to rev's bytes).
	env, ps := literal(scope), pathspec(scope)
	out, err := runEnv(r.root, env, nil, append([]string{"diff", "--name-only", "-z", "--no-renames", rev}, ps...)...)
	if err != nil {
		return nil, nil, err
	}
	paths := splitZ(out)
	out, err = runEnv(r.root, env, nil, append([]string{"ls-files", "-z", "--others", "--exclude-standard"}, ps...)...)
	if err != nil {
		return nil, nil, err
	}
	paths = append(paths, splitZ(out)...)
	slices.Sort(paths)
	if ignored, err = r.Ignored(scope...); err != nil {
		return nil, nil, err
	}
	return slices.Compact(paths), ignored, nil
}

// Ignored lists the ignored paths under scope (none: the whole work tree)
// as ChangesSince gives them, from one `git ls-files --others --ignored
// --exclude-standard --directory`, which walks the work tree's untracked
// directories without the lstat of every tracked file a status makes: the
// files git ignores, and a directory as a whole ("dir/") where a pattern
// ignores the directory itself. ls-files also names a directory whose
// every file is ignored by its own pattern, before those files; such a
// directory (a listed path is under it) is left out, as status leaves it.
func (r *Repo) Ignored(scope ...string) ([]string, error) {
	out, err := runEnv(r.root, literal(scope), nil, append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}, pathspec(scope)...)...)
	if err != nil {
		return nil, err
	}
	paths := splitZ(out)
	slices.Sort(paths)
	return coverless(paths), nil
}

// coverless is paths, sorted, without the directories ("dir/") that
// another path is under (in sorted order, the paths under a directory
// follow it at once).
func coverless(paths []string) []string {
	out := paths[:0]
	for i, p := range paths {
		if strings.HasSuffix(p, "/") && i+1 < len(paths) && strings.HasPrefix(paths[i+1], p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// pathspec is the tail of a git command line limiting it to scope: "--"
// and its paths, nothing for none.
func pathspec(scope []string) []string {
	if len(scope) == 0 {
		return nil
	}
	return append([]string{"--"}, scope...)
}

// literal is the environment that makes git read scope's paths as
// literal paths, not patterns, whatever the caller's environment asked
// for (git refuses literal beside the other global pathspec settings).
func literal(scope []string) []string {
	if len(scope) == 0 {
		return nil
	}
	return []string{"GIT_LITERAL_PATHSPECS=1", "GIT_GLOB_PATHSPECS=0", "GIT_NOGLOB_PATHSPECS=0", "GIT_ICASE_PATHSPECS=0"}
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// WorkTreePatch is a binary patch from rev to the work tree, untracked
// files included (ignored ones not), built in a temporary index so that
// the repository's own index is untouched. Empty when nothing differs.
func (r *Repo) WorkTreePatch(rev string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "treeloop-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := runEnv(r.root, env, nil, "read-tree", rev); err != nil {
		return nil, err
	}
	if _, err := runEnv(r.root, env, nil, "add", "-A"); err != nil {
		return nil, err
	}
	return runEnv(r.root, env, nil, "diff", "--cached", "--binary", rev)
}

// ApplyPatch applies a binary patch (from WorkTreePatch) to the work tree.
func (r *Repo) ApplyPatch(patch []byte) error {
	if len(patch) == 0 {
		return nil
	}
	_, err := run(r.root, patch, "apply", "--binary", "--whitespace=nowarn", "-")
	return err
}

// OpenRoot opens the repository whose root is dir. A dir inside a
// repository's subdirectory is refused naming the root (a .runner/ there
// would not be the repository's); a dir outside any repository is refused
// saying so. The errors are advice for a human, ready for one line.
func OpenRoot(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := Open(abs)
	if err != nil {
		return nil, fmt.Errorf("%s is not in a git repository: run it in your project's repository (git init makes one)", abs)
	}
	if !sameDir(r.root, abs) {
		return nil, fmt.Errorf("%s is inside the git repository %s, not at its root: run it there (or with -C %s)", abs, r.root, r.root)
	}
	return r, nil
}

// sameDir reports whether a and b name the same directory (symlinks and
// all).
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// HiddenPaths lists the index entries under scope (literal paths; none:
// all) that git's own commands do not compare with the work tree: marked
// assume-unchanged or skip-worktree (`git ls-files -v`: a lowercase tag, or
// S). A change to such a file shows in no status or diff. The index file
// is read directly when it is of the plain kind (hiddenInIndex),
// else git answers.
func (r *Repo) HiddenPaths(scope ...string) (assumed, skipped []string, err error) {
	if assumed, skipped, ok := r.hiddenInIndex(scope); ok {
		return assumed, skipped, nil
	}
	return r.hiddenByGit(scope)
}

// hiddenByGit is HiddenPaths through `git ls-files -v`.
func (r *Repo) hiddenByGit(scope []string) (assumed, skipped []string, err error) {
	out, err := runEnv(r.root, literal(scope), nil, append([]string{"ls-files", "-v", "-z"}, pathspec(scope)...)...)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range splitZ(out) {
		tag, p, ok := strings.Cut(e, " ")
		if !ok || len(tag) != 1 {
			continue
		}
		switch {
		case tag == "S" || tag == "s":
			skipped = append(skipped, p)
		case tag[0] >= 'a' && tag[0] <= 'z':
			assumed = append(assumed, p)
		}
	}
	return assumed, skipped, nil
}

// Unhide clears the assume-unchanged marks of assumed and the
// skip-worktree marks of skipped, so git compares them with the work tree
// again (one update-index each: it applies only one kind of mark per path).
func (r *Repo) Unhide(assumed, skipped []string) error {
	for _, c := range []struct {
		flag  string
		paths []string
	}{{"--no-assume-unchanged", assumed}, {"--no-skip-worktree", skipped}} {
		if len(c.paths) == 0 {
			continue
		}
		if _, err := runEnv(r.root, literal(c.paths), nil, append([]string{"update-index", c.flag, "--"}, c.paths...)...); err != nil {
			return err
		}
	}
	return nil
}
