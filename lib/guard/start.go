package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// A guard that cannot start is a runner error, not a failure of the
// node's work (DESIGN.md decision 26): no attempt is spent on it and the
// loop stops, saying what to fix. The guard's exit status alone does not
// decide it, since a test can exit 127 as well as a missing interpreter:
// it only makes the runner look (an exit status of 126 or 127, or a line
// of bwrap's own). What decides is the runner's own probe: each program
// the guard needs, as found outside the session's reach, started with
// `--version` where the guard runs (the same sandbox, environment and
// directory), must start. A session that makes its guard exit 127 gains
// nothing by it: either every program starts, and it is a failure like
// any other, or one truly cannot, and the loop stops (a runner error is
// never retried).

// Unstartable is a program the guard needs that cannot start where the
// guard runs.
type Unstartable struct {
	Program  string   // as the guard's command or output names it
	Probe    []string // the probe that failed: the program as found, with --version
	Cause    string   // the lines of the probe's output that say why, or how it ended
	Confined bool     // the guard runs in the sandbox
	Readable []string // directories of the home to add to [sandbox] readable (sandbox.ReadableFor)
}

// Message says what cannot start, why, and what to do, for guard.json
// and runner-check.
func (u *Unstartable) Message() string {
	where, fix := "", fmt.Sprintf("install it, or set [guard] command in %s", layout.Config)
	if u.Confined {
		where = " in the sandbox"
		fix = fmt.Sprintf("list what it needs in [sandbox] readable of %s", layout.Config)
		if len(u.Readable) > 0 {
			fix = sandbox.AddReadable(u.Readable, layout.Config)
		}
	}
	probe := append([]string{filepath.Base(u.Probe[0])}, u.Probe[1:]...)
	return fmt.Sprintf("%s cannot start%s (`%s`: %s): %s", u.Program, where, strings.Join(probe, " "), u.Cause, fix)
}

// mayNotHaveStarted reports whether a guard that ended with status and
// printed out ends as one that could not start: exit 126 (found, not
// executable) or 127 (not found), or a line of bwrap's own (it exits 1
// when it cannot exec the command).
func mayNotHaveStarted(status int, out []byte) bool {
	return status == 126 || status == 127 || bwrapLine().Match(out)
}

var bwrapLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^bwrap: `) })

// Starter is how the probes start a program where the guard runs.
type Starter struct {
	Root     string        // the repository (or worktree) root, the guard's directory
	Config   config.Config // the guard's command and sandbox
	Env      []string      // the guard's environment; nil: this process's without git's step variables
	Writable []string      // what the guard may write beside the root (its caches, its results)
	Deadline time.Time     // the latest a probe may run; zero: probeTimeout from its start
}

// probeTimeout bounds one probe: a program's --version (a node CLI
// starting on a busy machine takes seconds).
const probeTimeout = 30 * time.Second

// maxProbes bounds the programs one guard's run is probed for.
const maxProbes = 4

// CannotStart is the runner's verdict on a guard that ended with status
// and printed out (its log): the first program it needs that cannot
// start, or nil. It probes only when the guard ended as one that could
// not start (mayNotHaveStarted): the guard's own program, then each
// program the output says was not found or could not run
// (NamedPrograms), as Candidate has them.
func (s Starter) CannotStart(ctx context.Context, status int, out []byte) *Unstartable {
	if !mayNotHaveStarted(status, out) {
		return nil
	}
	progs := []string{s.Config.Guard.Command[0]}
	progs = append(progs, NamedPrograms(out)...)
	probed := 0
	for i, p := range progs {
		exe, ok := s.Candidate(p, i == 0)
		if !ok {
			continue
		}
		if probed++; probed > maxProbes {
			break
		}
		if u := s.Probe(ctx, p, exe); u != nil {
			return u
		}
	}
	return nil
}

// ProgramStarts is runner-check's dry run of the guard: its program (as
// Candidate has it) started with --version where the guard runs; nil when
// it starts or cannot be judged.
func (s Starter) ProgramStarts(ctx context.Context) *Unstartable {
	p := s.Config.Guard.Command[0]
	exe, ok := s.Candidate(p, true)
	if !ok {
		return nil
	}
	return s.Probe(ctx, p, exe)
}

// Candidate is what a probe of prog starts, and whether it is probed at
// all: prog as found outside the sandbox (its path relative to the root,
// or on PATH) when neither the work tree nor a writable path of the
// sandbox holds it (the session could have written it); for such a
// script, its interpreter instead, as found. A program (or such a
// script's interpreter) found nowhere is probed only when the guard's
// command names it (own): a name the output gives proves nothing by
// itself.
func (s Starter) Candidate(prog string, own bool) (string, bool) {
	paths := sandbox.ProgramPaths(s.Root, prog)
	if len(paths) == 0 {
		return found(prog, own)
	}
	exe := paths[0]
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	if !s.sessionWrites(real) && !s.sessionWrites(exe) {
		return exe, true
	}
	interp := sandbox.Interpreter(real)
	if interp == "" {
		return "", false
	}
	ip := sandbox.ProgramPaths(s.Root, interp)
	switch {
	case len(ip) == 0:
		return found(interp, own)
	case slices.ContainsFunc(ip, s.sessionWrites):
		return "", false
	}
	return ip[0], true
}

// found is Candidate's answer for a program found nowhere: probed only
// when own.
func found(prog string, own bool) (string, bool) {
	if !own {
		return "", false
	}
	return prog, true
}

// sessionWrites reports whether a session may write p: the work tree and
// the sandbox's writable paths (under mode "none", a session may write
// anything of yours: what it wrote there is then taken as yours).
func (s Starter) sessionWrites(p string) bool {
	if within(s.Root, p) {
		return true
	}
	home, _ := os.UserHomeDir()
	for _, w := range s.Config.Sandbox.Writable {
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			w = filepath.Join(home, rest)
		}
		if within(filepath.Clean(w), p) {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Probe starts exe --version where the guard runs, in the guard's
// environment, and reports it as an Unstartable of prog when it cannot
// start: not found, exit 126 or 127, or bwrap refusing it. A probe that
// times out or is interrupted judges nothing (nil).
func (s Starter) Probe(ctx context.Context, prog, exe string) *Unstartable {
	argv := []string{exe, "--version"}
	confined := s.Config.Sandbox.ConfinesGuard()
	u := &Unstartable{Program: prog, Probe: argv, Confined: confined}
	deadline := time.Now().Add(probeTimeout)
	if !s.Deadline.IsZero() && s.Deadline.Before(deadline) {
		deadline = s.Deadline
	}
	env := s.Env
	if env == nil {
		env = git.Strip(os.Environ())
	}
	var out bytes.Buffer
	spec := proc.Spec{Argv: argv, Dir: s.Root, Env: env, Deadline: deadline, Log: proc.NewCappedWriter(&out, 64<<10)}
	res, err := s.run(ctx, &spec)
	var se *proc.StartError
	switch {
	case errors.As(err, &se):
		u.Cause = se.Error()
	case err != nil, res.TimedOut, res.Canceled, !mayNotHaveStarted(res.ExitCode, out.Bytes()):
		// Started, or no verdict: the sandbox could not be set up
		// (runner-check's sandbox check says why), the probe ran out
		// of time or was interrupted.
		return nil
	default:
		u.Cause = proc.CauseLine(out.Bytes())
		if u.Cause == "" {
			u.Cause = fmt.Sprintf("exit %d", res.ExitCode)
		}
	}
	if !confined {
		return u
	}
	// One that cannot start outside the sandbox either is not the
	// sandbox's doing: it is said so, with what to do about it.
	outside := s
	outside.Config.Sandbox.Mode = config.SandboxNone
	if v := outside.Probe(ctx, prog, exe); v != nil {
		return v
	}
	paths := append(sandbox.ProgramPaths(s.Root, exe), sandbox.PathsIn(out.Bytes())...)
	u.Readable = sandbox.ReadableFor(s.Config.Sandbox, s.Root, paths)
	return u
}

// run runs spec where the guard runs; the error is a *proc.StartError
// when the program cannot be found, another when the sandbox could not
// be set up or its container removed.
func (s Starter) run(ctx context.Context, spec *proc.Spec) (proc.Result, error) {
	release, err := s.confine(spec)
	if err != nil {
		return proc.Result{}, err
	}
	res, err := proc.Run(ctx, *spec)
	if rerr := release(); err == nil && rerr != nil {
		return res, rerr
	}
	return res, err
}

// confine wraps spec for the sandbox that confines the guard, if one
// does: as the guard (confine), without the removal of containers a
// killed runner left, which a probe running beside a loop must not do.
func (s Starter) confine(spec *proc.Spec) (release func() error, err error) {
	release = func() error { return nil }
	if !s.Config.Sandbox.ConfinesGuard() {
		return release, nil
	}
	dir, err := os.MkdirTemp("", "treeloop-probe-*")
	if err != nil {
		return release, err
	}
	c, err := sandbox.Open(s.Config.Sandbox, s.Root, s.Writable, nil, sandbox.Session{Role: "probe", Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return release, err
	}
	if spec.Argv, err = c.Wrap(spec.Argv, spec.Env); err != nil {
		c.Release()
		os.RemoveAll(dir)
		return release, err
	}
	spec.OwnNamespace = s.Config.Sandbox.Mode == config.SandboxBwrap
	return func() error {
		defer os.RemoveAll(dir)
		return c.Release()
	}, nil
}

// NamedPrograms are the programs a failed start names in out, in order,
// once each: "X: command not found" (bash, pyenv), "X: not found" (sh),
// "X: No such file or directory" and "X: Permission denied" (bash, env,
// for a program or the interpreter of a script), "bwrap: execvp X: …",
// `exec: "X": executable file not found` (a container's runtime).
func NamedPrograms(out []byte) []string {
	var ps []string
	for _, l := range strings.Split(string(out), "\n") {
		p := namedProgram(strings.TrimSpace(l))
		if p != "" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// namedProgram is the program line l says could not start, "" for none.
func namedProgram(l string) string {
	if m := containerExec().FindStringSubmatch(l); m != nil {
		return m[1]
	}
	for _, end := range []string{": command not found", ": not found", ": No such file or directory", ": Permission denied"} {
		head, ok := strings.CutSuffix(l, end)
		if !ok {
			continue
		}
		f := strings.Split(head, ": ")
		if len(f) < 2 { // the program alone, with no shell naming itself: not a shell's line
			return ""
		}
		p := f[len(f)-1]
		p = strings.TrimPrefix(p, "execvp ")
		p = strings.Trim(p, "'\"‘’`")
		if p == "" || strings.ContainsAny(p, " \t") {
			return ""
		}
		return p
	}
	return ""
}

var containerExec = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`exec: "([^"\s]+)": executable file not found`)
})

// tail is the last n bytes of the file at path (what the guard printed
// last), nil when it cannot be read.
func tail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		if _, err := f.Seek(st.Size()-n, io.SeekStart); err != nil {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return b
}
