package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/testresults"
	"github.com/treeloop/treeloop/lib/tree"
)

// prepare readies the guard's run for its tests by name and its private
// caches (DESIGN.md decisions 24 and 25): the results directory made
// empty and named in the environment and the argv, the caches emptied
// when they changed since the guard last ran, the build outputs a session
// left in the work tree removed, the toolchains pointed at the caches.
// It returns the evidence record to fill (nil when results are off) and
// the paths the guard must be able to write under a sandbox; an empty Go
// build cache starts from the runner's seed where no session can write it
// (seedGo). Errors: a directory cannot be made or emptied (a runner
// error).
func prepare(ctx context.Context, env *cli.Env, cfg config.Config, spec *proc.Spec, j Judging) (ev *iterdir.Evidence, writable []string, err error) {
	if j.Results != "" {
		ev = &iterdir.Evidence{Caches: cfg.Guard.Caches}
		if err := os.RemoveAll(j.Results); err != nil {
			return nil, nil, fmt.Errorf("results directory: %w", err)
		}
		if err := os.MkdirAll(j.Results, 0o755); err != nil {
			return nil, nil, fmt.Errorf("results directory: %w", err)
		}
		vars := evidence.Vars{Results: j.Results}
		spec.Argv = vars.Expand(spec.Argv)
		spec.Env = append(spec.Env, vars.Env()...)
		writable = append(writable, j.Results)
	}
	if j.Caches == nil {
		return ev, writable, nil
	}
	wiped, err := j.Caches.Verify(j.CacheDigest, cfg.Sandbox.Confined())
	if err != nil {
		return nil, nil, fmt.Errorf("the guard's caches: %w", err)
	}
	removed, err := evidence.RemoveBuildOutputs(env.Dir, j.Ignored)
	if err != nil {
		return nil, nil, fmt.Errorf("remove a session's build outputs: %w", err)
	}
	if err := j.Caches.Prepare(); err != nil {
		return nil, nil, fmt.Errorf("the guard's caches: %w", err)
	}
	if wiped && j.CacheDigest != "" {
		env.Warnf("the guard's private caches changed since the guard last ran: emptied (%s)", j.Caches.Root)
	}
	spec.Env = append(spec.Env, j.Caches.Env()...)
	seeded := seedGo(ctx, env, cfg, spec.Env, *j.Caches)
	if ev != nil {
		ev.CachesWiped, ev.CachesSeeded, ev.Removed = wiped, seeded, removed
	}
	return ev, append(writable, j.Caches.Root), nil
}

// seedGo starts the guard's empty private Go build cache from the
// runner's seed, Go's standard library compiled outside every session
// (evidence.Caches.SeedGo), when the repository is a Go module or
// workspace (go.mod or go.work at its root) and bwrap keeps every session
// from writing the seed (sandbox.BwrapKeepsOut: the agent and the guard
// confined, the seed outside the repository and the writable paths).
// Without that, a session could prime the seed as it could the cache, and
// the guard compiles the standard library itself. A seed that cannot be
// built or copied is a warning: the guard runs on an empty cache, as it
// would have. It reports whether the cache was seeded.
func seedGo(ctx context.Context, env *cli.Env, cfg config.Config, guardEnv []string, c evidence.Caches) bool {
	if !goModule(env.Dir) || cfg.Sandbox.Mode != config.SandboxBwrap {
		return false
	}
	root, err := evidence.GoSeedRoot()
	if err != nil {
		return false
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		env.Warnf("the guard's Go build cache starts empty: %v", err)
		return false
	}
	if !sandbox.BwrapKeepsOut(cfg.Sandbox, env.Dir, root) {
		return false
	}
	seeded, err := c.SeedGo(ctx, guardEnv, root, func(dir string) {
		env.Warnf("compiling Go's standard library for the guard's build cache, once for this toolchain (%s)", dir)
	})
	if err != nil {
		env.Warnf("the guard's Go build cache starts empty: %v", err)
	}
	return seeded
}

// goModule reports a go.mod or go.work at root.
func goModule(root string) bool {
	for _, f := range []string{"go.mod", "go.work"} {
		if st, err := os.Stat(filepath.Join(root, f)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// results reads the tests by name of a run: the results directory's files
// and the output's lines, named relative to root. Where the run wrote
// results files, the output counts only for go test -json's events: a
// test's own output could otherwise print lines in a text format (go test
// -v's, libtest's) that pass a test it deleted.
func results(dir, root string, stream *testresults.Stream) testresults.Results {
	stream.Close()
	res, err := testresults.ReadDir(dir)
	if err != nil {
		res.Unreadable = append(res.Unreadable, fmt.Sprintf("%s: %v", filepath.Base(dir), fsutil.Cause(err)))
	}
	if res.Len() > 0 {
		res.Merge(stream.Structured())
	} else {
		res.Merge(stream.Results())
	}
	res.Relative(root)
	return res
}

// judge is the verdict on a guard that exited 0 by its tests by name
// (evidence.Judge), then, for an execute leaf at level witness, the
// witness check. It fills ev and returns the outcome, its exit code and
// the message ("" when the pass stands).
func judge(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, j Judging, ev *iterdir.Evidence, stream *testresults.Stream, base *witnessBase) (outcome string, code int, message string) {
	res := results(j.Results, env.Dir, stream)
	if msg := evidence.Judge(ev, res, j.Best.Names); msg != "" {
		return Fail, exit.Negative, msg
	}
	if j.Witness != nil {
		ev.Level, ev.LevelFrom, ev.Reads = j.Witness.Level, j.Witness.LevelFrom, evidence.Describe(j.Witness.Level)
	}
	if j.Witness == nil || j.Witness.Level != tree.EvidenceWitness {
		ev.Held = true
		return Pass, exit.OK, ""
	}
	if base == nil {
		base = startWitness(in, env, cfg, deadline, logPath, j, false)
	}
	w, outcome, code, msg := base.finish(env, j, res)
	ev.Witness = w
	ev.Held = outcome == Pass
	return outcome, code, msg
}

// failingTests records in ev what the tests by name of a failed guard
// say (the counts and the failing tests) and ends the guard's log with the
// failing tests and their messages, so that the next attempt's prompt
// names them even when the guard printed only JSON.
func failingTests(env *cli.Env, ev *iterdir.Evidence, dir, logPath string, stream *testresults.Stream) {
	res := results(dir, env.Dir, stream)
	evidence.Judge(ev, res, nil)
	if summary := evidence.FailingSummary(res, maxSummary); summary != "" {
		Note(env, logPath, summary)
	}
}

// maxSummary bounds the failing tests the log's summary names.
const maxSummary = 20

// Witness is the execute leaf a guard's pass must witness (DESIGN.md
// decision 24): who it is, where its work began, and the level that asks
// for it.
type Witness struct {
	Repo     *git.Repo
	GitDir   string // the worktree's own git directory (the scratch lives there)
	RunID    string
	NodeID   string
	StepBase string // the commit the step started from
	// Level is the node's evidence level (evidence.Level) and LevelFrom
	// who decided it.
	Level, LevelFrom string
}

// witnessBase is the witness's run on the base code (DESIGN.md decision
// 24): started beside the guard's own run (startWitness) when the
// sandbox allows two sessions at once, or after it, and judged against
// the guard's tests by name (finish). The sessions of a container engine
// run one at a time: a session's start removes the repository's
// containers as leftovers.
type witnessBase struct {
	done   chan struct{}
	cancel context.CancelFunc
	start  time.Time
	rec    *iterdir.Witness
	r      witnessRunResult
	// decided: the check ended before the base run was judged, with
	// outcome, code and msg (no test file, a scratch that cannot be
	// made, a run that timed out or was interrupted).
	decided      bool
	outcome, msg string
	code         int
}

// startWitness prepares the witness's base run (the node's test files
// laid over the code its work began from, in a scratch checkout, run with
// [guard] witness, else the guard's command, confined as the guard is)
// and starts it: in the background, beside the guard's own run, when
// beside; else at once, to its end. It stops when in does, or when stop
// is called.
func startWitness(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, j Judging, beside bool) *witnessBase {
	ctx, cancel := context.WithCancel(in)
	b := &witnessBase{done: make(chan struct{}), cancel: cancel, start: time.Now(), rec: &iterdir.Witness{}}
	run := b.prepare(in, env, cfg, deadline, logPath, j, beside)
	if run == nil {
		close(b.done)
		return b
	}
	body := func() {
		defer close(b.done)
		r := run(ctx)
		b.rec.DurationMS = time.Since(b.start).Milliseconds()
		switch {
		case r.err != nil:
			b.decide(Error, exit.RunnerError, fmt.Sprintf("witness: %v", r.err))
		case r.outcome != "":
			b.decide(r.outcome, r.code, r.msg)
		default:
			b.r = r
			b.rec.BaseExit, b.rec.BaseTests = r.exit, r.res.Len()
		}
	}
	if beside {
		go body()
	} else {
		body()
	}
	return b
}

// decide ends the check before the base run is judged.
func (b *witnessBase) decide(outcome string, code int, msg string) {
	b.decided, b.outcome, b.code, b.msg = true, outcome, code, msg
	b.rec.DurationMS = time.Since(b.start).Milliseconds()
}

// stop ends the base run (its result no longer wanted) and waits for it.
func (b *witnessBase) stop() {
	b.cancel()
	<-b.done
}

// stopBeside is stop for a run that went beside the guard's, then kills
// what it left should it have ended last (proc.KillStray).
func (b *witnessBase) stopBeside() {
	b.stop()
	proc.KillStray()
}

// prepare finds the node's test files and readies the base run: nil when
// the check ended before it (decided).
func (b *witnessBase) prepare(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, j Judging, beside bool) func(context.Context) witnessRunResult {
	w, rec := j.Witness, b.rec
	fail := func(err error) func(context.Context) witnessRunResult {
		b.decide(Error, exit.RunnerError, fmt.Sprintf("witness: %v", err))
		return nil
	}
	commits, nodeBase, err := w.Repo.NodeCommits(w.StepBase, w.RunID, w.NodeID)
	if err != nil {
		return fail(err)
	}
	if nodeBase == "" {
		nodeBase = w.StepBase
	}
	rec.NodeBase, rec.Commits = nodeBase, commits
	touched, err := w.Repo.FilesChangedIn(commits)
	if err != nil {
		return fail(err)
	}
	all := j.Changed
	if nodeBase != w.StepBase {
		if all, err = w.Repo.ChangedPathsSince(nodeBase); err != nil {
			return fail(err)
		}
	}
	touched = append(touched, j.Changed...)
	rec.Files = present(env.Dir, evidence.TestFiles(intersect(all, touched), cfg.Guard.TestFiles))
	if len(rec.Files) == 0 {
		b.decide(Fail, exit.Negative, evidence.NoWitness(nil, testresults.Results{}, testresults.Results{}))
		return nil
	}
	argv := cfg.Guard.Witness
	if len(argv) == 0 {
		argv = cfg.Guard.Command
	}
	rec.Argv = (evidence.Vars{Results: "${RUNNER_TEST_RESULTS}", Files: rec.Files}).Expand(argv)
	links := evidence.Links(j.Ignored)
	dir := filepath.Join(filepath.Dir(logPath), iterdir.WitnessDir)
	scratch := evidence.ScratchFor(w.GitDir)
	run, err := witnessRun(in, env, cfg, deadline, j, scratch, links, "base", dir, argv, rec.Files, func() error {
		return scratch.Prepare(w.Repo, nodeBase, env.Dir, rec.Files, links)
	}, beside)
	if err != nil {
		return fail(err)
	}
	return run
}

// finish waits for the base run and judges it against the guard's tests
// by name (evidence.Witnesses): Pass with at least one witness, Fail
// without, Error when the check could not run (git, a scratch), Timeout
// or Interrupted as the guard's.
func (b *witnessBase) finish(env *cli.Env, j Judging, guardRes testresults.Results) (rec *iterdir.Witness, outcome string, code int, message string) {
	<-b.done
	b.cancel()
	rec = b.rec
	if b.decided {
		return rec, b.outcome, b.code, b.msg
	}
	read := func(f string) ([]byte, error) { return os.ReadFile(filepath.Join(env.Dir, filepath.FromSlash(f))) }
	rec.Tests = evidence.Witnesses(guardRes, b.r.res, b.r.exit, j.Best.Names, evidence.Owner(rec.Files, read, j.Best.Names))
	if len(rec.Tests) == 0 {
		return rec, Fail, exit.Negative, evidence.NoWitness(rec.Files, b.r.res, guardRes)
	}
	return rec, Pass, exit.OK, ""
}

// beside reports whether the witness's base run may start beside the
// guard's: it must be asked for (an execute leaf at level witness), and no
// container engine confines the guard.
func beside(cfg config.Config, j Judging) bool {
	return j.Results != "" && j.Witness != nil && j.Witness.Level == tree.EvidenceWitness &&
		!(cfg.Sandbox.ConfinesGuard() && cfg.Sandbox.Mode == config.SandboxDocker)
}

// pythonPath is the witness's PYTHONPATH when the work tree at root is
// installed editable into a virtual environment it links to, or into the
// one the runner runs in (VIRTUAL_ENV): the scratch's counterparts of the
// installed directories first (evidence.EditablePaths), then the
// environment's own PYTHONPATH. "" when there is nothing to put first.
func pythonPath(root, scratch string, links []string) string {
	var venvs []string
	for _, l := range links {
		if b := path.Base(l); b == ".venv" || b == "venv" {
			venvs = append(venvs, filepath.Join(root, filepath.FromSlash(l)))
		}
	}
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		venvs = append(venvs, v)
	}
	first := evidence.EditablePaths(root, scratch, venvs)
	if len(first) == 0 {
		return ""
	}
	if old := os.Getenv("PYTHONPATH"); old != "" {
		first = append(first, old)
	}
	return strings.Join(first, string(os.PathListSeparator))
}

// witnessRunResult is one witness run: its tests by name and exit status,
// or the outcome that ended it early (Timeout, Interrupted, Error) with
// its code and message, or a failure to prepare it.
type witnessRunResult struct {
	res     testresults.Results
	exit    int
	outcome string
	code    int
	msg     string
	err     error
}

// witnessRun prepares the scratch (fill) and the run of argv there for
// the files, confined as the guard is (the work tree's paths the scratch
// links to shown read-only), its output in <dir>/<name>.log and its
// results in <dir>/<name>-results (dir is the iteration's witness
// directory); run, called once, runs it. beside: it runs beside the
// guard's own run (proc.Spec.Spared), else alone, killing what escapes
// it. The error is the preparation's.
func witnessRun(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, j Judging, scratch evidence.Scratch, links []string, name, dir string, argv, files []string, fill func() error, beside bool) (run func(context.Context) witnessRunResult, err error) {
	if err := fill(); err != nil {
		return nil, fmt.Errorf("prepare the scratch checkout (%s code): %w", name, err)
	}
	resultsDir := filepath.Join(dir, name+"-results")
	if err := os.RemoveAll(resultsDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return nil, err
	}
	vars := evidence.Vars{Results: resultsDir, Files: files}
	stream := &testresults.Stream{}
	// Beside the guard's own run, whose sweep of escaped processes
	// spares this one's (Spared), the run sweeps nothing itself.
	spec := proc.Spec{
		Argv: vars.Expand(argv), Dir: scratch.Dir, Deadline: deadline, KillEscaped: !beside, Spared: beside, Tee: stream,
		Env: append(append(git.Strip(os.Environ()), "RUNNER_ITER_DIR="+filepath.Dir(dir)), vars.Env()...),
	}
	if py := pythonPath(env.Dir, scratch.Dir, links); py != "" {
		spec.Env = append(spec.Env, "PYTHONPATH="+py)
	}
	writable := []string{resultsDir}
	if j.Caches != nil {
		spec.Env = append(spec.Env, j.Caches.WitnessEnv()...)
		writable = append(writable, j.Caches.Root)
	}
	shown := make([]string, len(links))
	for i, l := range links {
		shown[i] = filepath.Join(env.Dir, filepath.FromSlash(l))
	}
	release, err := confineIn(env, cfg.Sandbox, scratch.Dir, shown, dir, name, writable, &spec)
	if err != nil {
		return nil, err
	}
	if beside {
		spec.KillEscaped = false // confineIn sets it by the sandbox
	}
	return func(ctx context.Context) witnessRunResult {
		r, _, err := proc.RunToFile(ctx, spec, filepath.Join(dir, name+".log"), int64(cfg.GuardOutputLimitBytes))
		if rerr := release(); rerr != nil && err == nil {
			err = rerr
		}
		var se *proc.StartError
		switch {
		case errors.As(err, &se):
			return witnessRunResult{outcome: Error, code: exit.RunnerError, msg: fmt.Sprintf("the witness could not start: %v (set [guard] witness, or install it)", se)}
		case err != nil:
			return witnessRunResult{err: err}
		case r.Canceled:
			return witnessRunResult{outcome: Interrupted, code: in.Code(), msg: "witness interrupted by " + in.Cause()}
		case r.TimedOut:
			return witnessRunResult{outcome: Timeout, code: exit.Timeout, msg: fmt.Sprintf("witness timed out: the iteration's budget ended at %s", deadline.Format(time.RFC3339))}
		}
		return witnessRunResult{res: results(resultsDir, scratch.Dir, stream), exit: r.ExitCode}
	}, nil
}

// intersect is the paths of a that are also in b.
func intersect(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, p := range b {
		in[p] = true
	}
	var out []string
	for _, p := range a {
		if in[p] {
			out = append(out, p)
		}
	}
	return out
}

// present is the paths of ps (repository-relative) that exist under root:
// a test file the node deleted has nothing to lay over the base.
func present(root string, ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			out = append(out, p)
		}
	}
	return out
}
