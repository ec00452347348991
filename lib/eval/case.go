// Package eval holds the pure parts of the eval harness (seed 000 §13,
// STYLE.md "The eval harness"): case files and their strict decoding, the
// checks run on a finished workspace, outcome classification, per-attempt
// results, summaries with Wilson intervals, and the paired comparison of two
// summaries. The command eval-run (lib/command/evalrun) drives the real loops.
package eval

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/tomlkey"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Case is one eval case, eval/cases/<id>.toml (seed 000 §13.2). Paths in
// the file are relative to the file's directory; Case holds them absolute.
type Case struct {
	File        string             // the case file, absolute
	ID          string             // [case] id, a node-id-like name (it becomes a path)
	Description string             // [case] description, optional
	Goal        string             // the goal text: [case] goal, or the contents of [case] goal_file
	Fixture     string             // [case] fixture: the starting repository's files; "" = an empty repository
	RootNext    string             // [case] root_next: "decompose" (default) or "execute", runner-init --next
	TimeoutSecs int                // [case] timeout_secs: wall-clock budget of the whole loop, default DefaultTimeoutSecs
	Expect      string             // [case] expect: the outcome the case is built to reach; "" = not stated
	Config      map[string]any     // [config]: overrides of .runner/state/config.toml
	Backends    map[string]Backend // [backends.NAME]: agents this case defines (its scripted stand-in)
	Checks      []Check            // [[checks]], in file order
}

// DefaultTimeoutSecs is a case's loop budget when timeout_secs is absent.
const DefaultTimeoutSecs = 1800

// Backend is one named agent configuration an eval can run a case with:
// a [backends.NAME] table of a case or a [NAME] table of eval/backends.toml.
// Its keys become the workspace's [agent] table.
type Backend struct {
	Name      string   // the name --backend uses
	Backend   string   // agent.backend: command, claude, codex, opencode, gemini, replay
	Bin       string   // agent.bin; a relative path with a slash is resolved against its file's directory
	Model     string   // agent.model
	ExtraArgs []string // agent.extra_args
	// The models by mode and attempt (agent.decompose_model,
	// execute_model, last_attempt_model): two routing policies are two
	// backends; "" = model.
	DecomposeModel, ExecuteModel, LastAttemptModel string
	Env                                            []string // KEY=VALUE added to the loop's environment
}

// Check kinds (STYLE.md: a small closed set of deterministic kinds).
const (
	FileExists      = "file_exists"       // path exists in the workspace
	FileContains    = "file_contains"     // path's content matches the regex pattern
	CommandSucceeds = "command_succeeds"  // cmd (argv) exits 0 within timeout_secs
	RunnerCompleted = "runner_completed"  // the loop ended complete and the root passes
	JSONPath        = "json_path"         // gjson query on the JSON file path: equals a value, or exists (true/false)
	TreePassedCount = "tree_passed_count" // number of passed nodes in .runner/state/tree.json within [min, max]
	TreeMaxDepth    = "tree_max_depth"    // depth of the deepest node (root 0) within [min, max]
)

// CheckTypes lists the check kinds in documentation order.
var CheckTypes = []string{FileExists, FileContains, CommandSucceeds, RunnerCompleted, JSONPath, TreePassedCount, TreeMaxDepth}

// checkKeys are the keys each kind takes besides type and name.
var checkKeys = map[string][]string{
	FileExists:      {"path"},
	FileContains:    {"path", "pattern"},
	CommandSucceeds: {"cmd", "timeout_secs"},
	RunnerCompleted: {},
	JSONPath:        {"path", "query", "equals", "exists"},
	TreePassedCount: {"min", "max"},
	TreeMaxDepth:    {"min", "max"},
}

// DefaultCheckTimeoutSecs bounds a command_succeeds check without timeout_secs.
const DefaultCheckTimeoutSecs = 120

// Check is one [[checks]] entry.
type Check struct {
	Name        string   // name, default "<type> <what>"
	Type        string   // one of CheckTypes
	Path        string   // file_exists, file_contains, json_path: relative to the workspace
	Pattern     string   // file_contains: RE2 regular expression, multi-line: ^ and $ match at line breaks
	Cmd         []string // command_succeeds: argv, run in the workspace
	TimeoutSecs int      // command_succeeds
	Query       string   // json_path: gjson path
	Equals      any      // json_path: the expected value (TOML value, compared as JSON)
	HasEquals   bool
	Exists      *bool // json_path: whether the query must match
	Min, Max    *int  // tree checks
	re          *regexp.Regexp
}

// Outcomes (seed 000 §13.4 with this project's exit codes).
const (
	Success = string(vocab.OutcomeSuccess) // the loop completed and every check passed
	Fail    = string(vocab.OutcomeFail)    // the loop completed and a check failed
	Stuck   = string(vocab.OutcomeStuck)   // exit 3
	Limit   = string(vocab.OutcomeLimit)   // exit 4: max_iterations or a run budget
	Timeout = string(vocab.OutcomeTimeout) // exit 124, or the case's timeout_secs ran out
	Error   = string(vocab.OutcomeError)   // anything else, with the reason
)

// Outcomes lists every outcome in table order.
var Outcomes = []string{Success, Fail, Stuck, Limit, Timeout, Error}

// Problem is one thing wrong with a case file, at a line and column when
// known.
type Problem struct {
	File      string
	Line, Col int
	Msg       string
}

func (p Problem) Error() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// Problems is every problem found in a set of case files.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Error()
	}
	return strings.Join(s, "\n")
}

// LoadDir reads every *.toml case in dir, sorted by id. It returns the
// cases and every problem of every file (unknown keys, missing or
// inapplicable keys, bad regexes, bad config overrides, duplicate ids; a
// value of a wrong type stops its file's decoding: ParseCase); callers run
// nothing unless problems is empty.
func LoadDir(dir string) ([]*Case, Problems, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no cases (*.toml) in %s", dir)
	}
	return LoadFiles(files)
}

// LoadFiles reads the given case files; see LoadDir.
func LoadFiles(files []string) ([]*Case, Problems, error) {
	var cases []*Case
	var probs Problems
	seen := map[string]string{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, nil, err
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, nil, err
		}
		c, ps := ParseCase(abs, data)
		probs = append(probs, ps...)
		if c == nil {
			continue
		}
		if prev, ok := seen[c.ID]; ok {
			probs = append(probs, Problem{File: abs, Msg: fmt.Sprintf("case id %q is also used by %s", c.ID, prev)})
			continue
		}
		seen[c.ID] = abs
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
	return cases, probs, nil
}

// ParseCase decodes one case file with go-toml's strict decoder. file is
// its absolute path (paths in the case resolve against its directory). It
// returns nil and the problems when the file cannot be used: every
// unknown key and every value the case cannot take, or the first value of
// a wrong type (which stops the decoding), each at its line and column.
func ParseCase(file string, data []byte) (*Case, Problems) {
	d := &decoder{file: file}
	var doc caseDoc
	if !d.decode(data, &doc) {
		return nil, d.sorted()
	}
	dir := filepath.Dir(file)
	c := &Case{File: file, RootNext: "decompose", TimeoutSecs: DefaultTimeoutSecs, Config: map[string]any{}, Backends: map[string]Backend{}}
	if doc.Case == nil {
		d.at(nil, -1, "the file: missing [case]: add the table")
	} else {
		d.caseTable(doc.Case, c, file, dir)
	}
	if doc.Config != nil {
		c.Config = doc.Config
		d.checkConfig(doc.Config)
	}
	for _, name := range slices.Sorted(maps.Keys(doc.Backends)) {
		c.Backends[name] = d.backend(doc.Backends[name], []string{"backends", name}, dir)
	}
	for i, ct := range doc.Checks {
		c.Checks = append(c.Checks, d.check(ct, i))
	}
	if len(c.Checks) == 0 {
		d.at(nil, -1, "a case needs at least one [[checks]] entry")
	}
	if len(d.probs) > 0 {
		return nil, d.sorted()
	}
	return c, nil
}

// caseTable reads [case] of the case file (its directory dir) into c.
func (d *decoder) caseTable(t *caseTable, c *Case, file, dir string) {
	key := func(k string) []string { return []string{"case", k} }
	switch {
	case t.ID == nil:
		d.at(key("id"), -1, "[case]: missing id: add id = \"…\"")
	case *t.ID == "":
		d.at(key("id"), -1, "id must not be empty")
	case !tree.ValidID(*t.ID):
		d.at(key("id"), -1, "id %q must match %s (it becomes a directory name)", *t.ID, tree.IDPattern)
	default:
		c.ID = *t.ID
		if base := strings.TrimSuffix(filepath.Base(file), ".toml"); c.ID != base {
			d.at(key("id"), -1, "id %q differs from the file name: name the file %s.toml or the case %q", c.ID, c.ID, base)
		}
	}
	c.Description = t.Description
	d.goal(t, c, dir)
	if t.Fixture != "" {
		c.Fixture = filepath.Join(dir, t.Fixture)
		if st, err := os.Stat(c.Fixture); err != nil || !st.IsDir() {
			d.at(key("fixture"), -1, "fixture %q is not a directory next to the case file", t.Fixture)
		}
	}
	if n := t.RootNext; n != "" {
		if n != "decompose" && n != "execute" {
			d.at(key("root_next"), -1, "root_next must be \"decompose\" or \"execute\", got %q", n)
		}
		c.RootNext = n
	}
	if t.TimeoutSecs != nil {
		if *t.TimeoutSecs < 1 {
			d.at(key("timeout_secs"), -1, "timeout_secs must be at least 1, got %d", *t.TimeoutSecs)
		}
		c.TimeoutSecs = *t.TimeoutSecs
	}
	if e := t.Expect; e != "" {
		if !slices.Contains(Outcomes, e) {
			d.at(key("expect"), -1, "expect must be one of %s, got %q", strings.Join(Outcomes, ", "), e)
		}
		c.Expect = e
	}
}

// goal reads [case]'s goal or goal_file (relative to dir) into c.Goal.
func (d *decoder) goal(t *caseTable, c *Case, dir string) {
	switch {
	case t.Goal != "" && t.GoalFile != "":
		d.at([]string{"case", "goal_file"}, -1, "give goal or goal_file, not both")
	case t.GoalFile != "":
		b, err := os.ReadFile(filepath.Join(dir, t.GoalFile))
		if err != nil {
			d.at([]string{"case", "goal_file"}, -1, "goal_file: %v", cause(err))
		}
		c.Goal = string(b)
	case t.Goal != "":
		c.Goal = t.Goal
	default:
		d.at([]string{"case"}, -1, "[case]: missing goal: needs goal (text) or goal_file (a GOAL.md)")
	}
	if c.Goal != "" && !strings.HasPrefix(strings.TrimLeft(c.Goal, "\n"), "# ") {
		// runner-init takes the first "# " heading as the root's title.
		key := "goal"
		if t.GoalFile != "" {
			key = "goal_file"
		}
		d.at([]string{"case", key}, -1, "the goal must start with a \"# \" heading (the root node's title)")
	}
}

// BackendsFile reads eval/backends.toml: one [NAME] table per backend, keys
// as in a case's [backends.NAME], decoded strictly as a case is.
func BackendsFile(file string) (map[string]Backend, Problems, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Backend{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	d := &decoder{file: file}
	var doc map[string]*backendTable
	if !d.decode(data, &doc) {
		return nil, d.sorted(), nil
	}
	out := map[string]Backend{}
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		out[name] = d.backend(doc[name], []string{name}, filepath.Dir(file))
	}
	return out, d.sorted(), nil
}

// ResolveBackend finds the agent configuration for --backend name: the
// case's [backends.NAME], else shared[name] (eval/backends.toml), else a
// built-in backend of that name (config.Backends) with its defaults.
func ResolveBackend(c *Case, name string, shared map[string]Backend) (Backend, error) {
	if b, ok := c.Backends[name]; ok {
		return b, nil
	}
	if b, ok := shared[name]; ok {
		return b, nil
	}
	if slices.Contains(config.Backends, name) && name != "replay" {
		return Backend{Name: name, Backend: name, ExtraArgs: []string{}}, nil
	}
	return Backend{}, fmt.Errorf("case %s has no backend %q: define [backends.%s] in %s or [%s] in eval/backends.toml, or use a built-in backend (%s)",
		c.ID, name, name, filepath.Base(c.File), name, strings.Join(slices.DeleteFunc(slices.Clone(config.Backends), func(s string) bool { return s == "replay" }), ", "))
}

// checkConfig validates [config] as a config.toml would be: unknown keys,
// wrong types and bad values, each at its line in the case file.
func (d *decoder) checkConfig(m map[string]any) {
	data, err := toml.Marshal(m)
	if err != nil {
		d.at([]string{"config"}, -1, "[config]: %v", err)
		return
	}
	_, err = config.Parse("", data)
	if err == nil {
		return
	}
	var list []*config.Error
	var es config.Errors
	var e1 *config.Error
	switch {
	case errors.As(err, &es):
		list = es
	case errors.As(err, &e1):
		list = []*config.Error{e1}
	default:
		d.at([]string{"config"}, -1, "[config]: %v", err)
		return
	}
	for _, e := range list {
		key := e.Key
		if i := strings.IndexByte(key, '['); i >= 0 {
			key = key[:i]
		}
		d.at(append([]string{"config"}, strings.Split(key, ".")...), -1, "[config] %s", e.Msg)
	}
}

// backend reads a backend table at key; dir resolves a relative bin with
// a slash.
func (d *decoder) backend(t *backendTable, key []string, dir string) Backend {
	name := key[len(key)-1]
	b := Backend{Name: name, ExtraArgs: []string{}}
	if !tree.ValidID(name) {
		d.at(key, -1, "backend name %q must match %s", name, tree.IDPattern)
	}
	at := func(k string) []string { return append(slices.Clone(key), k) }
	if t == nil {
		t = &backendTable{}
	}
	switch {
	case t.Backend == nil:
		d.at(key, -1, "[%s]: missing backend: add backend = \"…\"", tomlkey.Join(key))
	case !slices.Contains(config.Backends, *t.Backend):
		d.at(at("backend"), -1, "backend must be one of %s, got %q", strings.Join(config.Backends, ", "), *t.Backend)
		b.Backend = *t.Backend
	default:
		b.Backend = *t.Backend
	}
	b.Bin = t.Bin
	if strings.ContainsRune(b.Bin, '/') && !filepath.IsAbs(b.Bin) {
		b.Bin = filepath.Join(dir, b.Bin)
	}
	b.Model, b.DecomposeModel, b.ExecuteModel, b.LastAttemptModel = t.Model, t.DecomposeModel, t.ExecuteModel, t.LastAttemptModel
	if t.ExtraArgs != nil {
		b.ExtraArgs = t.ExtraArgs
	}
	for _, kv := range t.Env {
		if k, _, found := strings.Cut(kv, "="); !found || k == "" {
			d.at(at("env"), -1, "env entries are KEY=VALUE, got %q", kv)
		}
	}
	b.Env = t.Env
	return b
}

// check reads checks[i].
func (d *decoder) check(t checkTable, i int) Check {
	c := Check{Name: t.Name}
	at := func(k string) []string { return []string{"checks", k} }
	need := func(k string, v *string) string {
		switch {
		case v == nil:
			d.at(at(k), i, "checks[%d]: missing %s: add %s = \"…\"", i, k, k)
		case *v == "":
			d.at(at(k), i, "%s must not be empty", k)
		default:
			return *v
		}
		return ""
	}
	c.Type = need("type", t.Type)
	if !d.checkKeys(t, c.Type, i) {
		return c
	}
	switch c.Type {
	case FileExists:
		c.Path = need("path", t.Path)
	case FileContains:
		c.Path = need("path", t.Path)
		c.Pattern = need("pattern", t.Pattern)
		if c.Pattern != "" {
			if _, err := regexp.Compile(c.Pattern); err != nil {
				d.at(at("pattern"), i, "pattern: %v", err)
			} else {
				c.re = regexp.MustCompile("(?m)" + c.Pattern)
			}
		}
	case CommandSucceeds:
		d.commandCheck(t, &c, i)
	case JSONPath:
		c.Path = need("path", t.Path)
		c.Query = need("query", t.Query)
		c.Equals, c.HasEquals = t.Equals, t.Equals != nil
		c.Exists = t.Exists
		if c.HasEquals == (c.Exists != nil) {
			d.at([]string{"checks"}, i, "checks[%d]: a json_path check takes either equals or exists", i)
		}
	case TreePassedCount, TreeMaxDepth:
		d.boundsCheck(t, &c, i)
	}
	if c.Path != "" && (filepath.IsAbs(c.Path) || strings.HasPrefix(filepath.Clean(c.Path), "..")) {
		d.at(at("path"), i, "path %q must be relative to the workspace and stay inside it", c.Path)
	}
	if c.Name == "" {
		c.Name = defaultName(c)
	}
	return c
}

// checkKeys reports whether typ is a known check type, and refuses the
// keys checks[i] (t) has that a check of that type does not take: one no
// check takes as well as one of another kind.
func (d *decoder) checkKeys(t checkTable, typ string, i int) bool {
	allowed, known := checkKeys[typ]
	if typ != "" && !known {
		d.at([]string{"checks", "type"}, i, "unknown check type %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))
	}
	takesNo := func(k string) string {
		if len(allowed) == 0 {
			return fmt.Sprintf("a %s check takes no %q", typ, k)
		}
		return fmt.Sprintf("a %s check takes no %q (it takes %s)", typ, k, strings.Join(allowed, ", "))
	}
	// Keys no check takes (go-toml's strict decoding found them).
	for _, p := range d.inCheck[i] {
		msg := fmt.Sprintf("unknown key %q", joinElem(p))
		if known {
			msg = takesNo(p.Key[1])
		}
		d.probs = append(d.probs, Problem{File: d.file, Line: p.Line, Col: p.Col, Msg: msg})
	}
	if !known {
		return false
	}
	// Keys another kind of check takes.
	for _, k := range t.keys() {
		if !slices.Contains(allowed, k) {
			d.at([]string{"checks", k}, i, "%s", takesNo(k))
		}
	}
	return true
}

// commandCheck reads checks[i]'s cmd and timeout_secs (t) into c.
func (d *decoder) commandCheck(t checkTable, c *Check, i int) {
	switch {
	case t.Cmd == nil:
		d.at([]string{"checks", "cmd"}, i, "checks[%d]: missing cmd: add cmd = [\"program\", \"arg\", …]", i)
	case len(*t.Cmd) == 0 || (*t.Cmd)[0] == "":
		d.at([]string{"checks", "cmd"}, i, "cmd must be a non-empty argv")
		c.Cmd = *t.Cmd
	default:
		c.Cmd = *t.Cmd
	}
	c.TimeoutSecs = DefaultCheckTimeoutSecs
	if t.TimeoutSecs != nil {
		if *t.TimeoutSecs < 1 {
			d.at([]string{"checks", "timeout_secs"}, i, "timeout_secs must be at least 1, got %d", *t.TimeoutSecs)
		}
		c.TimeoutSecs = *t.TimeoutSecs
	}
}

// boundsCheck reads checks[i]'s min and max (t), a tree count check.
func (d *decoder) boundsCheck(t checkTable, c *Check, i int) {
	c.Min, c.Max = t.Min, t.Max
	for k, v := range map[string]*int{"min": c.Min, "max": c.Max} {
		if v != nil && *v < 0 {
			d.at([]string{"checks", k}, i, "%s must be 0 or more, got %d", k, *v)
		}
	}
	switch {
	case c.Min == nil && c.Max == nil:
		d.at([]string{"checks"}, i, "checks[%d]: a %s check needs min, max or both", i, c.Type)
	case c.Min != nil && c.Max != nil && *c.Min > *c.Max:
		d.at([]string{"checks", "min"}, i, "min %d is more than max %d", *c.Min, *c.Max)
	}
}

func defaultName(c Check) string {
	switch c.Type {
	case FileExists, FileContains:
		return c.Type + " " + c.Path
	case JSONPath:
		return c.Type + " " + c.Path + " " + c.Query
	case CommandSucceeds:
		return c.Type + " " + strings.Join(c.Cmd, " ")
	}
	return c.Type
}

func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// GoalBytes is the goal as runner-init takes it (a trailing newline added).
func (c *Case) GoalBytes() []byte {
	b := []byte(c.Goal)
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	return b
}
