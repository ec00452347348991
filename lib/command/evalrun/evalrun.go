// Package evalrun is the eval-run command (seed 000 §13 and §15, STYLE.md
// "The eval harness"): it checks every case, then runs each case × backend
// × run as a real loop in a fresh git workspace (runner-init, the case's
// config overrides committed, runner-start, runner-loop, all as processes
// from PATH), captures the artifacts, runs the checks on the final
// workspace, classifies the outcome, writes each result atomically when
// it ends, and summarizes the matrix as Markdown and JSON.
package evalrun

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/eval"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of eval-run.
type Options struct {
	cli.Chdir
	Cases          []string `arg:"" optional:"" name:"case" help:"Case ids (eval/cases/<id>.toml) or case files. Default: every case in --cases."`
	CasesDir       string   `name:"cases" default:"eval/cases" placeholder:"DIR" help:"Directory of the case files."`
	BackendsFile   string   `name:"backends-file" default:"eval/backends.toml" placeholder:"FILE" help:"Shared backends: one [NAME] table each (optional file)."`
	Results        string   `default:"eval/results" placeholder:"DIR" help:"Where results go: DIR/<case>/<eval-run-id>/<backend>/<run>/ and DIR/summary-<eval-run-id>.json."`
	Workspaces     string   `default:"eval/workspaces" placeholder:"DIR" help:"Where workspaces go: DIR/<case>/<eval-run-id>/<backend>/<run>/repo, and the symlink DIR/<case>_latest."`
	Backend        []string `name:"backend" sep:"," default:"scripted" placeholder:"NAME" help:"Backends to run each case with: a case's [backends.NAME], a [NAME] of --backends-file, or a built-in backend (claude, codex, opencode, gemini, command)."`
	Runs           int      `default:"1" placeholder:"N" help:"Runs per case and backend."`
	Jobs           int      `default:"1" placeholder:"N" help:"Workspaces run at the same time (each its own repository)."`
	ID             string   `name:"id" placeholder:"EVAL-RUN-ID" help:"Name this eval run (default: a UTC timestamp and a random suffix)."`
	Resume         string   `placeholder:"EVAL-RUN-ID" help:"Continue an interrupted eval run (the same command with --resume in place of --id): attempts whose meta.json parses are kept, the rest run again."`
	Replay         string   `placeholder:"EVAL-RUN-ID" help:"Replay a recorded eval run offline: every attempt of EVAL-RUN-ID runs again with the replay backend on its cassette."`
	Check          bool     `help:"Only check the cases (and the backends they would run with); run nothing."`
	JSON           bool     `name:"json" help:"Print the summary as JSON instead of the Markdown table."`
	FailUnder      float64  `name:"fail-under" placeholder:"RATE" help:"Exit 1 when the overall success rate (0..1) is below RATE."`
	FailUnexpected bool     `name:"fail-unexpected" help:"Exit 1 when an attempt's outcome is not its case's expect."`

	args []string // the command line, recorded in the summary
}

// Main runs eval-run and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &Options{args: args}
	return cli.Run("eval-run", "Run eval cases as real loops in fresh workspaces and summarize the outcomes. Exit 0 when the harness ran (whatever the cases did), 1 for malformed cases or a breached --fail-under/--fail-unexpected, 6 for a harness error, 130 when interrupted (partial results stay valid; --resume continues).", o, args, stdin, stdout, stderr)
}

// attempt is one case × backend × run.
type attempt struct {
	c       *eval.Case
	backend eval.Backend
	run     int
	dir     string // results directory of the attempt
	ws      string // workspace directory (repo/ and home/ inside)
	replay  string // cassette to replay, "" when recording
	index   int    // 1-based, for progress
}

type runner struct {
	o        *Options
	env      *cli.Env
	id       string
	results  string
	wsRoot   string
	total    int
	baseEnv  []string
	progress sync.Mutex
	done     int
	kill     chan struct{} // closed by a second interruption: kill the running loops' groups
}

// errInterrupted marks an attempt stopped by Ctrl-C: no result is written
// for it, so a resumed eval runs it again.
var errInterrupted = errors.New("interrupted")

// Run checks the cases, runs the matrix and prints the summary.
func (o *Options) Run(env *cli.Env) error {
	if o.Runs < 1 || o.Jobs < 1 {
		return exit.Errorf(exit.Usage, "--runs and --jobs must be at least 1")
	}
	if o.FailUnder < 0 || o.FailUnder > 1 {
		return exit.Errorf(exit.Usage, "--fail-under takes a rate between 0 and 1, got %v", o.FailUnder)
	}
	if o.ID != "" && o.Resume != "" {
		return exit.Errorf(exit.Usage, "--id and --resume do not go together: --resume names the eval run")
	}
	cases, err := o.loadCases(env)
	if err != nil {
		return err
	}
	shared, probs, err := eval.BackendsFile(env.Abs(o.BackendsFile))
	if err != nil {
		return exit.Errorf(exit.RunnerError, "read %s: %v", o.BackendsFile, err)
	}
	if len(probs) > 0 {
		return reportProblems(env, probs)
	}
	r := &runner{o: o, env: env, results: env.Abs(o.Results), wsRoot: env.Abs(o.Workspaces), kill: make(chan struct{})}
	attempts, backends, err := r.plan(cases, shared)
	if err != nil {
		return err
	}
	if o.Check {
		fmt.Fprintf(env.Stdout, "ok: %s, %s (%s), %s\n", vocab.Plural(len(cases), "case", "cases"), vocab.Plural(len(backends), "backend", "backends"), strings.Join(backends, ", "), vocab.Plural(len(attempts), "attempt", "attempts"))
		return nil
	}
	return r.runAll(cases, backends, attempts)
}

// loadCases reads the selected cases and refuses the lot when any is
// malformed, listing every problem.
func (o *Options) loadCases(env *cli.Env) ([]*eval.Case, error) {
	var (
		cases []*eval.Case
		probs eval.Problems
		err   error
	)
	if len(o.Cases) == 0 {
		cases, probs, err = eval.LoadDir(env.Abs(o.CasesDir))
	} else {
		var files []string
		for _, c := range o.Cases {
			f := c
			if !strings.HasSuffix(c, ".toml") && !strings.ContainsRune(c, '/') {
				f = filepath.Join(o.CasesDir, c+".toml")
			}
			if _, serr := os.Stat(env.Abs(f)); serr != nil {
				return nil, exit.Errorf(exit.Negative, "no case %q: %s does not exist (cases are %s/<id>.toml)", c, f, o.CasesDir)
			}
			files = append(files, env.Abs(f))
		}
		cases, probs, err = eval.LoadFiles(files)
	}
	if err != nil {
		return nil, exit.Errorf(exit.Negative, "%v", err)
	}
	if len(probs) > 0 {
		return nil, reportProblems(env, probs)
	}
	return cases, nil
}

// reportProblems prints every problem, paths relative to -C, and refuses.
func reportProblems(env *cli.Env, probs eval.Problems) error {
	files := map[string]bool{}
	for _, p := range probs {
		env.Errorf("%s", strings.Replace(p.Error(), env.Dir+string(filepath.Separator), "", 1))
		files[p.File] = true
	}
	env.Errorf("%d problems in %d files; nothing was run", len(probs), len(files))
	return cli.Silent(exit.Negative)
}

// plan resolves the eval run id and every attempt, before anything runs.
func (r *runner) plan(cases []*eval.Case, shared map[string]eval.Backend) ([]*attempt, []string, error) {
	o := r.o
	switch {
	case o.Resume != "":
		r.id = o.Resume
	case o.ID != "":
		r.id = o.ID
	default:
		var b [2]byte
		_, _ = rand.Read(b[:])
		r.id = time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	}
	if !tree.ValidID(r.id) {
		return nil, nil, exit.Errorf(exit.Usage, "eval run id %q must match %s", r.id, tree.IDPattern)
	}
	var attempts []*attempt
	var backends []string
	if o.Replay != "" {
		var err error
		attempts, backends, err = r.planReplay(cases)
		if err != nil {
			return nil, nil, err
		}
	} else {
		backends = o.Backend
		var probs []string
		for _, c := range cases {
			for _, name := range backends {
				b, err := eval.ResolveBackend(c, name, shared)
				if err != nil {
					probs = append(probs, err.Error())
					continue
				}
				for run := 1; run <= o.Runs; run++ {
					attempts = append(attempts, &attempt{c: c, backend: b, run: run})
				}
			}
		}
		if len(probs) > 0 {
			for _, p := range probs {
				r.env.Errorf("%s", p)
			}
			r.env.Errorf("%d problems; nothing was run", len(probs))
			return nil, nil, cli.Silent(exit.Negative)
		}
	}
	for i, a := range attempts {
		a.index = i + 1
		rel := filepath.Join(a.c.ID, r.id, a.backend.Name, fmt.Sprint(a.run))
		a.dir = filepath.Join(r.results, rel)
		a.ws = filepath.Join(r.wsRoot, rel)
	}
	if o.Resume == "" {
		for _, c := range cases {
			if _, err := os.Stat(filepath.Join(r.results, c.ID, r.id)); err == nil {
				return nil, nil, exit.Errorf(exit.Negative, "eval run %s already has results for %s: continue it with --resume %s or choose another --id", r.id, c.ID, r.id)
			}
		}
	}
	r.total = len(attempts)
	return attempts, backends, nil
}

// planReplay makes one attempt per recorded attempt of --replay, with the
// replay backend on its cassette.
func (r *runner) planReplay(cases []*eval.Case) ([]*attempt, []string, error) {
	var attempts []*attempt
	var backends []string
	for _, c := range cases {
		metas, _ := filepath.Glob(filepath.Join(r.results, c.ID, r.o.Replay, "*", "*", "meta.json"))
		for _, m := range metas {
			res, err := eval.LoadResult(m)
			if err != nil {
				return nil, nil, exit.Errorf(exit.Negative, "--replay %s: %v", r.o.Replay, err)
			}
			cassette := filepath.Join(filepath.Dir(m), "cassette")
			if _, err := os.Stat(cassette); err != nil {
				return nil, nil, exit.Errorf(exit.Negative, "--replay %s: %s has no cassette (was it run by an older eval-run?)", r.o.Replay, filepath.Dir(m))
			}
			b := eval.Backend{Name: res.Backend, Backend: "replay", ExtraArgs: []string{}}
			attempts = append(attempts, &attempt{c: c, backend: b, run: res.Run, replay: cassette})
			if !slices.Contains(backends, res.Backend) {
				backends = append(backends, res.Backend)
			}
		}
	}
	if len(attempts) == 0 {
		return nil, nil, exit.Errorf(exit.Negative, "--replay %s: no recorded attempts of the selected cases under %s", r.o.Replay, r.o.Results)
	}
	sort.SliceStable(attempts, func(i, j int) bool {
		a, b := attempts[i], attempts[j]
		if a.c.ID != b.c.ID {
			return a.c.ID < b.c.ID
		}
		if a.backend.Name != b.backend.Name {
			return slices.Index(backends, a.backend.Name) < slices.Index(backends, b.backend.Name)
		}
		return a.run < b.run
	})
	return attempts, backends, nil
}

// runAll runs the attempts on --jobs workers, then writes and prints the
// summary.
func (r *runner) runAll(cases []*eval.Case, backends []string, attempts []*attempt) error {
	started := time.Now().UTC()
	r.baseEnv = sealedEnv(os.Environ())
	if err := os.MkdirAll(r.results, 0o755); err != nil {
		return exit.Errorf(exit.RunnerError, "create %s: %v", r.o.Results, fsutil.Cause(err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var interrupted atomic.Bool
	defer r.onSignals(cancel, &interrupted)()
	got, dirs, harnessErr := r.runAttempts(ctx, attempts)
	sum := r.summary(cases, backends, attempts, got, dirs)
	sum.StartedAt, sum.Interrupted = started.Format(time.RFC3339), interrupted.Load()
	if err := r.report(sum); err != nil {
		return err
	}
	switch {
	case sum.Interrupted:
		return cli.Silent(exit.SIGINT)
	case harnessErr != nil:
		return cli.Silent(exit.RunnerError)
	}
	return r.verdict(got)
}

// onSignals handles SIGINT and SIGTERM until the returned stop is called:
// the first sets interrupted and cancels the running loops (their
// iterations are recorded), the next kills their process groups.
func (r *runner) onSignals(cancel func(), interrupted *atomic.Bool) (stop func()) {
	env := r.env
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for range sigs {
			if interrupted.CompareAndSwap(false, true) {
				env.Errorf("interrupted: stopping the running loops (their iterations are recorded); finished results are kept; continue with the same command and --resume %s; interrupt again to kill them", r.id)
				cancel()
				continue
			}
			select {
			case <-r.kill:
			default:
				env.Errorf("interrupted again: killing the running loops")
				close(r.kill)
			}
		}
	}()
	return func() { signal.Stop(sigs) }
}

// runAttempts runs the attempts on --jobs workers until ctx is canceled
// and returns the finished ones' results and directories, in attempt
// order, and the first harness error (each is reported as it happens).
func (r *runner) runAttempts(ctx context.Context, attempts []*attempt) (got []eval.Result, dirs []string, harnessErr error) {
	results := make([]eval.Result, len(attempts))
	have := make([]bool, len(attempts))
	var mu sync.Mutex
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(r.o.Jobs, len(attempts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				res, err := r.attempt(ctx, attempts[i])
				mu.Lock()
				switch {
				case err == nil:
					results[i], have[i] = res, true
				case errors.Is(err, errInterrupted):
				default:
					if harnessErr == nil {
						harnessErr = err
					}
					r.env.Errorf("%v", err)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range attempts {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	for i, ok := range have {
		if ok {
			got = append(got, results[i])
			dirs = append(dirs, r.env.Rel(attempts[i].dir))
		}
	}
	return got, dirs, harnessErr
}

// summary is the eval run's summary of the finished results got (their
// directories dirs), ended now; the caller sets its start and whether it
// was interrupted.
func (r *runner) summary(cases []*eval.Case, backends []string, attempts []*attempt, got []eval.Result, dirs []string) eval.Summary {
	o := r.o
	ids := make([]string, len(cases))
	expect := map[string]string{}
	for i, c := range cases {
		ids[i] = c.ID
		expect[c.ID] = c.Expect
	}
	sum := eval.Summary{
		Version: eval.SummaryVersion, EvalRunID: r.id,
		EndedAt: time.Now().UTC().Format(time.RFC3339),
		Harness: harnessInfo(r.env.Dir, backends, attempts), Args: append([]string{"eval-run"}, o.args...),
		CaseSetHash: caseSetHash(cases), Cases: ids, Backends: backends, Runs: o.Runs,
		Attempts: len(attempts), Finished: len(got), ReplayOf: o.Replay,
		Cells: eval.BuildCells(got, dirs, ids, backends, expect),
	}
	if o.Replay != "" {
		sum.Runs = 0
		for _, a := range attempts {
			sum.Runs = max(sum.Runs, a.run)
		}
	}
	return sum
}

// report writes the summary file and prints the summary (--json: the
// file's bytes; else its Markdown table and where the file is).
func (r *runner) report(sum eval.Summary) error {
	env := r.env
	path := filepath.Join(r.results, "summary-"+r.id+".json")
	if err := fsutil.WriteAtomic(path, eval.Encode(sum), 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", env.Rel(path), fsutil.Cause(err))
	}
	if r.o.JSON {
		_, _ = env.Stdout.Write(eval.Encode(sum))
	} else {
		fmt.Fprint(env.Stdout, sum.Markdown())
		fmt.Fprintf(env.Stdout, "\nsummary: %s\n", env.Rel(path))
	}
	return nil
}

// verdict applies --fail-unexpected and --fail-under to the finished
// results.
func (r *runner) verdict(got []eval.Result) error {
	succ, unexpected := 0, 0
	for _, res := range got {
		if res.Outcome == eval.Success {
			succ++
		}
		if res.Expect != "" && res.Outcome != res.Expect {
			unexpected++
		}
	}
	if r.o.FailUnexpected && unexpected > 0 {
		return exit.Errorf(exit.Negative, "%d of %s did not reach their case's expected outcome", unexpected, vocab.Plural(len(got), "attempt", "attempts"))
	}
	if r.o.FailUnder > 0 && len(got) > 0 && float64(succ)/float64(len(got)) < r.o.FailUnder {
		return exit.Errorf(exit.Negative, "success rate %d/%d is below --fail-under %v", succ, len(got), r.o.FailUnder)
	}
	return nil
}

func caseSetHash(cases []*eval.Case) string {
	h := sha256.New()
	for _, c := range cases {
		data, _ := os.ReadFile(c.File)
		fmt.Fprintf(h, "%s\x00%d\x00", c.ID, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// harnessInfo records what ran the eval: the treeloop build (or the -C
// checkout's commit), Go, git, just and the agent CLIs used.
func harnessInfo(dir string, backends []string, attempts []*attempt) eval.Harness {
	h := eval.Harness{GoVersion: runtime.Version(), Tools: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				h.Commit = s.Value
			case "vcs.modified":
				h.Dirty = s.Value == "true"
			}
		}
	}
	if h.Commit == "" {
		// Through the runner's git (no replace ref followed): the
		// commit the results are credited to.
		if repo, err := git.Open(dir); err == nil {
			if out, err := repo.Run("rev-parse", "HEAD"); err == nil {
				h.Commit = strings.TrimSpace(string(out))
				st, _ := repo.Run("status", "--porcelain", "--untracked-files=no")
				h.Dirty = len(strings.TrimSpace(string(st))) > 0
			}
		}
	}
	tools := []string{"git", "just"}
	seen := map[string]bool{}
	for _, a := range attempts {
		if spec, ok := agent.Lookup(a.backend.Backend); ok && spec.CLI() {
			bin := a.backend.Bin
			if bin == "" {
				bin = spec.Bin
			}
			if !seen[bin] {
				seen[bin] = true
				tools = append(tools, bin)
			}
		}
	}
	for _, t := range tools {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, t, "--version").Output()
		cancel()
		if err == nil {
			h.Tools[filepath.Base(t)] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		}
	}
	return h
}

// sealedEnv is the environment of every workspace command: the caller's,
// without the variables that would steer the runner or git from outside
// (RUNNER_*, GIT_*, TREELOOP_DIR, TREELOOP_LOCKED); HOME and the git
// identity are set per attempt. Caches that live under HOME (the Go build
// cache) stay where they were, so a guard does not rebuild the world.
func sealedEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "GIT_") || k == "TREELOOP_DIR" || k == "TREELOOP_LOCKED" || k == "HOME" {
			continue
		}
		out = append(out, kv)
	}
	if os.Getenv("XDG_CACHE_HOME") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			out = append(out, "XDG_CACHE_HOME="+d)
		}
	}
	return append(out,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=treeloop eval", "GIT_AUTHOR_EMAIL=eval@treeloop.invalid",
		"GIT_COMMITTER_NAME=treeloop eval", "GIT_COMMITTER_EMAIL=eval@treeloop.invalid",
	)
}

// progressf prints one progress line on stderr.
func (r *runner) progressf(format string, args ...any) {
	r.progress.Lock()
	defer r.progress.Unlock()
	fmt.Fprintf(r.env.Stderr, "eval-run: "+format+"\n", args...)
}
