package evalrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/eval"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Grace periods: how long a loop may take to record its iteration after
// SIGINT/SIGTERM before its process group is killed.
const (
	interruptGrace = 60 * time.Second
	timeoutGrace   = 30 * time.Second
)

// attempt runs one case × backend × run and returns its result, written to
// meta.json. With --resume, a result that already parses is returned as
// is. errInterrupted means Ctrl-C stopped it (no result written); any
// other error is the harness's own (results could not be written).
func (r *runner) attempt(ctx context.Context, a *attempt) (eval.Result, error) {
	label := fmt.Sprintf("[%d/%d] %s %s #%d", a.index, r.total, a.c.ID, a.backend.Name, a.run)
	meta := filepath.Join(a.dir, "meta.json")
	if r.o.Resume != "" {
		res, err := eval.LoadResult(meta)
		switch {
		case err == nil:
			r.finished(label, res, "kept from the interrupted run")
			return res, nil
		case !errors.Is(err, fs.ErrNotExist):
			r.progressf("%s: %v: running it again", label, err)
		}
	}
	if ctx.Err() != nil {
		return eval.Result{}, errInterrupted
	}
	if err := os.RemoveAll(a.dir); err != nil {
		return eval.Result{}, fmt.Errorf("%s: clear %s: %v", label, a.dir, err)
	}
	if err := os.RemoveAll(a.ws); err != nil {
		return eval.Result{}, fmt.Errorf("%s: clear %s: %v", label, a.ws, err)
	}
	if err := os.MkdirAll(a.dir, 0o755); err != nil {
		return eval.Result{}, fmt.Errorf("%s: %v", label, fsutil.Cause(err))
	}
	r.progressf("%s: start", label)

	start := time.Now()
	res := eval.Result{
		Version: eval.ResultVersion, EvalRunID: r.id, Case: a.c.ID, Backend: a.backend.Name, Run: a.run,
		Agent:     eval.AgentInfo{Backend: a.backend.Backend, Bin: a.backend.Bin, Model: a.backend.Model},
		Expect:    a.c.Expect,
		StartedAt: start.UTC().Format(time.RFC3339),
		Workspace: r.env.Rel(filepath.Join(a.ws, "repo")),
		ReplayOf:  r.o.Replay,
	}
	repo := filepath.Join(a.ws, "repo")
	envv := r.attemptEnv(a)

	// Setup: workspace, runner-init, config overrides, runner-start.
	setupErr := r.setup(ctx, a, repo, envv)
	res.DurationMS.Setup = time.Since(start).Milliseconds()
	if setupErr != nil && ctx.Err() != nil {
		return res, errInterrupted
	}

	loopExit, why, err := r.runLoop(ctx, a, repo, envv, setupErr, &res)
	if err != nil {
		return res, err
	}
	if err := r.judge(ctx, a, repo, envv, setupErr == nil, loopExit, why, &res); err != nil {
		if !errors.Is(err, errInterrupted) {
			err = fmt.Errorf("%s: %w", label, err)
		}
		return res, err
	}
	end := time.Now()
	res.EndedAt = end.UTC().Format(time.RFC3339)
	res.DurationMS.Total = end.Sub(start).Milliseconds()
	res.DurationMS.Harness = res.DurationMS.Total - res.DurationMS.Loop
	if err := fsutil.WriteAtomic(meta, eval.Encode(res), 0o644); err != nil {
		return res, fmt.Errorf("%s: write meta.json: %v", label, fsutil.Cause(err))
	}
	r.finished(label, res, "")
	return res, nil
}

// runLoop runs the attempt's loop when its setup succeeded and returns
// the loop's exit (-1 when it did not run or failed to) and why it ended
// as it did ("setup: …" when the setup failed); errInterrupted when
// Ctrl-C stopped it.
func (r *runner) runLoop(ctx context.Context, a *attempt, repo string, envv []string, setupErr error, res *eval.Result) (loopExit int, why string, err error) {
	loopExit = -1
	if setupErr != nil {
		return loopExit, "setup: " + setupErr.Error(), nil
	}
	t := time.Now()
	loopExit, why, err = r.loop(ctx, a, repo, envv)
	res.DurationMS.Loop = time.Since(t).Milliseconds()
	if errors.Is(err, errInterrupted) {
		return loopExit, why, errInterrupted
	}
	if err != nil {
		loopExit, why = -1, err.Error()
	}
	if loopExit >= 0 {
		res.LoopExit = &loopExit
	}
	return loopExit, why, nil
}

// judge captures the attempt's artifacts, runs the case's checks on the
// final workspace (when the setup succeeded), writes checks.json and sets
// res's outcome; errInterrupted when Ctrl-C stopped the checks.
func (r *runner) judge(ctx context.Context, a *attempt, repo string, envv []string, setupOK bool, loopExit int, why string, res *eval.Result) error {
	t := time.Now()
	res.RunID, res.Iterations, res.Usage, res.Agent.Model = capture(repo, a.dir, res.Agent.Model)
	res.DurationMS.Capture = time.Since(t).Milliseconds()
	t = time.Now()
	var checks []eval.CheckResult
	if setupOK {
		checks = eval.RunChecks(ctx, a.c, eval.CheckEnv{Workspace: repo, Env: envv, LoopComplete: loopExit == 0})
	}
	res.DurationMS.Checks = time.Since(t).Milliseconds()
	if ctx.Err() != nil {
		return errInterrupted
	}
	if checks == nil {
		checks = []eval.CheckResult{}
	}
	for _, c := range checks {
		if c.Pass {
			res.Checks.Passed++
		} else {
			res.Checks.Failed++
		}
	}
	if err := fsutil.WriteAtomic(filepath.Join(a.dir, "checks.json"), eval.Encode(checks), 0o644); err != nil {
		return fmt.Errorf("write checks.json: %v", fsutil.Cause(err))
	}
	if loopExit == 143 && why == timeoutReason(a.c) {
		res.Outcome, res.Reason = eval.Timeout, why
	} else {
		res.Outcome, res.Reason = eval.Classify(loopExit, checks, why)
	}
	return nil
}

func (r *runner) finished(label string, res eval.Result, note string) {
	r.progress.Lock()
	r.done++
	done := r.done
	r.progress.Unlock()
	if note != "" {
		note = " (" + note + ")"
	}
	r.progressf("%s: %s after %s in %.1fs (loop %.1fs)%s [%d/%d done]", label, res.Outcome, vocab.Plural(res.Iterations, "iteration", "iterations"),
		float64(res.DurationMS.Total)/1000, float64(res.DurationMS.Loop)/1000, note, done, r.total)
}

// attemptEnv is the sealed environment plus the attempt's HOME, the
// backend's variables and the cassette.
func (r *runner) attemptEnv(a *attempt) []string {
	home := filepath.Join(a.ws, "home")
	env := append([]string{}, r.baseEnv...)
	env = append(env, "HOME="+home)
	if a.replay != "" {
		env = append(env, config.EnvAgentCassette+"="+a.replay)
	} else {
		env = append(env, config.EnvAgentCassette+"="+filepath.Join(a.dir, "cassette"))
	}
	return append(env, a.backend.Env...)
}

// setup makes the workspace: the fixture in a fresh git repository, the
// goal, runner-init, the case's config with the backend's [agent],
// committed, then runner-start. Every command's output goes to
// runner.start.log. Its git commands build the workspace before any
// session has run in it and judge nothing, so they run as the user's git;
// what is judged afterwards, the runner judges with its own (lib/git).
func (r *runner) setup(ctx context.Context, a *attempt, repo string, env []string) error {
	if err := os.MkdirAll(filepath.Join(a.ws, "home"), 0o755); err != nil {
		return fsutil.Cause(err)
	}
	if a.c.Fixture != "" {
		if err := copyTree(a.c.Fixture, repo, true); err != nil {
			return fmt.Errorf("copy the fixture: %v", err)
		}
	} else if err := os.MkdirAll(repo, 0o755); err != nil {
		return fsutil.Cause(err)
	}
	r.linkLatest(a)
	log, err := os.Create(filepath.Join(a.dir, "runner.start.log"))
	if err != nil {
		return fsutil.Cause(err)
	}
	defer log.Close()
	goal := filepath.Join(a.dir, "GOAL.md")
	if err := os.WriteFile(goal, a.c.GoalBytes(), 0o644); err != nil {
		return fsutil.Cause(err)
	}
	run := func(name string, args ...string) error {
		fmt.Fprintf(log, "$ %s %s\n", name, strings.Join(args, " "))
		res, err := proc.Run(ctx, proc.Spec{Argv: append([]string{name}, args...), Dir: repo, Env: env, Log: log, Kill: r.kill})
		if err == nil {
			err = failure(res)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %v (see runner.start.log)", name, strings.Join(args, " "), err)
		}
		return nil
	}
	for _, s := range [][]string{
		{"git", "init", "-q", "-b", "main"},
		{"git", "add", "-A"},
		{"git", "commit", "-q", "--allow-empty", "-m", "eval: fixture of case " + a.c.ID},
	} {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	// The config goes in before runner-init, which keeps it and gives the
	// root the case's max_attempts_default.
	cfgPath := filepath.Join(repo, ".runner", "state", "config.toml")
	if err := writeConfig(cfgPath, a); err != nil {
		fmt.Fprintf(log, "eval-run: %v\n", err)
		return err
	}
	fmt.Fprintf(log, "eval-run: wrote .runner/state/config.toml: the defaults, the case's [config] and backend %s\n", a.backend.Name)
	if err := run("runner-init", "--goal", goal, "--next", a.c.RootNext); err != nil {
		return err
	}
	for _, s := range [][]string{
		{"git", "add", "-A"},
		{"git", "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("eval: case %s config, backend %s", a.c.ID, a.backend.Name)},
		{"runner-start"},
	} {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// writeConfig merges the case's [config] and the backend's [agent] into
// the default config.toml and validates the result as the runner will.
func writeConfig(path string, a *attempt) error {
	var m map[string]any
	if err := toml.Unmarshal(config.DefaultTOML(), &m); err != nil {
		return fmt.Errorf("the default config.toml: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fsutil.Cause(err)
	}
	merge(m, a.c.Config)
	agent, _ := m["agent"].(map[string]any)
	if agent == nil {
		agent = map[string]any{}
		m["agent"] = agent
	}
	b := a.backend
	agent["backend"] = b.Backend
	agent["bin"] = b.Bin
	agent["model"] = b.Model
	agent["extra_args"] = b.ExtraArgs
	// A routing model the backend leaves empty keeps the case's [config].
	for key, m := range map[string]string{"decompose_model": b.DecomposeModel, "execute_model": b.ExecuteModel, "last_attempt_model": b.LastAttemptModel} {
		if m != "" {
			agent[key] = m
		}
	}
	out, err := toml.Marshal(m)
	if err != nil {
		return err
	}
	out = append([]byte(fmt.Sprintf("# The defaults with eval case %s's [config] and backend %s.\n", a.c.ID, b.Name)), out...)
	if _, err := config.Parse("config.toml", out); err != nil {
		return fmt.Errorf("the case's config is invalid: %v", err)
	}
	return os.WriteFile(path, out, 0o644)
}

// merge copies src into dst, table by table.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

func timeoutReason(c *eval.Case) string {
	return fmt.Sprintf("the case's timeout_secs (%ds) ran out; the loop was stopped", c.TimeoutSecs)
}

// failure is why a setup command did not succeed, in os/exec's words
// ("exit status 1", "signal: killed"); nil when it exited 0.
func failure(res proc.Result) error {
	switch {
	case res.Canceled || res.TimedOut:
		return errInterrupted
	case res.Signal != "":
		return errors.New("signal: " + res.Signal)
	case res.ExitCode != 0:
		return fmt.Errorf("exit status %d", res.ExitCode)
	}
	return nil
}

// loop runs runner-loop in its own process group (lib/proc) with the
// case's wall budget; its output goes to runner.loop.log. When the budget
// runs out the group gets SIGTERM and timeoutGrace; when ctx is done
// (Ctrl-C) SIGINT and interruptGrace, so the loop records its iteration;
// a second Ctrl-C (r.kill) kills it at once. It returns the exit code (a
// shell's, 128+N for signal N) and a one-line reason (the loop's last
// line); errInterrupted when ctx stopped it.
func (r *runner) loop(ctx context.Context, a *attempt, repo string, env []string) (int, string, error) {
	log, err := os.Create(filepath.Join(a.dir, "runner.loop.log"))
	if err != nil {
		return -1, "", fsutil.Cause(err)
	}
	defer log.Close()
	var last bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{
		Argv:           []string{"runner-loop"},
		Dir:            repo,
		Env:            env,
		Log:            io.MultiWriter(log, &tailWriter{buf: &last, max: 4096}),
		Deadline:       time.Now().Add(time.Duration(a.c.TimeoutSecs) * time.Second),
		DeadlineNote:   fmt.Sprintf("eval-run: %s: sending SIGTERM", timeoutReason(a.c)),
		Grace:          timeoutGrace,
		Interrupt:      syscall.SIGINT,
		InterruptGrace: interruptGrace,
		Kill:           r.kill,
	})
	switch {
	case err != nil:
		return -1, "", fmt.Errorf("%v (is runner-loop on PATH? just build, or just install)", err)
	case res.TimedOut:
		return 143, timeoutReason(a.c), nil
	case res.Canceled:
		return res.Status(), "", errInterrupted
	}
	return res.Status(), eval.LastLine(last.String()), nil
}

// tailWriter keeps the last max bytes written.
type tailWriter struct {
	buf *bytes.Buffer
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*t.max {
		b := append([]byte(nil), t.buf.Bytes()[t.buf.Len()-t.max:]...)
		t.buf.Reset()
		t.buf.Write(b)
	}
	return len(p), nil
}

// capture copies the runner's state and this run's iteration logs into the
// results directory and reads the run id, the number of iterations, the
// summed usage and the model the agent reported.
func capture(repo, dir, model string) (runID string, iterations int, usage eval.Usage, gotModel string) {
	gotModel = model
	state := filepath.Join(repo, ".runner", "state")
	for _, f := range []string{"tree.json", "run_state.json"} {
		if data, err := os.ReadFile(filepath.Join(state, f)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
	}
	var rs struct {
		RunID *string `json:"run_id"`
	}
	if data, err := os.ReadFile(filepath.Join(state, "run_state.json")); err == nil && json.Unmarshal(data, &rs) == nil && rs.RunID != nil {
		runID = *rs.RunID
	}
	if runID == "" {
		return
	}
	src := filepath.Join(repo, ".runner", "iterations", runID)
	if _, err := os.Stat(src); err != nil {
		return
	}
	_ = copyTree(src, filepath.Join(dir, "iterations"), false)
	metas, _ := filepath.Glob(filepath.Join(src, "*", "meta.json"))
	sort.Strings(metas)
	for _, m := range metas {
		var mj struct {
			Agent *struct {
				Model string     `json:"model"`
				Usage eval.Usage `json:"usage"`
			} `json:"agent"`
		}
		data, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(data, &mj) != nil {
			continue
		}
		iterations++
		if mj.Agent != nil {
			usage.InputTokens += mj.Agent.Usage.InputTokens
			usage.OutputTokens += mj.Agent.Usage.OutputTokens
			usage.CachedTokens += mj.Agent.Usage.CachedTokens
			usage.CostUSD += mj.Agent.Usage.CostUSD
			if gotModel == "" && mj.Agent.Model != "" {
				gotModel = mj.Agent.Model
			}
		}
	}
	return
}

// copyTree copies src into dst: directories, regular files (with their
// mode) and symlinks. skipGit leaves out a top-level .git.
func copyTree(src, dst string, skipGit bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skipGit && rel == ".git" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return nil
	})
}

// linkLatest points <workspaces>/<case>_latest at this attempt's
// repository (seed 000 §15.2), replacing the link atomically.
func (r *runner) linkLatest(a *attempt) {
	link := filepath.Join(r.wsRoot, a.c.ID+"_latest")
	target, err := filepath.Rel(r.wsRoot, filepath.Join(a.ws, "repo"))
	if err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", link, a.index)
	_ = os.Remove(tmp)
	if os.Symlink(target, tmp) == nil {
		_ = os.Rename(tmp, link)
	}
}
