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
// of bwrap's own). What decides is the runner's own look at the programs
// the guard needs, as found outside the session's reach (neither in the
// work tree nor in a writable path of the sandbox): the guard's own
// program, started with --version where the guard runs (the same
// sandbox, environment and directory), and each program the guard's
// output says was not found or could not run, which cannot start when
// the sandbox hides every one of that name on PATH, or when, shown, it
// fails the same start. A program the output names is never run outside
// the sandbox, nor shown in it: the output is the session's to write. A
// session that makes its guard exit 127 gains nothing by it: either every
// program starts, and it is a failure like any other, or one truly
// cannot, and the loop stops (a runner error is never retried).

// Unstartable is a program the guard needs that cannot start where the
// guard runs.
type Unstartable struct {
	Program  string   // as the guard's command or output names it
	Probe    []string // the probe that failed: the program as found, with --version; nil when none ran
	Cause    string   // the lines of the probe's output that say why, or how it ended, or where it is hidden
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
	if len(u.Probe) == 0 {
		return fmt.Sprintf("%s cannot start%s (%s): %s", u.Program, where, u.Cause, fix)
	}
	probe := append([]string{filepath.Base(u.Probe[0])}, u.Probe[1:]...)
	return fmt.Sprintf("%s cannot start%s (`%s`: %s): %s", u.Program, where, strings.Join(probe, " "), u.Cause, fix)
}

// mayNotHaveStarted reports whether a guard that ended with status and
// printed out ends as one that could not start: exit 126 (found, not
// executable) or 127 (not found), or a failure with a line of bwrap's
// own (it exits 1 when it cannot exec the command) in what its last
// start printed (proc.LastStart: an earlier start its sandbox never ran
// printed one too).
func mayNotHaveStarted(status int, out []byte) bool {
	return status == 126 || status == 127 || status != 0 && bwrapLine().Match(proc.LastStart(out))
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
// start, or nil. It looks only when the guard ended as one that could
// not start (mayNotHaveStarted): at the guard's own program
// (ProgramStarts), then at each program the output names (Named), at
// most maxProbes of them.
func (s Starter) CannotStart(ctx context.Context, status int, out []byte) *Unstartable {
	if !mayNotHaveStarted(status, out) {
		return nil
	}
	if u := s.ProgramStarts(ctx); u != nil {
		return u
	}
	judged := 0
	for _, n := range namedPrograms(out) {
		if judged == maxProbes {
			break
		}
		u, ok := s.Named(ctx, n.prog, n.line)
		if ok {
			judged++
		}
		if u != nil {
			return u
		}
	}
	return nil
}

// ProgramStarts is the dry run of the guard's own program, as Candidate
// has it, started with --version where the guard runs (runner-check's
// too); nil when it starts or cannot be judged. One that cannot start in
// the sandbox is started outside it too: failing there as well, it is
// not the sandbox's doing, and is said so.
func (s Starter) ProgramStarts(ctx context.Context) *Unstartable {
	p := s.Config.Guard.Command[0]
	exe, ok := s.Candidate(p, true)
	if !ok {
		return nil
	}
	u := s.Probe(ctx, p, exe)
	if u == nil || !u.Confined {
		return u
	}
	outside := s
	outside.Config.Sandbox.Mode = config.SandboxNone
	if v := outside.Probe(ctx, p, exe); v != nil {
		return v
	}
	return u
}

// Named judges a program prog that the guard's output line says was not
// found or could not run; ok is false when it is not judged: found
// nowhere (a name proves nothing by itself), only where a session could
// have written it, or, named by its path, shown in the sandbox. A name
// is looked up on PATH: when the sandbox hides every program of that
// name (or what one runs from), it cannot start, with the directory of
// the home to make readable; else the first one shown is started with
// --version in the sandbox. A path is judged only by whether the sandbox
// hides it; nothing named by the output runs outside the sandbox.
func (s Starter) Named(ctx context.Context, prog, line string) (u *Unstartable, ok bool) {
	var found []string
	if strings.Contains(prog, "/") {
		if ps := sandbox.ProgramPaths(s.Root, prog); len(ps) > 0 {
			found = ps[:1]
		}
	} else {
		found = onPath(prog)
	}
	found = slices.DeleteFunc(found, func(p string) bool {
		real, err := filepath.EvalSymlinks(p)
		return err != nil || s.sessionWrites(p) || s.sessionWrites(real)
	})
	if len(found) == 0 {
		return nil, false
	}
	confined := s.Config.Sandbox.ConfinesGuard()
	for _, exe := range found {
		if confined && len(s.hides(exe)) > 0 {
			continue
		}
		if strings.Contains(prog, "/") {
			return nil, false
		}
		return s.Probe(ctx, prog, exe), true
	}
	return &Unstartable{Program: prog, Cause: fmt.Sprintf("%s; %s is hidden there", line, found[0]), Confined: true, Readable: s.hides(found[0])}, true
}

// hides is what the sandbox must show for exe to start in it (its link,
// its script, its interpreter): the directories of the home to add to
// [sandbox] readable, none when it is shown.
func (s Starter) hides(exe string) []string {
	return sandbox.ReadableFor(s.Config.Sandbox, s.Root, sandbox.ProgramPaths(s.Root, exe))
}

// onPath is every executable file named name in PATH's directories, in
// order.
func onPath(name string) []string {
	var out []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Candidate is what a probe of the guard's program prog starts, and
// whether it is probed at all: prog as found outside the sandbox (its
// path relative to the root, or on PATH) when neither the work tree nor
// a writable path of the sandbox holds it (the session could have
// written it); for such a script, its interpreter instead, as found. A
// program (or such a script's interpreter) found nowhere is probed only
// when own (the guard's command names it), and fails to start.
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
	if confined {
		paths := append(sandbox.ProgramPaths(s.Root, exe), sandbox.PathsIn(out.Bytes())...)
		u.Readable = sandbox.ReadableFor(s.Config.Sandbox, s.Root, paths)
	}
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
	sandbox.Restartable(spec)
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
	for _, n := range namedPrograms(out) {
		ps = append(ps, n.prog)
	}
	return ps
}

// named is a program a line of the guard's output names as not started.
type named struct{ prog, line string }

func namedPrograms(out []byte) []named {
	var ns []named
	for _, l := range strings.Split(string(proc.LastStart(out)), "\n") {
		l = strings.TrimSpace(l)
		p := namedProgram(l)
		if p != "" && !slices.ContainsFunc(ns, func(n named) bool { return n.prog == p }) {
			ns = append(ns, named{p, l})
		}
	}
	return ns
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
