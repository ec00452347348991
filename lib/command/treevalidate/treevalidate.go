// Package treevalidate is the tree-validate command: schema and invariants of
// a task tree, and with a previous tree the behavioural checks (seed 002).
package treevalidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/provenance"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/tree"
)

// Options is the command line of tree-validate.
type Options struct {
	cli.Chdir
	File      string `arg:"" optional:"" placeholder:"FILE|-" help:"Tree file to check, - for standard input (default .runner/state/tree.json)."`
	Prev      string `placeholder:"FILE" help:"Previous tree: also check passed-node immutability against it." xor:"prev"`
	PrevRev   string `placeholder:"REV" help:"Previous tree taken from the git revision REV (the file's path at REV)." xor:"prev"`
	Selected  string `placeholder:"ID" predictor:"node" help:"Selected node id: with --status, also check status invariants and child additions (needs --prev or --prev-rev)."`
	Status    string `enum:",done,retry,decomposed,blocked" default:"" help:"Agent status for --selected: done, retry, decomposed or blocked."`
	Staged    bool   `help:"Check the tree staged in the git index against HEAD's (for the pre-commit hook)." xor:"prev"`
	By        string `name:"by" enum:",human,operator,loop" default:"" help:"Who changes the tree, for the runner-owned fields (passes, attempts, max_attempts, next, waiting, answers) of existing nodes against the previous tree: human (the default) may change none, operator (tree-edit) attempts, max_attempts, next, waiting and answers of open nodes (and reopen a passed node no loop commit backs, --audit), loop (loop-commit) the transitions tree-update judged. passes never becomes true but through the loop. Not with --staged, which tells who commits from the processes (the committing loop-commit, step-begin or step-end, which commit runner-step's iterations in process, or tree-edit, holding .runner/lock), never from a variable."`
	Canonical bool   `help:"Also demand canonical bytes (keys in schema order, 2-space indent, sorted children, trailing newline)."`
	Audit     bool   `help:"Also check that every passed node passed through the loop (DESIGN.md decision 16): a passed leaf needs a commit of the run, reachable from HEAD, saying it passed on a green guard (chore(loop): run <run> iter <n> node <id> status=done guard=pass), confirmed by that iteration's local log where it is kept; a passed inner node needs its children backed. Each node without one is an error naming the fix (tree-edit retry ID); with --json, the report lists each passed node's backing commit (audit.passes)."`
	KeepAudit bool   `name:"keep-audit" help:"With --audit, keep what the audit read (the commit it read the history up to, the run's pass commits, the logs that confirmed them) in .runner/iterations/<run>/audit-cache.json, so the next audit reads only what changed since: runner-step's start, between sessions. Without it the cache is only read."`
	JSON      bool   `name:"json" help:"Print the result as JSON on stdout."`
	cli.Get
	// SchemaWords is schema.WordsFlag: the helper of the programs that do
	// not link the full validator (schema.WordsOrHelper).
	SchemaWords string `name:"schema-words" hidden:"" placeholder:"KIND" help:"Print the violations of the JSON document on standard input against the embedded schema KIND (schema.WordsOrHelper), as a JSON array."`
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.SchemaWords != "" && (o.File != "" || o.Prev != "" || o.PrevRev != "" || o.Selected != "" || o.Staged || o.By != "" || o.Canonical || o.Audit || o.KeepAudit || o.JSON || o.Get.Wanted()) {
		return errors.New("--schema-words reads one document on standard input and takes no other option")
	}
	if (o.Selected == "") != (o.Status == "") {
		return errors.New("--selected and --status go together")
	}
	if o.Selected != "" && o.Prev == "" && o.PrevRev == "" && !o.Staged {
		return errors.New("--selected needs --prev, --prev-rev or --staged")
	}
	if o.Staged && o.File == "-" {
		return errors.New("--staged reads the index; give no FILE or the tree's path")
	}
	if o.Staged && o.By != "" {
		return errors.New("--staged tells who commits from the processes; --by goes with --prev or --prev-rev")
	}
	if o.Audit && o.Staged {
		return errors.New("--audit checks a tree against HEAD's history, not the index: use one or the other")
	}
	return nil
}

// Main runs tree-validate and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("tree-validate", "Check a task tree: schema, invariants and, against a previous tree, immutability, child additions and status invariants. Exit 0 valid, 1 invalid.", &Options{}, args, stdin, stdout, stderr)
}

// Report is the --json output.
type Report struct {
	Version int            `json:"version"`
	File    string         `json:"file"`
	Valid   bool           `json:"valid"`
	Nodes   int            `json:"nodes"`
	Errors  []tree.Problem `json:"errors"`
	// Audit is --audit's report of a valid tree: every passed node's
	// backing and the nodes without one.
	Audit *provenance.Report `json:"audit,omitempty"`
}

// Run executes the command.
func (o *Options) Run(env *cli.Env) error {
	if o.SchemaWords != "" {
		return schemaWords(env, schema.Kind(o.SchemaWords))
	}
	in, err := o.read(env)
	defer in.close()
	if err != nil || in.unstaged {
		return err
	}
	root, ps, prev := load(in)
	if in.havePrev && root != nil {
		if ps, err = o.compare(env, prev, root, ps); err != nil {
			return err
		}
	}
	if root != nil && o.Canonical && !tree.IsCanonical(in.data, root) {
		ps = append(ps, tree.Problem{Layer: tree.LayerJSON, Message: "not in canonical form (keys in schema order, 2-space indent, children sorted by (order,id), trailing newline)"})
	}
	if o.File == "" && !o.Staged {
		ps = append(ps, deployedSchema(env)...)
	}
	var audit *provenance.Report
	if o.Audit && root != nil && len(ps) == 0 {
		auditRepo := provenance.AuditRepo
		if o.KeepAudit {
			auditRepo = provenance.AuditRepoKeep
		}
		rep, err := auditRepo(env.Dir, root)
		if err != nil {
			return exit.Errorf(exit.RunnerError, "audit the passed nodes against the run's history: %v", err)
		}
		for _, u := range rep.Unbacked {
			ps = append(ps, tree.Problem{Layer: tree.LayerProvenance, Path: u.Path, Message: u.Message()})
		}
		audit = &rep
	}
	return o.report(env, in.name, root, ps.Sorted(), audit)
}

// input is the tree tree-validate checks and the previous tree it is
// judged against (havePrev), as read.
type input struct {
	name           string // the tree's name in messages
	data, prevData []byte
	havePrev       bool
	unstaged       bool     // --staged and no tree staged: nothing to check
	releases       []func() // the mapped files' releases
}

// close releases the mapped files.
func (in *input) close() {
	for _, r := range in.releases {
		r()
	}
}

// read reads the tree (the index with --staged, standard input for -, else
// the file) and the previous tree (--prev, --prev-rev, HEAD's with
// --staged). With --staged it sets o.By to who commits. Errors carry the
// runner-error exit code.
func (o *Options) read(env *cli.Env) (*input, error) {
	in := &input{name: o.File}
	if in.name == "" {
		in.name = layout.Tree
	}
	var err error
	switch {
	case o.Staged:
		var newRun bool
		var root string
		in.data, in.prevData, in.havePrev, newRun, root, err = staged(env, in.name)
		o.By = string(provenance.Committer(root))
		if in.data == nil && err == nil {
			in.unstaged = true
			return in, nil // tree not staged: nothing to check
		}
		// A new run's bootstrap commit (runner-start after runner-init
		// --new) replaces the tree: a tree with no passed node, staged with
		// a new run id, is judged alone, not against the old goal's tree.
		// A tree with a passed node is always judged against HEAD's.
		if newRun && err == nil {
			if r, ps := tree.Load(in.data); len(ps) == 0 && !tree.AnyPassed(r) {
				in.havePrev = false
			}
		}
	case in.name == "-":
		in.data, err = io.ReadAll(io.LimitReader(env.Stdin, fsutil.MaxStateFile+1))
		if err == nil && len(in.data) > fsutil.MaxStateFile {
			err = fmt.Errorf("larger than %d bytes", fsutil.MaxStateFile)
		}
		in.name = "<stdin>"
	default:
		var release func()
		in.data, release, err = fsutil.MapFile(env.Abs(in.name), env.Dir, 0)
		in.releases = append(in.releases, release)
	}
	if err != nil {
		return in, exit.Errorf(exit.RunnerError, "read %s: %w", in.name, fsutil.Cause(err))
	}
	if o.Prev != "" {
		var release func()
		in.prevData, release, err = fsutil.MapFile(env.Abs(o.Prev), env.Dir, 0)
		in.releases = append(in.releases, release)
		if err != nil {
			return in, exit.Errorf(exit.RunnerError, "read %s: %w", o.Prev, fsutil.Cause(err))
		}
		in.havePrev = true
	}
	if o.PrevRev != "" {
		in.prevData, in.havePrev, err = atRev(env, o.PrevRev, in.name)
		if err != nil {
			return in, err
		}
	}
	return in, nil
}

// loaded is a tree as tree.Load found it, or the fault that stopped
// reading its mapped file.
type loaded struct {
	root  *tree.Node
	ps    tree.Problems
	fault any
}

// load parses the tree and, when there is one, the previous tree.
// The two trees are independent until compared: they are loaded side by
// side. A fault reading a mapped file in that goroutine is passed on as
// its panic, for cli.Run to report (fsutil.MapFile).
func load(in *input) (*tree.Node, tree.Problems, loaded) {
	prevDone := make(chan loaded, 1)
	if in.havePrev {
		go func() {
			debug.SetPanicOnFault(true)
			defer func() {
				if r := recover(); r != nil {
					prevDone <- loaded{fault: r}
				}
			}()
			r, ps := tree.Load(in.prevData)
			prevDone <- loaded{root: r, ps: ps}
		}()
	}
	root, ps := tree.Load(in.data)
	var prev loaded
	if in.havePrev {
		if prev = <-prevDone; prev.fault != nil {
			panic(prev.fault)
		}
	}
	return root, ps, prev
}

// compare adds to ps the problems of root against the previous tree: its
// own problems, else immutability, the runner-owned fields by who changes
// the tree (--by) and, with --selected, child additions and status
// invariants.
func (o *Options) compare(env *cli.Env, prevLoaded loaded, root *tree.Node, ps tree.Problems) (tree.Problems, error) {
	prev, pps := prevLoaded.root, prevLoaded.ps
	if pps != nil {
		for _, p := range pps {
			p.Message = "previous tree: " + p.Message
			ps = append(ps, p)
		}
		return ps, nil
	}
	by := tree.Changer(o.By)
	if by == "" {
		by = tree.ByHuman
	}
	if by == tree.ByOperator {
		// An operator may reopen a passed node no loop commit backs
		// (tree-edit retry): judged as if it had never passed.
		var err error
		if prev, err = reopened(env, prev, root); err != nil {
			return nil, err
		}
	}
	ps = append(ps, tree.Immutability(prev, root)...)
	// A step being judged (--selected) makes the selected node's
	// transition and derives its ancestors' passes.
	ps = append(ps, tree.RunnerOwnedChanges(prev, root, by, tree.SelectedAndAncestors(prev, o.Selected))...)
	if o.Selected != "" {
		ps = append(ps, tree.ChildAdditions(prev, root, o.Selected, o.Status)...)
		ps = append(ps, tree.StatusInvariants(prev, root, o.Selected, o.Status)...)
	}
	return ps, nil
}

// report prints the problems (each on stderr, or the --json report on
// stdout); problems make the exit code negative.
func (o *Options) report(env *cli.Env, name string, root *tree.Node, ps tree.Problems, audit *provenance.Report) error {
	if o.JSON || o.Wanted() {
		rep := Report{Version: 1, File: name, Valid: len(ps) == 0, Nodes: tree.Count(root), Errors: ps, Audit: audit}
		if rep.Errors == nil {
			rep.Errors = []tree.Problem{}
		}
		if err := o.PrintJSON(env, rep); err != nil {
			return err
		}
	} else {
		for _, p := range ps {
			env.Errorf("%s: %s", name, p)
		}
		if firstOnly(ps) {
			env.Errorf("%s: the first schema problem only: run tree-validate for all of them", name)
		}
	}
	if len(ps) > 0 {
		return cli.Silent(exit.Negative)
	}
	return nil
}

// firstOnly reports whether ps words a tree the schema refuses without
// the full validator (step-begin runs tree-validate in process without
// it): the fast path names the first problem only.
func firstOnly(ps tree.Problems) bool {
	if schema.Linked() {
		return false
	}
	for _, p := range ps {
		if p.Layer == tree.LayerSchema && !strings.HasPrefix(p.Message, layout.Schema) {
			return true
		}
	}
	return false
}

// deployedSchema reports a .runner/state/schema.json that differs from the
// embedded schema (DESIGN.md decision 10). A missing copy is not an error.
func deployedSchema(env *cli.Env) tree.Problems {
	p := env.Abs(layout.Schema)
	got, err := fsutil.ReadFile(p, env.Dir, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return tree.Problems{{Layer: tree.LayerSchema, Message: fmt.Sprintf("%s: %v", layout.Schema, fsutil.Cause(err))}}
	}
	if !bytes.Equal(got, schema.Source(schema.TaskTree)) {
		return tree.Problems{{Layer: tree.LayerSchema, Message: layout.Schema + " differs from the embedded schema; restore it with runner-init (it rewrites the schema copies and keeps every other file)"}}
	}
	return nil
}

func repoPath(env *cli.Env, r *git.Repo, name string) (string, error) {
	abs := env.Abs(name)
	rel, err := filepath.Rel(r.Root(), abs)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// staged reads the tree staged in the index and HEAD's (havePrev false
// when HEAD has none); newRun reports that the index stages run_state.json
// with a run id other than HEAD's (runner-start's bootstrap commit of a new
// run).
func staged(env *cli.Env, name string) (data, prev []byte, havePrev, newRun bool, root string, err error) {
	r, err := git.Open(env.Dir)
	if err != nil {
		return nil, nil, false, false, "", exit.Wrap(exit.RunnerError, err)
	}
	data, prev, havePrev, newRun, err = stagedFiles(env, r, name)
	return data, prev, havePrev, newRun, r.Root(), err
}

// stagedFiles is staged's reading.
func stagedFiles(env *cli.Env, r *git.Repo, name string) (data, prev []byte, havePrev, newRun bool, err error) {
	rel, err := repoPath(env, r, name)
	if err != nil {
		return nil, nil, false, false, exit.Wrap(exit.RunnerError, err)
	}
	// The staged tree, HEAD's and both run_state.json in one git process
	// (the hook runs in every loop commit).
	want := []git.File{{Rev: ":", Path: rel}, {Rev: ":", Path: layout.RunState}}
	commits := r.HasCommits()
	if commits {
		want = append(want, git.File{Rev: "HEAD", Path: rel}, git.File{Rev: "HEAD", Path: layout.RunState})
	}
	files, err := r.ShowFiles(want...)
	if err == nil {
		err = files[0].Err
	}
	if err != nil {
		return nil, nil, false, false, exit.Wrap(exit.RunnerError, err)
	}
	if !files[0].OK || !commits {
		return files[0].Data, nil, false, false, nil
	}
	if err := files[2].Err; err != nil {
		return nil, nil, false, false, exit.Wrap(exit.RunnerError, err)
	}
	if stagedRS, headRS := files[1], files[3]; stagedRS.Err == nil && headRS.Err == nil && stagedRS.OK && headRS.OK {
		newRun = runID(stagedRS.Data) != runID(headRS.Data)
	}
	return files[0].Data, files[2].Data, files[2].OK, newRun, nil
}

// runID is the run_id of run_state.json bytes ("" when it has none or
// does not parse).
func runID(data []byte) string {
	var s struct {
		RunID *string `json:"run_id"`
	}
	if json.Unmarshal(data, &s) != nil || s.RunID == nil {
		return ""
	}
	return *s.RunID
}

func atRev(env *cli.Env, rev, name string) ([]byte, bool, error) {
	if name == "<stdin>" {
		name = layout.Tree
	}
	r, err := git.Open(env.Dir)
	if err != nil {
		return nil, false, exit.Wrap(exit.RunnerError, err)
	}
	rel, err := repoPath(env, r, name)
	if err != nil {
		return nil, false, exit.Wrap(exit.RunnerError, err)
	}
	data, ok, err := r.ShowFile(rev, rel)
	if err != nil {
		return nil, false, exit.Wrap(exit.RunnerError, err)
	}
	if !ok {
		return nil, false, exit.Errorf(exit.RunnerError, "%s does not exist at %s", rel, rev)
	}
	return data, true, nil
}

// reopened is prev with the passed nodes that next reopens set open, when
// the run's history does not back them (lib/provenance).
func reopened(env *cli.Env, prev, next *tree.Node) (*tree.Node, error) {
	if !provenance.Reopens(prev, next) {
		return prev, nil
	}
	rep, err := provenance.AuditRepo(env.Dir, prev)
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "audit the previous tree's passed nodes: %v", err)
	}
	return provenance.Reopen(prev, next, rep.Unbacked), nil
}

// schemaWords prints the violations of the document on stdin against k
// (--schema-words), as schema.WordsOrHelper reads them: usage for a kind
// the program does not embed, 1 for stdin that is not one JSON document.
func schemaWords(env *cli.Env, k schema.Kind) error {
	if !slices.Contains(schema.Kinds, k) {
		return exit.Errorf(exit.Usage, "--schema-words: no embedded schema %q", k)
	}
	data, err := io.ReadAll(env.Stdin)
	if err != nil {
		return exit.Errorf(exit.Negative, "read standard input: %v", err)
	}
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return exit.Errorf(exit.Negative, "standard input: %v", err)
	}
	vs, linked := schema.Words(k, v)
	if !linked {
		return exit.Errorf(exit.RunnerError, "--schema-words: this program does not link the full validator (lib/schema/full)")
	}
	out := []schema.HelperViolation{}
	for _, x := range vs {
		out = append(out, schema.HelperViolation{Pointer: x.Pointer, Message: x.Message})
	}
	return env.PrintJSON(out)
}
