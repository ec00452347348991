// Package runnerexport is the runner-export command (DESIGN.md decision
// 23): the run's code changes as a clean branch to propose upstream, one
// commit per passed leaf that changed code (lib/export), and a pull
// request body. It reads git and the run's local logs and writes one
// branch ref (and the body's file); the work tree and the index are never
// touched.
package runnerexport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/export"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
	"github.com/treeloop/treeloop/lib/worktree"
)

// BranchPrefix starts the default export branch: treeloop/<run-id>.
const BranchPrefix = "treeloop/"

// Options is the command line of runner-export.
type Options struct {
	cli.Chdir
	RunID  string `name:"run" placeholder:"RUN-ID" predictor:"run" help:"The run to export (default: the current run of run_state.json)."`
	Branch string `placeholder:"NAME" env:"RUNNER_EXPORT_BRANCH" help:"The branch to write (default: treeloop/<run-id>)."`
	Onto   string `placeholder:"REV" env:"RUNNER_EXPORT_ONTO" help:"Start the branch from REV, the nodes' changes merged onto it in memory (default: the commit the run started from)."`
	Squash bool   `help:"One commit for all the passed nodes instead of one per node."`
	PRBody string `name:"pr-body" placeholder:"FILE" predictor:"file" env:"RUNNER_EXPORT_PR_BODY" help:"Where to write the pull request body (Markdown: the goal, the tree with each node's status and evidence, the guard evidence per node with its tests by name, the files each node changed, iterations, tokens and cost, the operator's answers, assumptions and open questions): FILE, or - for stdout (the result lines then go to stderr). Default: <git common dir>/treeloop/export/<run-id>.md, outside the work tree. A FILE inside a work tree of the repository must be one git ignores, or the next iteration would commit it."`
	Force  bool   `help:"Replace the branch when it exists (never one that is checked out)."`
	JSON   bool   `name:"json" help:"Print the result as JSON (schemas/runner_export.v1.schema.json)."`
	cli.Get
}

// Main runs runner-export and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-export", "Export a run's code as a clean branch to propose upstream: from the run's base, one commit per passed leaf that changed code (its title and goal, trailers "+export.TrailerNode+", "+export.TrailerGuard+": pass, "+export.TrailerRun+"), no "+layout.Runner+"/ path, no retry or empty commit; the branch's tree is the run branch's outside "+layout.Runner+"/. An unfinished run exports the nodes that passed, with a warning naming the open ones. Only git's plumbing: the work tree and the index are not touched. Writes the pull request body (the tree with each node's evidence, the files each node changed, the operator's answers) to <git common dir>/treeloop/export/<run-id>.md unless --pr-body says where. Prints one line per commit, then branch=<name> head=<sha> onto=<sha> commits=<n> pr_body=<file>. Exit 1 when refused (no run, uncommitted changes in the run's work tree, nothing passed, the branch exists, a conflict with --onto, a --pr-body file git would commit), 6 when git fails.", &Options{}, args, stdin, stdout, stderr)
}

// Output is the --json output (schemas/runner_export.v1.schema.json).
type Output struct {
	Version int    `json:"version"`
	RunID   string `json:"run_id"`
	export.Result
	Base   string `json:"base"` // the commit the run started from; "" for none
	Squash bool   `json:"squash"`
	// Skipped are the passed leaves whose code changed nothing.
	Skipped []string `json:"skipped"`
	// Open are the leaves not passed: not exported.
	Open []string `json:"open"`
	// Unexported is the first commit after the last passed leaf that
	// changed code, "" when none did.
	Unexported string `json:"unexported"`
	PRBody     string `json:"pr_body"` // the file written, absolute; "-" for stdout
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.PRBody == "-" && (o.JSON || o.Wanted()) {
		return errors.New("--pr-body - prints the body on stdout, where --json and --get print the result: write the body to a file instead")
	}
	return nil
}

// Run exports the run.
func (o *Options) Run(env *cli.Env) error {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return exit.Errorf(exit.Negative, "%v", err)
	}
	runID, err := o.runID(env)
	if err != nil {
		return err
	}
	workDir, checkedOut, err := runWorkTree(repo, runID)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	if checkedOut {
		if err := clean(workDir); err != nil {
			return err
		}
	}
	bodyFile, err := o.bodyFile(env, repo, runID, workDir)
	if err != nil {
		return err
	}
	plan, err := export.NewPlan(repo, runID)
	if err != nil {
		return exit.Errorf(exit.Negative, "%v", err)
	}
	warn(env, plan)
	branch := o.Branch
	if branch == "" {
		branch = BranchPrefix + runID
	}
	res, err := export.Build(repo, plan, export.Options{Branch: branch, Onto: o.Onto, Squash: o.Squash, Force: o.Force})
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) {
			return exit.Wrap(exit.RunnerError, err)
		}
		return exit.Errorf(exit.Negative, "%v", err)
	}
	out := Output{Version: 1, RunID: runID, Result: res, Base: plan.Base, Squash: o.Squash, Skipped: []string{}, Open: plan.Open}
	if out.Open == nil {
		out.Open = []string{}
	}
	for _, s := range plan.Steps {
		if !s.Changed {
			out.Skipped = append(out.Skipped, s.Node.ID)
		}
	}
	if plan.Unexported != nil {
		out.Unexported = plan.Unexported.SHA
	}
	body, err := export.ReadBody(repo, plan, res, filepath.Join(workDir, filepath.FromSlash(layout.Iterations), runID))
	if err != nil {
		return exit.Errorf(exit.RunnerError, "the pull request body: %v", err)
	}
	out.PRBody = bodyFile
	if bodyFile == "-" {
		printText(env.Stderr, out)
		if _, err := io.WriteString(env.Stdout, body.Markdown()); err != nil {
			return exit.Errorf(exit.RunnerError, "write stdout: %v", err)
		}
		return nil
	}
	if err := fsutil.WriteAtomic(bodyFile, []byte(body.Markdown()), 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", bodyFile, fsutil.Cause(err))
	}
	if o.JSON || o.Wanted() {
		return o.PrintJSON(env, out)
	}
	printText(env.Stdout, out)
	return nil
}

// bodyFile is where the pull request body goes: --pr-body ("-" for
// stdout), else DefaultBody's file (its directory made). A file in this
// checkout's work tree or the run's that git does not ignore is refused:
// the next iteration would commit it.
func (o *Options) bodyFile(env *cli.Env, repo *git.Repo, runID, workDir string) (string, error) {
	if o.PRBody == "-" {
		return "-", nil
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return "", exit.Wrap(exit.RunnerError, err)
	}
	if o.PRBody == "" {
		f := DefaultBody(dirs.Common, runID)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return "", exit.Errorf(exit.RunnerError, "make %s: %v", filepath.Dir(f), fsutil.Cause(err))
		}
		return f, nil
	}
	f := env.Abs(o.PRBody)
	real := fsutil.Resolved(f)
	if within(real, fsutil.Resolved(dirs.Common)) || within(real, fsutil.Resolved(dirs.Git)) {
		return f, nil
	}
	for _, root := range []string{repo.Root(), workDir} {
		rel, ok := relWithin(real, fsutil.Resolved(root))
		if !ok {
			continue
		}
		wr, err := git.Open(root)
		if err != nil {
			continue // a worktree whose directory is gone
		}
		if _, err := wr.Run("check-ignore", "-q", rel); err != nil {
			return "", exit.Errorf(exit.Negative, "--pr-body %s lies in the work tree %s, where git would commit it with the next iteration: write it outside (the default is %s), or to a path git ignores", o.PRBody, root, DefaultBody(dirs.Common, runID))
		}
	}
	return f, nil
}

// DefaultBody is the pull request body's default file for run runID,
// under the repository's common git directory: out of every work tree.
func DefaultBody(commonDir, runID string) string {
	return filepath.Join(commonDir, "treeloop", "export", runID+".md")
}

// relWithin is p relative to dir, when p lies in dir.
func relWithin(p, dir string) (string, bool) {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func within(p, dir string) bool {
	_, ok := relWithin(p, dir)
	return ok
}

// runID is --run, else the run of run_state.json.
func (o *Options) runID(env *cli.Env) (string, error) {
	id := o.RunID
	if id == "" {
		rs, err := runstate.Load(env.Abs(layout.RunState))
		if err != nil {
			return "", exit.Errorf(exit.Negative, "%v (or name the run with --run)", err)
		}
		if id = runstate.Val(rs.RunID); id == "" {
			return "", exit.Errorf(exit.Negative, "no run started here: name the run with --run (runner-status --runs lists them)")
		}
	}
	if !tree.ValidID(id) {
		return "", exit.Errorf(exit.Usage, "--run %q is not a run id", id)
	}
	return id, nil
}

// runWorkTree is the work tree the run works in: the one its branch is
// checked out in (a worktree run's, or this checkout; checkedOut), else
// this checkout, where an in-place run left its logs.
func runWorkTree(repo *git.Repo, runID string) (dir string, checkedOut bool, err error) {
	ws, err := worktree.List(repo)
	if err != nil {
		return "", false, err
	}
	for _, w := range ws {
		if w.RunID == runID {
			return w.Path, true, nil
		}
	}
	return repo.Root(), false, nil
}

// clean refuses the run's work tree with uncommitted changes: an
// iteration in progress, or work the run branch does not hold. (A
// checkout on another branch holds nothing of the run's.)
func clean(dir string) error {
	wr, err := git.Open(dir)
	if err != nil {
		return nil // a worktree whose directory is gone holds nothing
	}
	st, err := wr.StatusPorcelain()
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	if len(st) > 0 {
		more := ""
		if len(st) > 1 {
			more = fmt.Sprintf(" and %d more", len(st)-1)
		}
		return exit.Errorf(exit.Negative, "%s has uncommitted changes (%s%s): let the iteration finish, or commit or remove them, then export", dir, strings.TrimSpace(st[0][2:]), more)
	}
	return nil
}

// warn says what an unfinished run leaves out.
func warn(env *cli.Env, p export.Plan) {
	if len(p.Open) > 0 {
		names := p.Open
		more := ""
		if len(names) > 10 {
			names, more = names[:10], fmt.Sprintf(" and %d more", len(p.Open)-10)
		}
		env.Warnf("run %s is not complete: %s %s%s not passed; exporting the %s that passed", p.RunID, vocab.Plural(len(p.Open), "leaf", "leaves"), strings.Join(names, ", "), more, vocab.Plural(len(p.Steps), "leaf", "leaves"))
	}
	if c := p.Unexported; c != nil {
		what := "the run's work after the last passed leaf"
		if c.Iter > 0 {
			what = fmt.Sprintf("iteration %d (node %s) and what follows", c.Iter, c.Node)
		}
		env.Warnf("%s changed code that no passed leaf holds: not exported (commit %.12s %q)", what, c.SHA, c.Subject)
	}
}

func printText(w io.Writer, out Output) {
	for _, c := range out.Commits {
		fmt.Fprintf(w, "commit=%s nodes=%s passed=%s title=%q\n", c.Commit, strings.Join(c.Nodes, ","), strings.Join(shorts(c.Loop), ","), c.Title)
	}
	for _, id := range out.Skipped {
		fmt.Fprintf(w, "skipped=%s reason=no-code-change\n", id)
	}
	line := fmt.Sprintf("branch=%s head=%s onto=%s commits=%d", out.Branch, out.Head, orNone(out.Onto), len(out.Commits))
	if out.Unchanged {
		line += " unchanged=true"
	}
	if out.PRBody != "" {
		line += " pr_body=" + out.PRBody
	}
	fmt.Fprintln(w, line)
}

func shorts(shas []string) []string {
	out := make([]string, len(shas))
	for i, s := range shas {
		out[i] = s[:min(12, len(s))]
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
