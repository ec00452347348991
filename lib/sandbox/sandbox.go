// Package sandbox confines the agent, and by choice the guard, with
// bubblewrap ("OS sandbox"; DESIGN.md decision 19), or in a
// container of docker or podman (Container; Open picks by mode). In bwrap mode
// the command sees the whole filesystem read-only, except:
//
//   - the repository (or worktree) root, writable;
//   - a private, empty /tmp (TMPDIR=/tmp);
//   - the user's home directory hidden behind an empty tmpfs (also when
//     the repository lies under it, which is bound back in), with the
//     configured readable paths shown read-only and the writable ones
//     writable (a CLI's home, a build cache);
//   - the sockets of the services that start processes on request (a
//     container engine's, D-Bus's: ServiceSockets) shown as /dev/null, and
//     the user's runtime directory (the session bus, a rootless engine's
//     socket) hidden behind an empty tmpfs, unless a readable or writable
//     path shows them again;
//   - the repository's .git (and a worktree's git directories) read-only:
//     no commit, no moved ref, no rewritten history;
//   - the runner's own files under .runner/ read-only, except what the
//     agent may write: .runner/state/ (tree.json for open-node edits,
//     DESIGN.md decision 4, assumptions.md, questions.md) with its
//     runner-owned files read-only again, the node sidecars and its
//     output file.
//
// It runs in its own PID namespace (the runner and every other process are
// invisible to it, and whatever it leaves behind dies with it), with every
// capability dropped (root inside could otherwise remount / writable), and
// with the host's network or none.
package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
)

// Bin is the bubblewrap executable, looked up in PATH.
const Bin = "bwrap"

// AgentWritable are the places under .runner/ an agent may write (DESIGN.md
// decision 4, seed 000 §3.1), relative to the root: the state directory, so
// that a tree.json rewritten through a temporary file and a rename works,
// and the node sidecars.
var AgentWritable = []string{layout.State, layout.Nodes}

// AgentReadOnly are the files inside AgentWritable that stay read-only:
// the runner-owned state files. Being mount points, they can be neither
// written, replaced by a rename, nor deleted.
var AgentReadOnly = []string{layout.Config, layout.Schema, layout.AgentOutputSchema, layout.RunState, layout.TestsPassed, layout.GuardCache}

// Sandbox is how one command is confined. The zero value is not useful:
// build one with New.
type Sandbox struct {
	root      string   // writable
	home      string   // hidden ("" when not hidden)
	runtime   string   // the user's runtime directory, hidden ("" when none)
	sockets   []string // service sockets, shown as /dev/null
	readOnly  []string // bound read-only after the root: .git, git dirs, .runner
	readWrite []string // bound writable after readOnly: the agent's runner files
	readOnly2 []string // bound read-only again after readWrite
	readable  []string // under home, read-only
	writable  []string // writable
	network   string
}

// New builds the sandbox of a command working in root (absolute) under the
// [sandbox] table cfg. writable are the places under .runner/ the command
// may write and readOnly the ones inside them that stay read-only, all
// absolute (for an agent AgentWritable plus its output file, and
// AgentReadOnly; none for the guard); missing ones are skipped. Errors: the
// git directories cannot be found.
func New(cfg config.Sandbox, root string, writable, readOnly []string) (*Sandbox, error) {
	return newSandbox(cfg, root, writable, readOnly, true)
}

// NewDir is New for a directory that is no repository (the witness's
// scratch checkout): root writable, no git directory to shield, the paths
// of shown that exist shown read-only where they are (the work tree's
// dependency directories the scratch links to, which may lie in a hidden
// place), the rest as New has it.
func NewDir(cfg config.Sandbox, root string, writable, shown []string) *Sandbox {
	s, _ := newSandbox(cfg, root, writable, nil, false)
	s.readOnly = existing(shown)
	return s
}

func newSandbox(cfg config.Sandbox, root string, writable, readOnly []string, repository bool) (*Sandbox, error) {
	s := &Sandbox{root: root, network: cfg.Network}
	// The home directory is hidden also when the repository lies under
	// it (~/project): Wrap binds the repository, its git directories and
	// the listed paths back in after the empty home. Only a home inside
	// the repository (or the repository itself) stays shown.
	home, _ := os.UserHomeDir()
	if home != "" && home != "/" && !within(root, home) {
		s.home = filepath.Clean(home)
	}
	s.readable, s.writable = expandHome(cfg.Readable, home), expandHome(cfg.Writable, home)
	s.runtime, s.sockets = services(root, s.home)
	if !repository {
		s.readWrite = existing(writable)
		return s, nil
	}
	repo, err := git.Open(root)
	if err != nil {
		return nil, err
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, fmt.Errorf("find the git directory: %w", err)
	}
	s.readOnly = append(s.readOnly, filepath.Join(root, ".git"))
	for _, d := range []string{dirs.Git, dirs.Common} {
		if d = filepath.Clean(d); !slices.Contains(s.readOnly, d) {
			s.readOnly = append(s.readOnly, d)
		}
	}
	s.readOnly = append(s.readOnly, filepath.Join(root, layout.Runner))
	s.readWrite, s.readOnly2 = existing(writable), existing(readOnly)
	return s, nil
}

// existing is the paths of ps that exist.
func existing(ps []string) []string {
	var out []string
	for _, f := range ps {
		if _, err := os.Lstat(f); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// expandHome is ps (readable or writable paths) with "~/" read as the home
// directory (paths under it left out when home is ""), cleaned.
func expandHome(ps []string, home string) []string {
	var out []string
	for _, p := range ps {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				continue
			}
			p = filepath.Join(home, rest)
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// hides reports whether p lies in a place the sandbox mounts afresh, its
// contents hidden: /tmp, /dev (bwrap's own, without /dev/shm's files),
// the home directory, the runtime directory.
func (s *Sandbox) hides(p string) bool {
	return within("/tmp", p) || within("/dev", p) || s.home != "" && within(s.home, p) || s.runtime != "" && within(s.runtime, p)
}

// shows reports whether the sandbox shows p by a mount of its own: the
// root, a readable or writable path, one bound read-only.
func (s *Sandbox) shows(p string) bool {
	for _, d := range slices.Concat([]string{s.root}, s.readable, s.writable, s.readOnly, s.readWrite) {
		if within(d, p) {
			return true
		}
	}
	return false
}

// BwrapKeepsOut reports whether bwrap mode (cfg, a repository or
// worktree at root) keeps every session from writing p: the agent, and
// the guard with [sandbox] guard on, see p read-only or not at all, as p
// lies outside root and outside every [sandbox] writable path (symbolic
// links resolved where they exist). False in any other mode: without a
// sandbox a session writes what its user may, and a container's view is
// the engine's. For trust in a file a session must not prime (the guard's
// Go seed, DESIGN.md decision 25).
func BwrapKeepsOut(cfg config.Sandbox, root, p string) bool {
	if cfg.Mode != config.SandboxBwrap || !cfg.Guard {
		return false
	}
	home, _ := os.UserHomeDir()
	p = fsutil.Resolved(p)
	for _, d := range append([]string{root}, expandHome(cfg.Writable, home)...) {
		if within(d, p) || within(fsutil.Resolved(d), p) {
			return false
		}
	}
	return true
}

// within reports whether p is dir or under it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Restartable makes spec, a command line of Wrap, one proc.Run starts
// again when bubblewrap never ran the command (NeverRan): bubblewrap
// reports on descriptor 3 (--json-status-fd), which spec.Restart has Run
// open, so the spec must run through proc.Run (without descriptor 3
// bubblewrap fails: "Write to info_fd: Bad file descriptor"). A command
// line that is not bubblewrap's is left as it is.
func Restartable(spec *proc.Spec) {
	if len(spec.Argv) == 0 || filepath.Base(spec.Argv[0]) != Bin {
		return
	}
	spec.Argv = slices.Concat(spec.Argv[:1], []string{"--json-status-fd", "3"}, spec.Argv[1:])
	spec.Restart = NeverRan
}

// NeverRan is proc.Spec.Restart for a command line of Wrap
// (Restartable): bubblewrap
// reported no exit code (it does when the command it ran exits), and
// all it printed is its own lines, the first saying a mount under / could
// not be copied into its view (mountRace): a mount that went away while
// it set the sandbox up, as a container's do when it stops. The command
// never ran, and proc.Run starts it again. A command that could not be
// found inside ("bwrap: execvp …") is not started again: that does not
// pass.
func NeverRan(report, out []byte) bool {
	if bytes.Contains(report, []byte(`"exit-code"`)) {
		return false
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "bwrap: ") {
			return false
		}
	}
	return mountRace(lines[0])
}

// Wrap returns the bwrap command line that runs argv in the sandbox.
// argv[0] is resolved first (a relative path with a slash from the root),
// so a missing command is a *proc.StartError naming it (not bwrap's exit
// status), and its file is shown read-only even when it lives in a hidden
// place the sandbox does not show otherwise. A missing bwrap is a
// *proc.StartError too.
func (s *Sandbox) Wrap(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	// A relative path names a file of the root (the repository, or the
	// witness's scratch checkout), as it does for the process that runs
	// there: not one of the runner's own working directory.
	name := argv[0]
	if strings.Contains(name, "/") && !filepath.IsAbs(name) {
		name = filepath.Join(s.root, name)
	}
	exe, err := exec.LookPath(name)
	if err != nil {
		return nil, &proc.StartError{Name: argv[0], Err: err}
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, &proc.StartError{Name: argv[0], Err: err}
	}
	bw, err := exec.LookPath(Bin)
	if err != nil {
		return nil, &proc.StartError{Name: Bin, Err: fmt.Errorf("%w (install bubblewrap, or set [sandbox] mode = \"none\")", err)}
	}
	a := []string{bw,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--setenv", "TMPDIR", "/tmp",
	}
	if s.home != "" {
		a = append(a, "--tmpfs", s.home)
	}
	if s.runtime != "" {
		a = append(a, "--tmpfs", s.runtime)
	}
	for _, p := range s.sockets {
		a = append(a, "--ro-bind", "/dev/null", p)
	}
	for _, p := range s.readable {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range s.writable {
		a = append(a, "--bind-try", p, p)
	}
	// A command that lives in a hidden place (/tmp, /dev and so
	// /dev/shm, the home directory, the runtime directory: each a fresh
	// mount above) the sandbox does not show otherwise is shown there
	// read-only, as the file its path resolves to (bwrap cannot bind onto
	// a symlink). One the sandbox shows (in the repository, a readable
	// path) runs by its own path: a virtual environment's python is a
	// link, and run as the file it resolves to it would not be the
	// environment's.
	if s.hides(exe) && !s.shows(exe) {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		a = append(a, "--ro-bind", exe, exe)
	}
	a = append(a, "--bind", s.root, s.root)
	for _, p := range s.readOnly {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, p := range s.readWrite {
		a = append(a, "--bind", p, p)
	}
	for _, p := range s.readOnly2 {
		a = append(a, "--ro-bind", p, p)
	}
	a = append(a, "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL")
	if s.network == config.NetworkNone {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--chdir", s.root, "--", exe)
	return append(a, argv[1:]...), nil
}

// Check reports what keeps bwrap mode from working here: bwrap missing,
// or unable to create its namespaces (with bwrap's own words and what to
// try). An empty list means it works. For runner-check.
//
// bwrap copies every mount under / into its view; one that goes away
// meanwhile (a container stopping: docker's overlay mounts) fails the
// copy, so a probe that fails on a mount is tried again, up to
// checkTries times, before it is reported.
func Check() []string {
	bw, err := exec.LookPath(Bin)
	if err != nil {
		return []string{"sandbox: bwrap is not installed (apt-get install bubblewrap), or set [sandbox] mode = \"none\""}
	}
	var msg string
	for try := 1; ; try++ {
		// As a session starts: reporting on descriptor 3 (Restartable),
		// which bubblewrap before 0.3.2 does not know.
		probe := exec.Command(bw, "--json-status-fd", "3", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL", "true")
		proc.ShelterChild(probe)
		status, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return []string{fmt.Sprintf("sandbox: %v", err)}
		}
		probe.ExtraFiles = []*os.File{status}
		out, err := probe.CombinedOutput()
		status.Close()
		if err == nil {
			return nil
		}
		if bytes.Contains(out, []byte("json-status-fd")) {
			return []string{fmt.Sprintf("sandbox: this bwrap is too old: %s (bubblewrap 0.3.2 or later reports a session's start; install a newer one, or set [sandbox] mode = \"none\")", strings.TrimSpace(string(out)))}
		}
		msg = strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if !mountRace(msg) || try == checkTries {
			break
		}
	}
	if mountRace(msg) {
		return []string{fmt.Sprintf("sandbox: bwrap cannot mount the file system's view: %s (%d tries: a mount under / changed while bwrap copied it, or cannot be remounted read-only; set [sandbox] mode = \"none\" if it persists)", msg, checkTries)}
	}
	return []string{fmt.Sprintf("sandbox: bwrap cannot create its namespaces: %s (unprivileged user namespaces may be off: sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0; inside a container, allow them or set [sandbox] mode = \"none\")", msg)}
}

// checkTries is how many times Check runs its probe when it fails on a
// mount.
const checkTries = 3

// mountRace reports whether bwrap's first line of output says it failed
// to copy a mount into its view ("Can't bind mount /oldroot/ on
// /newroot/: Unable to apply mount flags: remount …").
func mountRace(msg string) bool {
	return strings.Contains(msg, "Can't bind mount") || strings.Contains(msg, "Unable to apply mount flags")
}
