// Package guardrun is the guard-run command: it runs the guard ([guard]
// command of config.toml, `just ci` by default) for an iteration within what
// is left of the iteration's shared budget (DESIGN.md decision 6), streams
// its output into <iter>/guard.log under guard_output_limit_bytes, and
// records the outcome in <iter>/guard.json (seed 000 §5 step 10).
//
// The guard runs scripts the agent wrote, so after it the same policy as
// after the agent applies: a protected path, a runner-owned
// file, HEAD, the branch or the run's iteration logs changed while the
// guard ran are put back, and the iteration is not a pass (outcome fail,
// the reasons appended to guard.log, which the next session's failure.md
// shows).
package guardrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/ratchet"
	"github.com/treeloop/treeloop/lib/session"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Outcomes recorded in guard.json (lib/guard).
const (
	Pass        = guard.Pass
	Fail        = guard.Fail
	Timeout     = guard.Timeout
	Interrupted = guard.Interrupted
	Error       = guard.Error
)

// Options is the command line of guard-run.
type Options struct {
	cli.Chdir
	stepctx.Base
	stepctx.SealFD
	Iter string `required:"" placeholder:"DIR" help:"The iteration directory (from iter-log begin): its deadline bounds the guard; guard.log and guard.json go there."`
	JSON bool   `name:"json" help:"Print guard.json's record on stdout."`
	cli.Get
}

// Main runs guard-run and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("guard-run", "Run the guard within the iteration's remaining budget (confined by [sandbox] mode, bwrap or docker, unless [sandbox] guard = false), then the test ratchet ([guard] ratchet) after a pass; output capped into <iter>/guard.log, outcome in <iter>/guard.json. With --base, what the guard changed and may not (protected paths, runner-owned files, HEAD, git's settings, the iteration logs) is put back and the guard fails, the reasons at the end of guard.log. Exit 0 pass, 1 fail (or fewer tests passing than the run's best), 124 timed out, 130/143 interrupted, 6 the guard could not run.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs the guard.
func (o *Options) Run(env *cli.Env) error {
	err := o.run(env)
	o.SealFD.Exit(err)
	return err
}

// run is Run before its exit is told on --seal-fd.
func (o *Options) run(env *cli.Env) error {
	based := o.Base.Base != ""
	var rec iterdir.Guard
	var code int
	var synced func(iterdir.Guard, int) (iterdir.Guard, int)
	var j guard.Judging
	var began time.Time
	var kept []evidence.Dir
	// The check after the guard is the step's (it knows the base): run
	// alone, guard-run only runs the guard.
	out, err := session.Run(env, session.Spec{
		Iter: o.Iter, Base: o.Base.Base, Seal: based,
		// judging's files, read with config.toml in one git process.
		AtBase: []string{layout.GuardCache, layout.Tree},
		Own:    []string{iterdir.GuardLog, iterdir.GuardFile, iterdir.ResultsDir, iterdir.WitnessDir},
		Who:    "the guard", Session: "the guard", Fails: "the guard fails",
		Confinement: func(it stepctx.Iteration) session.Confinement {
			return guardConfinement(it.Config.Sandbox, env.Dir)
		},
		Tell: func(digest string) { o.Tell(env, digest) },
	}, func(in *cli.Interrupt, it stepctx.Iteration) error {
		var err error
		if j, err = judging(env, it, based); err != nil {
			return err
		}
		// guard.log reaches the disk while the session is checked.
		began = time.Now().Add(-10 * time.Millisecond) // birth times are stamped from a coarse clock
		kept = keptBefore(env, j)
		rec, code, synced = guard.Run(in, env, it.Config, it.Begin.Deadline, filepath.Join(it.Dir, iterdir.GuardLog), j)
		return nil
	})
	if synced == nil {
		return err // the guard did not run
	}
	if rec.EscapedKilled > 0 {
		env.Warnf("killed %s the guard left running outside its process group: %s", vocab.Plural(rec.EscapedKilled, "process", "processes"), strings.Join(rec.Escaped, ", "))
	}
	rec, code = synced(rec, code)
	if err != nil {
		return err
	}
	if based {
		if err := sweep(env, began, kept); err != nil {
			return err
		}
	}
	it := out.Iteration
	if out.Verdict.Appeared {
		rec.Cancel = &out.Verdict
	}
	if err := failFor(&rec, &code, out.Violations, out.Verdict, it.Dir); err != nil {
		return err
	}
	if rec.Evidence != nil && rec.Outcome != Pass {
		rec.Evidence.Held = false
	}
	// A guard that could not run leaves nothing for the next one: the
	// runner error puts the runner-owned files back.
	if rec.Outcome != Error {
		if err := guard.Record(env.Dir, it.Begin.RunID, rec, j.Caches, false); err != nil {
			return exit.Errorf(exit.RunnerError, "%v", err)
		}
	}
	return o.report(env, rec, code, it)
}

// sweep removes what the guard's run made that git ignores
// (evidence.SweepMade): a test that wrote a module where git does not look
// would have every later guard load it, and the step commit none of it.
// The guard's own verdict stands; a line on stderr says what went.
func sweep(env *cli.Env, since time.Time, kept []evidence.Dir) error {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	m, err := evidence.SweepMade(repo, since, kept)
	if len(m.Removed) > 0 {
		env.Warnf("removed %s the guard's run made that git ignores (no later guard runs on it): %s", vocab.Plural(len(m.Removed), "path", "paths"), strings.Join(m.Removed, ", "))
	}
	if err != nil {
		return exit.Errorf(exit.RunnerError, "remove what the guard's run made that git ignores: %v", err)
	}
	return nil
}

// keptBefore is what sweep leaves whole (evidence.KeptAmong), from the
// ignored paths judging listed, else listed here; none when they cannot
// be (sweep then looks into every directory).
func keptBefore(env *cli.Env, j guard.Judging) []evidence.Dir {
	if j.Ignored != nil {
		return evidence.KeptAmong(env.Dir, j.Ignored)
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return nil
	}
	kept, _ := evidence.Kept(repo)
	return kept
}

// judging is what the guard's run is judged by (guard.Judging): the
// run's best and the tests that passed at its last pass, read from the
// step's base; the results directory; the private caches with the digest
// the base records; and, for an execute leaf, the evidence its node needs
// (a witness, or the suite alone). Without a base (guard-run alone), the
// caches and the witness are left out: there is no commit to judge by.
func judging(env *cli.Env, it stepctx.Iteration, based bool) (guard.Judging, error) {
	var j guard.Judging
	cfg := it.Config
	if len(cfg.Guard.Ratchet) > 0 || cfg.Guard.EvidenceOn() {
		best, err := guard.RunBest(env.Dir, it.Begin.RunID, it.Base, len(cfg.Guard.Ratchet) > 0)
		if err != nil {
			return j, exit.Errorf(exit.RunnerError, "read the run's best from git: %v", err)
		}
		j.Best = best
	}
	if cfg.Guard.EvidenceOn() {
		j.Results = filepath.Join(it.Dir, iterdir.ResultsDir)
	}
	if !based {
		return j, nil
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return j, exit.Wrap(exit.RunnerError, err)
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return j, exit.Errorf(exit.RunnerError, "find the git directory: %v", err)
	}
	files := it.AtBase // the caches' digest and the tree, at the base
	if len(files) != 2 {
		return j, exit.Errorf(exit.RunnerError, "read %s at %s: not read with %s", layout.Tree, it.Base, layout.Config)
	}
	witness := cfg.Guard.EvidenceOn() && it.Begin.Mode == tree.NextExecute
	if witness && (files[1].Err != nil || !files[1].OK) {
		// The step began on a commit of the run, which holds the tree: a
		// witness must not be given up silently for want of it.
		why := "it is not there"
		if files[1].Err != nil {
			why = files[1].Err.Error()
		}
		return j, exit.Errorf(exit.RunnerError, "read %s at %s to judge the node's witness: %s", layout.Tree, it.Base, why)
	}
	switch {
	case witness:
		if j.Changed, j.Ignored, err = repo.ChangesSince(it.Base); err != nil {
			return j, exit.Errorf(exit.RunnerError, "list the work tree's changes: %v", err)
		}
	case cfg.Guard.Caches == config.CachesPrivate:
		// The build outputs to remove need the ignored paths alone: no
		// lstat of every tracked file.
		if j.Ignored, err = repo.Ignored(); err != nil {
			return j, exit.Errorf(exit.RunnerError, "list the work tree's ignored files: %v", err)
		}
	}
	if cfg.Guard.Caches == config.CachesPrivate {
		c := evidence.CachesFor(dirs.Git)
		j.Caches = &c
		if files[0].OK {
			j.CacheDigest = guard.ParseCacheDigest(files[0].Data)
		}
	}
	if !witness {
		return j, nil
	}
	root, ps := tree.Load(files[1].Data)
	if len(ps) > 0 {
		return j, exit.Errorf(exit.RunnerError, "%s at %s: %v", layout.Tree, it.Base, ps)
	}
	n, _ := tree.Find(root, it.Begin.NodeID)
	level, from := evidence.Level(n, cfg.Guard)
	j.Witness = &guard.Witness{Repo: repo, GitDir: dirs.Git, RunID: it.Begin.RunID, NodeID: it.Begin.NodeID, StepBase: it.Base, Level: level, LevelFrom: from}
	return j, nil
}

// failFor makes the guard's run a failure when the checks after it found
// violations (appended to guard.log): whatever the guard's exit status,
// it ran against files it changed, so it proves nothing. A guard that
// stopped itself by creating the cancel file is not an interruption
// either. A timeout or an operator's interrupt keeps its outcome.
func failFor(rec *iterdir.Guard, code *int, violations []string, verdict cancel.Verdict, dir string) error {
	if len(violations) == 0 {
		return nil
	}
	if err := appendLog(filepath.Join(dir, iterdir.GuardLog), violations); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.GuardLog, fsutil.Cause(err))
	}
	if rec.Outcome == Pass || rec.Outcome == Fail || rec.Outcome == Interrupted && verdict.By == cancel.BySession {
		rec.Outcome, *code = Fail, exit.Negative
		rec.Message = fmt.Sprintf("guard failed: %s", strings.Join(violations, "; "))
	}
	return nil
}

// report records the guard's run (after the ratchet's names and notes:
// afterPass) in guard.json and prints it; the error carries its code.
func (o *Options) report(env *cli.Env, rec iterdir.Guard, code int, it stepctx.Iteration) error {
	if err := o.afterPass(env, &rec, it); err != nil {
		return err
	}
	if err := iterdir.Write(it.Dir, iterdir.GuardFile, rec); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.GuardFile, fsutil.Cause(err))
	}
	if o.JSON || o.Wanted() {
		if err := o.PrintJSON(env, rec); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "guard=%s exit=%d duration_ms=%d\n", rec.Outcome, rec.ExitCode, rec.DurationMS)
	}
	if rec.Message != "" && rec.Outcome != Pass {
		env.Errorf("%s", rec.Message)
	}
	if code == 0 {
		return nil
	}
	return cli.Silent(code)
}

// appendLog adds the runner's reasons at the end of guard.log, past its
// cap: the next session's failure.md shows the log's end.
func appendLog(path string, reasons []string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n[treeloop] the guard's run does not count:\n")
	for _, r := range reasons {
		fmt.Fprintf(&b, "[treeloop] %s\n", r)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// afterPass, with [guard] ratchet and the step's base: the tests a pass
// that stands reported passing become the run's best names
// (layout.TestsPassed, committed with the iteration), and a TestMain or
// test-file init the session added is noted in guard.log and guard.json.
func (o *Options) afterPass(env *cli.Env, rec *iterdir.Guard, it stepctx.Iteration) error {
	if rec.Ratchet == nil || o.Base.Base == "" {
		return nil
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	notes, err := guard.EntryPoints(repo, it.Base)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "test ratchet: %v", err)
	}
	for _, n := range notes {
		env.Warnf("%s", n)
		rec.Notes = append(rec.Notes, n)
		guard.Note(env, filepath.Join(it.Dir, iterdir.GuardLog), "note: "+n)
	}
	if rec.Outcome != Pass || len(rec.Ratchet.Passed) == 0 || rec.Evidence != nil {
		return nil
	}
	if err := fsutil.WriteAtomic(env.Abs(layout.TestsPassed), ratchet.FormatNames(it.Begin.RunID, rec.Ratchet.Passed), 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", layout.TestsPassed, fsutil.Cause(err))
	}
	return nil
}

// guardConfinement is the sandbox the guard runs in (lib/guard: [sandbox]
// guard, the default under a sandbox, with none of the agent's runner
// files writable), for its seal (session.Hold): the zero Confinement when
// it runs unconfined.
func guardConfinement(sb config.Sandbox, root string) session.Confinement {
	if !sb.ConfinesGuard() {
		return session.Confinement{}
	}
	return session.Confinement{Sandbox: sb, Root: root}
}
