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
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	return cli.Run("guard-run", "Run the guard within the iteration's remaining budget (confined by [sandbox] mode, bwrap or docker, unless [sandbox] guard = false), then the test ratchet ([guard] ratchet) after a pass; output capped into <iter>/guard.log, outcome in <iter>/guard.json. With --base, what the guard changed and may not (protected paths, runner-owned files, HEAD, git's settings, the iteration logs) is put back and the guard fails, the reasons at the end of guard.log; a pass that changed what the iteration commits runs again (the first log kept as guard.first.log) and stands only if that run changes nothing. Exit 0 pass, 1 fail (or fewer tests passing than the run's best), 124 timed out, 130/143 interrupted, 6 the guard could not run.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs the guard.
func (o *Options) Run(env *cli.Env) error {
	err := o.run(env)
	o.SealFD.Exit(err)
	return err
}

// run is Run before its exit is told on --seal-fd. With the step's base,
// a pass stands only on files the guard's run left as it found them: a
// run that changed what the iteration commits (a formatter, a snapshot
// written, or a test file that patched the code for this run and then
// removed itself) is run once more on what it left, its first log kept
// as guard.first.log, and the second run must change nothing.
func (o *Options) run(env *cli.Env) error {
	based := o.Base.Base != ""
	s, err := o.once(env, based, "", nil)
	if s == nil {
		return err
	}
	if moved := evidence.Differ(s.before, s.after); based && s.rec.Outcome == Pass && len(moved) > 0 {
		note := fmt.Sprintf("the guard's run changed %s, which the iteration commits: the guard runs again on what it left, and its pass stands only if that run changes nothing (the first run's log: %s)", firstFew(moved, 5), iterdir.GuardFirstLog)
		env.Warnf("%s", note)
		guard.Note(env, filepath.Join(s.it.Dir, iterdir.GuardLog), note)
		if err := os.Rename(filepath.Join(s.it.Dir, iterdir.GuardLog), filepath.Join(s.it.Dir, iterdir.GuardFirstLog)); err != nil {
			return exit.Errorf(exit.RunnerError, "keep the guard's first log: %v", err)
		}
		// The private caches are as the first run left them: no session
		// ran since, so the second starts from them, not emptied.
		digest := ""
		if s.j.Caches != nil {
			if digest, err = s.j.Caches.Digest(); err != nil {
				return exit.Errorf(exit.RunnerError, "the guard's caches: %v", err)
			}
		}
		first := s
		if s, err = o.once(env, based, digest, moved); s == nil {
			return err
		}
		// One record of the guard's two runs: from the first's start, for
		// both their times, saying so.
		s.rec.StartedAt = cmp.Or(first.rec.StartedAt, s.rec.StartedAt)
		s.rec.DurationMS += first.rec.DurationMS
		again := fmt.Sprintf("the guard ran twice: its first run (%s) changed %s, which the iteration commits; this is its second", iterdir.GuardFirstLog, firstFew(moved, 5))
		s.rec.Notes = append(s.rec.Notes, again)
		// A second run that never started (the budget spent) left no log.
		if f, err := os.OpenFile(filepath.Join(s.it.Dir, iterdir.GuardLog), os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			f.Close()
		}
		guard.Note(env, filepath.Join(s.it.Dir, iterdir.GuardLog), again)
		if again := evidence.Differ(s.before, s.after); s.rec.Outcome == Pass && len(again) > 0 {
			why := fmt.Sprintf("the guard's run changed %s again, on its second run: a pass must be of the files the iteration commits (if the guard writes these on every run, have git ignore them; a tracked one the operator untracks, git rm --cached, outside the run)", firstFew(again, 5))
			if err := failFor(&s.rec, &s.code, []string{why}, cancel.Verdict{}, s.it.Dir); err != nil {
				return err
			}
		}
	}
	// Caches built from files the run then changed are not the next
	// run's: a tool that trusts modification times would reuse them.
	if moved := evidence.Differ(s.before, s.after); based && len(moved) > 0 && s.j.Caches != nil {
		env.Warnf("the guard's run changed %s, which the iteration commits: its private caches are emptied, for the next run to build from the files as they are", firstFew(moved, 5))
		if err := s.j.Caches.Wipe(); err != nil {
			return exit.Errorf(exit.RunnerError, "empty the guard's caches: %v", err)
		}
	}
	rec, code, it := s.rec, s.code, s.it
	if rec.Evidence != nil && rec.Outcome != Pass {
		rec.Evidence.Held = false
	}
	// A guard that could not run leaves nothing for the next one: the
	// runner error puts the runner-owned files back.
	if rec.Outcome != Error {
		if err := guard.Record(env.Dir, it.Begin.RunID, rec, s.j.Caches, false); err != nil {
			return exit.Errorf(exit.RunnerError, "%v", err)
		}
	}
	return o.report(env, rec, code, it)
}

// guardSession is one run of the guard in its session (once), judged.
// before and after are what the iteration would commit as the guard's
// run began and once it ended (evidence.State; nil without a base).
type guardSession struct {
	rec           iterdir.Guard
	code          int
	it            stepctx.Iteration
	j             guard.Judging
	before, after evidence.State
}

// once runs the guard in its session (session.Run) and judges it: the
// checks' violations fail it; with the step's base, what its run made
// inside the work tree that git ignores is removed and a repository it
// made is unembedded, then what the iteration would commit is read
// again. digest, when set, is the private caches' digest to judge them by
// in place of the one the base records; touched are files whose
// modification time is set to now before the run, as is that of a changed
// file older than the iteration (evidence.Touch). nil when the guard did not run (the error says why).
func (o *Options) once(env *cli.Env, based bool, digest string, touched []string) (*guardSession, error) {
	var s guardSession
	var synced func(iterdir.Guard, int) (iterdir.Guard, int)
	var began time.Time
	var kept []evidence.Dir
	var nested []git.Nested
	var subReasons []string
	// The check after the guard is the step's (it knows the base): run
	// alone, guard-run only runs the guard.
	out, err := session.Run(env, session.Spec{
		Iter: o.Iter, Base: o.Base.Base, Seal: based,
		// judging's files, read with config.toml in one git process.
		AtBase: []string{layout.GuardCache, layout.Tree, ".gitmodules"},
		Own:    []string{iterdir.GuardLog, iterdir.GuardFile, iterdir.ResultsDir, iterdir.WitnessDir},
		Who:    "the guard", Session: "the guard", Fails: "the guard fails",
		Confinement: func(it stepctx.Iteration) session.Confinement {
			return guardConfinement(it.Config.Sandbox, env.Dir)
		},
		Tell: func(digest string) { o.Tell(env, digest) },
	}, func(in *cli.Interrupt, it stepctx.Iteration) error {
		var err error
		if s.j, err = judging(env, it, based); err != nil {
			return err
		}
		if digest != "" && s.j.Caches != nil {
			s.j.CacheDigest = digest
		}
		if based {
			// What a session made or changed inside a submodule is in
			// no commit: the guard does not run on it.
			if subReasons, err = submodules(env, it, s.j.Submodules, it.Begin.StartedAt, "the iteration"); err != nil {
				return err
			}
			if s.j.Changed, err = moveRefused(env, it, s.j.Changed, "the iteration"); err != nil {
				return err
			}
			if s.before, err = evidence.StateOf(env.Dir, withoutAny(s.j.Changed, s.j.Submodules)); err != nil {
				return exit.Errorf(exit.RunnerError, "read what the iteration commits: %v", err)
			}
			nested = nestedAmong(env.Dir, s.j.Changed)
			// A changed file whose time is older than the iteration had
			// it set back; what the first run changed, whatever its time.
			if err := evidence.Touch(env.Dir, s.j.Changed, it.Begin.StartedAt); err != nil {
				return exit.Errorf(exit.RunnerError, "set the changed files' modification time: %v", err)
			}
			if err := evidence.Touch(env.Dir, touched, time.Time{}); err != nil {
				return exit.Errorf(exit.RunnerError, "set the changed files' modification time: %v", err)
			}
		}
		// guard.log reaches the disk while the session is checked.
		began = time.Now().Add(-10 * time.Millisecond) // birth times are stamped from a coarse clock
		kept = keptBefore(env, s.j)
		s.rec, s.code, synced = guard.Run(in, env, it.Config, it.Begin.Deadline, filepath.Join(it.Dir, iterdir.GuardLog), s.j)
		// Before any git process reads the work tree (the checks).
		if gone := evidence.RemoveUnlisted(env.Dir, began); len(gone) > 0 {
			env.Warnf("removed %s the guard's run made that git lists nowhere and no commit holds (an empty directory, a FIFO): %s", vocab.Plural(len(gone), "path", "paths"), firstFew(gone, 5))
		}
		return nil
	})
	if synced == nil {
		return nil, err // the guard did not run
	}
	if s.rec.EscapedKilled > 0 {
		env.Warnf("killed %s the guard left running outside its process group: %s", vocab.Plural(s.rec.EscapedKilled, "process", "processes"), strings.Join(s.rec.Escaped, ", "))
	}
	s.rec, s.code = synced(s.rec, s.code)
	if err != nil {
		return nil, err
	}
	s.it = out.Iteration
	if based {
		var reasons []string
		subs := slices.Clone(s.j.Submodules)
		if s.after, reasons, err = settle(env, s.it, nested, &subs, began, kept); err != nil {
			return nil, err
		}
		// What the guard's own run changed in a submodule is put back
		// for the next run, and said; the commit never held it.
		after, err := submodules(env, s.it, subs, began, "the guard's run")
		if err != nil {
			return nil, err
		}
		for _, r := range after {
			env.Warnf("%s", r)
		}
		for _, r := range slices.Concat(reasons, subReasons) {
			if !slices.Contains(out.Violations, r) {
				out.Violations = append(out.Violations, r)
			}
		}
	}
	if out.Verdict.Appeared {
		s.rec.Cancel = &out.Verdict
	}
	if err := failFor(&s.rec, &s.code, out.Violations, out.Verdict, s.it.Dir); err != nil {
		return nil, err
	}
	return &s, nil
}

// settle, after the guard's run, moves away the .git of a repository the
// run made inside the work tree (as agent-exec does after the agent's
// session: git would not look into it), puts back git's attributes files
// (a reason each, for the caller to fail the run), removes what the run
// made that git ignores (evidence.SweepMadeAmong: a test that wrote a
// module where git does not look would have every later guard load it,
// and the step commit none of it), moves away what git refuses to stage,
// and returns what the iteration would commit now, the base's submodules
// left out (submodules puts them back apart), adding to submodules those
// the listing shows changed. nested are the repositories
// inside the work tree before the run (nestedAmong). A line on stderr says
// what went.
func settle(env *cli.Env, it stepctx.Iteration, nested []git.Nested, submodules *[]string, since time.Time, kept []evidence.Dir) (after evidence.State, reasons []string, err error) {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return nil, nil, exit.Wrap(exit.RunnerError, err)
	}
	changed, ignored, err := repo.ChangesSince(it.Base)
	if err != nil {
		return nil, nil, exit.Errorf(exit.RunnerError, "list the work tree's changes after the guard: %v", err)
	}
	if slices.ContainsFunc(changed, func(p string) bool { return strings.HasSuffix(p, "/") }) {
		dirs, err := repo.Dirs()
		if err != nil {
			return nil, nil, exit.Errorf(exit.RunnerError, "find the git directory: %v", err)
		}
		keep := filepath.Join(dirs.Git, "treeloop", "embedded", it.Begin.RunID, layout.IterName(it.Begin.Iteration))
		moved, err := repo.UnembedMade(keep, nested, since)
		for _, e := range moved {
			env.Warnf("%s/ is a git repository the guard's run made inside the work tree: its .git is kept in %s, and its files are the work tree's", e.Path, e.Kept)
		}
		if err != nil {
			return nil, nil, exit.Errorf(exit.RunnerError, "git repositories the guard's run made: %v", err)
		}
		if changed, ignored, err = repo.ChangesSince(it.Base); err != nil {
			return nil, nil, exit.Errorf(exit.RunnerError, "list the work tree's changes after the guard: %v", err)
		}
	}
	// git's attributes, put back after the agent's session, decide what
	// the commit holds of the files the guard ran on. changed lists
	// every tracked path that differs from the base, staged or not: the
	// attributes files git diff-files would list are among them.
	back, err := repo.RestoreAttributesListed(it.Base, nil, changed, ignored)
	if err != nil {
		return nil, nil, exit.Errorf(exit.RunnerError, "check git's attributes files: %v", err)
	}
	for _, p := range back {
		reasons = append(reasons, fmt.Sprintf("the guard's run changed %s: %s; the runner put it back", p, git.WhyRestored(p)))
	}
	m, err := evidence.SweepMadeAmong(repo, ignored, since, kept)
	if len(m.Removed) > 0 {
		env.Warnf("removed %s the guard's run made that git ignores (no later guard runs on it): %s", vocab.Plural(len(m.Removed), "path", "paths"), strings.Join(m.Removed, ", "))
	}
	if err != nil {
		return nil, nil, exit.Errorf(exit.RunnerError, "remove what the guard's run made that git ignores: %v", err)
	}
	if changed, err = moveRefused(env, it, changed, "the guard's run"); err != nil {
		return nil, nil, err
	}
	*submodules = gitlinks(env.Dir, *submodules, changed)
	if after, err = evidence.StateOf(env.Dir, withoutAny(changed, *submodules)); err != nil {
		return nil, nil, exit.Errorf(exit.RunnerError, "read what the iteration commits after the guard: %v", err)
	}
	return after, reasons, nil
}

// moveRefused moves away, into the git directory under
// treeloop/refused/<run>/<iteration> (layout.IterName), the files among
// changed that git refuses to stage (git.Repo.Refused: `.GIT/x`, `git~1/x`
// where core.protectNTFS is on, as it is by default): no commit can hold
// them, so the guard must not run on them, and the step's staging would
// stop on them. It says so on stderr (who: who made them) and returns
// changed without them.
func moveRefused(env *cli.Env, it stepctx.Iteration, changed []string, who string) ([]string, error) {
	var maybe []string
	for _, p := range changed {
		if !git.MayRefuse(p) {
			continue
		}
		if st, err := os.Lstat(filepath.Join(env.Dir, filepath.FromSlash(p))); err == nil && !st.IsDir() {
			maybe = append(maybe, p)
		}
	}
	if len(maybe) == 0 {
		return changed, nil
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return nil, exit.Wrap(exit.RunnerError, err)
	}
	refused, err := repo.Refused(maybe)
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "ask git which paths it stages: %v", err)
	}
	if len(refused) == 0 {
		return changed, nil
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "find the git directory: %v", err)
	}
	keep := filepath.Join(dirs.Git, "treeloop", "refused", it.Begin.RunID, layout.IterName(it.Begin.Iteration))
	if err := repo.MoveAway(refused, keep); err != nil {
		return nil, exit.Errorf(exit.RunnerError, "move away what git refuses to stage: %v", err)
	}
	env.Warnf("moved %s %s made that git refuses to stage (no commit can hold them) to %s: %s", vocab.Plural(len(refused), "path", "paths"), who, keep, firstFew(refused, 5))
	return slices.DeleteFunc(changed, func(p string) bool { return slices.Contains(refused, p) }), nil
}

// submodules removes what was made since inside the work trees of the
// base's submodules (evidence.Submodules), saying so on stderr (who: who
// made it), and returns a reason for each submodule whose tracked files
// differ from its commit.
func submodules(env *cli.Env, it stepctx.Iteration, paths []string, since time.Time, who string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return nil, exit.Wrap(exit.RunnerError, err)
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "find the git directory: %v", err)
	}
	keep := filepath.Join(dirs.Git, "treeloop", "embedded", it.Begin.RunID, layout.IterName(it.Begin.Iteration))
	m, reasons, err := evidence.Submodules(repo, it.Base, paths, since, keep)
	if len(m.Removed) > 0 {
		env.Warnf("removed %s %s made inside submodules (the iteration commits a submodule's commit, not its files): %s", vocab.Plural(len(m.Removed), "path", "paths"), who, firstFew(m.Removed, 5))
	}
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "%v", err)
	}
	return reasons, nil
}

// nestedAmong is the repositories a listing of the changed paths names
// whole ("dir/"), with their .git's inode as it is now (git.Nested): taken
// before the guard, for UnembedMade to leave where they are.
func nestedAmong(root string, before []string) []git.Nested {
	nested := []git.Nested{}
	for _, p := range before {
		rel, ok := strings.CutSuffix(p, "/")
		if !ok {
			continue
		}
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel), ".git")); err == nil {
			if ino, ok := fsutil.Inode(st); ok {
				nested = append(nested, git.Nested{Path: rel, Ino: ino})
			}
		}
	}
	return nested
}

// gitlinks is subs with the gitlinks among changed: a changed path that
// is a directory is a submodule whose work tree differs, one without
// .gitmodules too ("dir/" is a repository git does not look into, not
// the base's).
func gitlinks(root string, subs, changed []string) []string {
	for _, p := range changed {
		if strings.HasSuffix(p, "/") || slices.Contains(subs, p) {
			continue
		}
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil && st.IsDir() {
			subs = append(subs, p)
		}
	}
	return subs
}

// withoutAny is ps without the paths of out.
func withoutAny(ps, out []string) []string {
	if len(out) == 0 {
		return ps
	}
	return slices.DeleteFunc(slices.Clone(ps), func(p string) bool { return slices.Contains(out, p) })
}

// firstFew is the first n of ps, joined, with how many more.
func firstFew(ps []string, n int) string {
	if len(ps) <= n {
		return strings.Join(ps, ", ")
	}
	return strings.Join(ps[:n], ", ") + fmt.Sprintf(" and %d more", len(ps)-n)
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
	if len(files) != 3 {
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
	if files[2].OK {
		if j.Submodules, err = repo.Submodules(it.Base); err != nil {
			return j, exit.Errorf(exit.RunnerError, "read the submodules of %s: %v", it.Base, err)
		}
	}
	// What the iteration commits as the guard begins (guard-run compares
	// it after), the witness's changed paths, and the ignored paths whose
	// build outputs are removed and whose dependency directories the sweep
	// leaves whole, in one listing.
	if j.Changed, j.Ignored, err = repo.ChangesSince(it.Base); err != nil {
		return j, exit.Errorf(exit.RunnerError, "list the work tree's changes: %v", err)
	}
	j.Submodules = gitlinks(env.Dir, j.Submodules, j.Changed)
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
