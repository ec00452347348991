package iterlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/textclean"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
	"github.com/treeloop/treeloop/lib/worktree"
)

// runFlag picks the run whose iterations are read.
type runFlag struct {
	Run string `placeholder:"RUN-ID" predictor:"run" help:"The run to read (default: the current run of run_state.json)."`
}

func (f runFlag) dir(env *cli.Env) (string, string, error) {
	id := f.Run
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if id == "" {
		if err != nil {
			return "", "", exit.Errorf(exit.Negative, "%v", err)
		}
		if id = runstate.Val(rs.RunID); id == "" {
			return "", "", exit.Errorf(exit.Negative, "no run started: run runner-start, or name a run with --run")
		}
	}
	if !tree.ValidID(id) {
		return "", "", exit.Errorf(exit.Usage, "--run %q is not a run id", id)
	}
	dir := env.Abs(filepath.Join(layout.Iterations, id))
	if _, statErr := os.Stat(dir); statErr != nil && (err != nil || runstate.Val(rs.RunID) != id) {
		return "", "", exit.Errorf(exit.Negative, "%s", whereIs(env, id))
	}
	return id, dir, nil
}

// whereIs says where run id is when this checkout has no iterations of it:
// in a worktree of its own, only on its branch, or nowhere.
func whereIs(env *cli.Env, id string) string {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return "no run " + id + " here"
	}
	if ws, err := worktree.List(repo); err == nil {
		for _, w := range ws {
			if w.RunID == id && w.Path != repo.Root() {
				return fmt.Sprintf("run %s works in the worktree %s: iter-log -C %s list", id, w.Path, w.Path)
			}
		}
	}
	if ok, _ := repo.BranchExists(layout.BranchPrefix + id); ok {
		return fmt.Sprintf("no iterations of run %s in this checkout (its branch %s%s is here; the logs stay where it ran)", id, layout.BranchPrefix, id)
	}
	return fmt.Sprintf("no run %s in this repository (runner-status --runs lists the runs)", id)
}

// lastIter is run id's last iteration as run_state.json says it when id
// is the current run, else 0 (unknown: its directory is listed).
func lastIter(env *cli.Env, id string) int {
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil || runstate.Val(rs.RunID) != id {
		return 0
	}
	return rs.NextIter - 1
}

// ListCmd is `iter-log list`.
type ListCmd struct {
	runFlag
	JSON bool `name:"json" help:"Print {\"version\": 1, \"run_id\", \"iterations\": [rows], \"running\"} (rows as runner-status's recent; running as runner-status's, or null)."`
	Last int  `name:"last" default:"50" env:"ITER_LOG_LAST" help:"How many of the last finished iterations to list (0: all of them, as --all)."`
	All  bool `name:"all" help:"List every iteration of the run (a long run's list costs its length)."`
	cli.Get
}

// Run prints one line per iteration, the one in progress last.
func (l *ListCmd) Run(env *cli.Env) error {
	id, dir, err := l.dir(env)
	if err != nil {
		return err
	}
	n, hint := l.Last, lastIter(env, id)
	if l.All {
		n = 0
	}
	rows, err := iterdir.HistoryTail(dir, hint, n)
	if err != nil {
		return exit.Errorf(exit.Negative, "read the iterations of %s: %v", id, fsutil.Cause(err))
	}
	if rows == nil {
		rows = []iterdir.Row{}
	}
	running, err := iterdir.LastFrom(dir, hint)
	if err != nil {
		return exit.Errorf(exit.Negative, "read the iterations of %s: %v", id, fsutil.Cause(err))
	}
	if running != nil && !worktree.Locked(env.Abs(layout.Lock)) {
		running = nil // left unfinished: not running
	}
	if l.JSON || l.Wanted() {
		return l.PrintJSON(env, struct {
			Version    int              `json:"version"`
			RunID      string           `json:"run_id"`
			Iterations []iterdir.Row    `json:"iterations"`
			Running    *iterdir.Running `json:"running"`
		}{1, id, rows, running})
	}
	t := cli.Table{Header: []string{"iter", "node", "mode", "result", "guard", "evidence", "model", "duration", "tokens", "cost", "summary"}, Right: map[int]bool{0: true, 7: true, 8: true, 9: true}}
	for _, r := range rows {
		model := r.Model
		if model == "" {
			model = "-"
		}
		t.Add(fmt.Sprint(r.Iter), r.NodeID, r.Mode, r.Result, r.Guard, evidence.OfRow(r), model, iterdir.ShortDuration(r.DurationMS), fmt.Sprint(r.Tokens), fmt.Sprintf("$%.4f", r.CostUSD), firstLine(textclean.StripANSI(r.Summary)))
	}
	if r := running; r != nil {
		t.Add(fmt.Sprint(r.Iteration), r.NodeID, r.Mode, "running", "", "", "", iterdir.ShortDuration(time.Since(r.Since).Milliseconds()), "", "", fmt.Sprintf("%s since %s (attempt %d/%d)", r.Phase, r.Since.Format(time.RFC3339), r.Attempt, r.MaxAttempts))
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	return t.Write(w, termWidth(env))
}

// ShowCmd is `iter-log show`.
type ShowCmd struct {
	runFlag
	Iter int  `arg:"" optional:"" placeholder:"ITER" help:"The iteration number (default: the run's last iteration)."`
	JSON bool `name:"json" help:"Print {\"version\": 1, \"run_id\", \"iter\", \"meta\", \"output\", \"guard_tail\", \"diff_stat\", \"failure\"} as JSON."`
	Tail int  `default:"20" help:"Lines of guard.log to show (as a person reads them: without its terminal escapes, which the log keeps)."`
	cli.Get
}

// Shown is what `iter-log show --json` prints.
type Shown struct {
	Version   int             `json:"version"`
	RunID     string          `json:"run_id"`
	Iter      int             `json:"iter"`
	Meta      json.RawMessage `json:"meta"`   // meta.json as written
	Output    json.RawMessage `json:"output"` // output.json as the agent wrote it, null when absent or not JSON
	GuardTail string          `json:"guard_tail"`
	DiffStat  []FileStat      `json:"diff_stat"`
	Failure   *Failure        `json:"failure"` // null when the iteration went through
}

// FileStat is one file of diff.patch.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary"`
}

// Failure is why an iteration did not go through: its result, the
// agent's failure class and message, the agent-error reasons, a runner
// error.
type Failure struct {
	Result      string   `json:"result"` // meta.json's result (lib/vocab)
	Class       string   `json:"class"`  // agent.json's class when not ok, else ""
	Message     string   `json:"message"`
	Reasons     []string `json:"reasons"`
	RunnerError string   `json:"runner_error"`
}

// Run prints one iteration.
func (s *ShowCmd) Run(env *cli.Env) error {
	id, dir, err := s.dir(env)
	if err != nil {
		return err
	}
	n := s.Iter
	if n == 0 {
		iters, err := iterdir.Iters(dir)
		if err != nil {
			return exit.Errorf(exit.Negative, "read the iterations of %s: %v", id, fsutil.Cause(err))
		}
		if len(iters) == 0 {
			return exit.Errorf(exit.Negative, "run %s has no iterations yet", id)
		}
		n = iters[len(iters)-1]
	}
	idir := filepath.Join(dir, layout.IterName(n))
	metaData, err := fsutil.ReadFile(filepath.Join(idir, iterdir.MetaFile), "", 16<<20)
	if errors.Is(err, os.ErrNotExist) {
		return exit.Errorf(exit.Negative, "iteration %d of run %s has no %s (not run, or not finished: runner-step recovers it)", n, id, iterdir.MetaFile)
	}
	if err != nil {
		return exit.Errorf(exit.Negative, "read %s: %v", iterdir.MetaFile, fsutil.Cause(err))
	}
	var m iterdir.Meta
	if err := json.Unmarshal(metaData, &m); err != nil {
		return exit.Errorf(exit.Negative, "%s of iteration %d: %v", iterdir.MetaFile, n, err)
	}
	sh := Shown{Version: 1, RunID: id, Iter: n, Meta: json.RawMessage(bytes.TrimSpace(metaData)), DiffStat: []FileStat{}}
	if out, err := fsutil.ReadFile(filepath.Join(idir, iterdir.OutputFile), "", 16<<20); err == nil && json.Valid(out) {
		sh.Output = json.RawMessage(bytes.TrimSpace(out))
	}
	if g, err := fsutil.ReadFile(filepath.Join(idir, iterdir.GuardLog), "", 64<<20); err == nil {
		sh.GuardTail = tail(textclean.StripANSI(string(g)), s.Tail)
	}
	if p, err := fsutil.ReadFile(filepath.Join(idir, iterdir.DiffPatch), "", 256<<20); err == nil {
		sh.DiffStat = diffStat(p)
	}
	sh.Failure = failure(m, idir)
	m.Summary = textclean.StripANSI(m.Summary)
	if s.JSON || s.Wanted() {
		return s.PrintJSON(env, sh)
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	p := func(k, format string, args ...any) { fmt.Fprintf(w, "%-10s %s\n", k, fmt.Sprintf(format, args...)) }
	p("iteration", "%d of run %s  node %s (%s)  mode %s", m.Iteration, m.RunID, m.NodeID, m.NodePath, m.Mode)
	p("status", "%s  result %s  guard %s  attempts %d -> %d/%d", m.Status, m.Result, m.Guard, m.AttemptsBefore, m.AttemptsAfter, m.MaxAttempts)
	p("time", "%s  %s", m.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), iterdir.ShortDuration(m.DurationMS))
	printGuard(p, m)
	if m.Agent != nil {
		u := m.Agent.Usage
		p("agent", "%s %s  class %s  exit %d  %d tokens in, %d out, $%.4f", m.Agent.Backend, m.Agent.Model, m.Agent.Class, m.Agent.ExitCode, u.InputTokens, u.OutputTokens, u.CostUSD)
	}
	p("commit", "%s", m.Commit)
	p("summary", "%s", m.Summary)
	if f := sh.Failure; f != nil {
		p("failure", "%s", strings.Join(nonEmpty(f.Result, f.Class, f.Message), ": "))
		for _, r := range f.Reasons {
			p("", "- %s", r)
		}
		if f.RunnerError != "" {
			p("", "runner error: %s", f.RunnerError)
		}
	}
	if sh.Output != nil {
		p("output", "%s", compact(sh.Output))
	}
	if len(sh.DiffStat) > 0 {
		fmt.Fprintln(w, "diff")
		for _, f := range sh.DiffStat {
			if f.Binary {
				fmt.Fprintf(w, "  %s | binary\n", f.Path)
			} else {
				fmt.Fprintf(w, "  %s | +%d -%d\n", f.Path, f.Added, f.Deleted)
			}
		}
	}
	if sh.GuardTail != "" {
		fmt.Fprintf(w, "guard tail (%s)\n", iterdir.GuardLog)
		for _, l := range strings.Split(strings.TrimRight(sh.GuardTail, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}

// printGuard prints the guard's run of m: its command and outcome, and
// its tests by name (guard.json's evidence): the counts, what a pass
// stands on in lib/evidence's words, who set the level, the witness
// check, the failing and missing tests.
func printGuard(p func(k, format string, args ...any), m iterdir.Meta) {
	g := m.GuardRun
	if g == nil {
		return
	}
	p("guard", "%s: %s  exit %d  %s", strings.Join(g.Argv, " "), g.Outcome, g.ExitCode, iterdir.ShortDuration(g.DurationMS))
	ev := g.Evidence
	if ev == nil {
		if m.Result == string(vocab.ResultPassed) {
			p("evidence", "%s", evidence.NoTestsByName)
		}
		return
	}
	c := ev.Cite()
	p("tests", "%s", evidence.Counts(c))
	switch {
	case ev.Held && m.Result == string(vocab.ResultPassed):
		p("evidence", "%s", evidence.Stands(c))
	case ev.Held:
		p("evidence", "held (the iteration did not pass the node: result %s)", m.Result)
	case ev.Level != "":
		p("evidence", "did not hold: the node needed a pass %s", evidence.Describe(ev.Level))
	default:
		p("evidence", "did not hold")
	}
	if ev.Level != "" {
		p("level", "%s, set by %s", ev.Level, evidence.From(ev.LevelFrom))
	}
	if w := ev.Witness; w != nil {
		p("witness", "files %s: base code exit %d (%d tests)  %s", strings.Join(w.Files, ", "), w.BaseExit, w.BaseTests, iterdir.ShortDuration(w.DurationMS))
	}
	for _, t := range ev.Failing {
		p("failing", "%s", t)
	}
	for _, t := range ev.Missing {
		p("missing", "%s (passed before, not now)", t)
	}
}

// failure is why m did not go through, nil when it did.
func failure(m iterdir.Meta, idir string) *Failure {
	f := &Failure{Result: m.Result, Reasons: m.Reasons}
	if f.Reasons == nil {
		f.Reasons = []string{}
	}
	if m.Agent != nil && m.Agent.Class != "" && m.Agent.Class != string(vocab.ClassOK) {
		f.Class, f.Message = m.Agent.Class, m.Agent.Message
	}
	if b, err := fsutil.ReadFile(filepath.Join(idir, iterdir.RunnerErrorLog), "", 1<<20); err == nil {
		f.RunnerError = strings.TrimSpace(textclean.StripANSI(string(b)))
	}
	f.Message = textclean.StripANSI(f.Message)
	for i, r := range f.Reasons {
		f.Reasons[i] = textclean.StripANSI(r)
	}
	switch vocab.Result(m.Result) {
	case vocab.ResultAgentError, vocab.ResultRunnerError, vocab.ResultTimeout, vocab.ResultInterrupted:
		return f
	}
	if f.Class == "" && len(m.Reasons) == 0 && f.RunnerError == "" {
		return nil
	}
	return f
}

// diffStat counts added and deleted lines per file of a git patch.
func diffStat(patch []byte) []FileStat {
	out := []FileStat{}
	var cur *FileStat
	sc := bufio.NewScanner(bytes.NewReader(patch))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	inHunk := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "diff --git "):
			name := l[len("diff --git "):]
			if i := strings.LastIndex(name, " b/"); i >= 0 {
				name = name[i+3:]
			}
			out = append(out, FileStat{Path: name})
			cur, inHunk = &out[len(out)-1], false
		case cur == nil:
		case strings.HasPrefix(l, "@@"):
			inHunk = true
		case !inHunk && (strings.HasPrefix(l, "GIT binary patch") || strings.HasPrefix(l, "Binary files")):
			cur.Binary = true
		case inHunk && strings.HasPrefix(l, "+"):
			cur.Added++
		case inHunk && strings.HasPrefix(l, "-"):
			cur.Deleted++
		}
	}
	return out
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" || n <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// termWidth is $COLUMNS, else stdout's terminal width, else 0 (no cut:
// a pipe gets whole lines).
func termWidth(env *cli.Env) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := env.Stdout.(*os.File)
	if !ok {
		return 0
	}
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.Col)
}

// nonEmpty is the strings of ss that are not "".
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
