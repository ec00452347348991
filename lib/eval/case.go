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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/treeloop/treeloop/lib/config"
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
// cases and every problem of every file (unknown keys, wrong types, missing
// or inapplicable keys, bad regexes, bad config overrides, duplicate ids);
// callers run nothing unless problems is empty.
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

// ParseCase decodes one case file. file is its absolute path (paths in the
// case resolve against its directory). It returns nil and the problems when
// the file cannot be used.
func ParseCase(file string, data []byte) (*Case, Problems) {
	r, root, ok := newReader(file, data)
	if !ok {
		return nil, r.probs
	}
	dir := filepath.Dir(file)
	c := &Case{File: file, RootNext: "decompose", TimeoutSecs: DefaultTimeoutSecs, Config: map[string]any{}, Backends: map[string]Backend{}}
	if ct := root.table("case", true); ct != nil {
		ct.caseTable(c, file, dir)
	}
	if cfg := root.table("config", false); cfg != nil {
		c.Config = cfg.m
		r.checkConfig(cfg)
	}
	if bt := root.table("backends", false); bt != nil {
		for _, name := range bt.keys() {
			t := bt.table(name, true)
			if t == nil {
				continue
			}
			c.Backends[name] = t.backend(name, dir)
		}
	}
	c.Checks = root.checks()
	if len(c.Checks) == 0 {
		r.problem("", "a case needs at least one [[checks]] entry")
	}
	root.finish()
	if len(r.probs) > 0 {
		sort.SliceStable(r.probs, func(i, j int) bool {
			a, b := r.probs[i], r.probs[j]
			return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
		})
		return nil, r.probs
	}
	return c, nil
}

// caseTable reads [case] of the case file (its directory dir) into c.
func (t *table) caseTable(c *Case, file, dir string) {
	c.ID = t.str("id", true)
	if c.ID != "" && !tree.ValidID(c.ID) {
		t.bad("id", "id %q must match %s (it becomes a directory name)", c.ID, tree.IDPattern)
	} else if base := strings.TrimSuffix(filepath.Base(file), ".toml"); c.ID != "" && c.ID != base {
		t.bad("id", "id %q differs from the file name: name the file %s.toml or the case %q", c.ID, c.ID, base)
	}
	c.Description = t.str("description", false)
	t.goal(c, dir)
	if fx := t.str("fixture", false); fx != "" {
		c.Fixture = filepath.Join(dir, fx)
		if st, err := os.Stat(c.Fixture); err != nil || !st.IsDir() {
			t.bad("fixture", "fixture %q is not a directory next to the case file", fx)
		}
	}
	if n := t.str("root_next", false); n != "" {
		if n != "decompose" && n != "execute" {
			t.bad("root_next", "root_next must be \"decompose\" or \"execute\", got %q", n)
		}
		c.RootNext = n
	}
	if n, ok := t.int("timeout_secs"); ok {
		if n < 1 {
			t.bad("timeout_secs", "timeout_secs must be at least 1, got %d", n)
		}
		c.TimeoutSecs = n
	}
	if e := t.str("expect", false); e != "" {
		if !slices.Contains(Outcomes, e) {
			t.bad("expect", "expect must be one of %s, got %q", strings.Join(Outcomes, ", "), e)
		}
		c.Expect = e
	}
	t.finish()
}

// goal reads [case]'s goal or goal_file (relative to dir) into c.Goal.
func (t *table) goal(c *Case, dir string) {
	goal, goalFile := t.str("goal", false), t.str("goal_file", false)
	switch {
	case goal != "" && goalFile != "":
		t.bad("goal_file", "give goal or goal_file, not both")
	case goalFile != "":
		b, err := os.ReadFile(filepath.Join(dir, goalFile))
		if err != nil {
			t.bad("goal_file", "goal_file: %v", cause(err))
		}
		c.Goal = string(b)
	case goal != "":
		c.Goal = goal
	default:
		t.missing("goal", "needs goal (text) or goal_file (a GOAL.md)")
	}
	if c.Goal != "" && !strings.HasPrefix(strings.TrimLeft(c.Goal, "\n"), "# ") {
		// runner-init takes the first "# " heading as the root's title.
		key := "goal"
		if goalFile != "" {
			key = "goal_file"
		}
		t.bad(key, "the goal must start with a \"# \" heading (the root node's title)")
	}
}

// checks reads the document's [[checks]] array.
func (t *table) checks() []Check {
	arr, ok := t.m["checks"]
	if !ok {
		return nil
	}
	t.used["checks"] = true
	list, isList := arr.([]any)
	if !isList {
		t.bad("checks", "checks must be an array of tables ([[checks]])")
	}
	var out []Check
	for i, e := range list {
		m, isMap := e.(map[string]any)
		path := "checks." + strconv.Itoa(i)
		if !isMap {
			t.r.problem(path, "checks[%d] must be a table", i)
			continue
		}
		t := &table{r: t.r, path: path, m: m, used: map[string]bool{}}
		out = append(out, t.check(i))
	}
	return out
}

// BackendsFile reads eval/backends.toml: one [NAME] table per backend, keys
// as in a case's [backends.NAME].
func BackendsFile(file string) (map[string]Backend, Problems, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Backend{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	r, root, ok := newReader(file, data)
	if !ok {
		return nil, r.probs, nil
	}
	out := map[string]Backend{}
	for _, name := range root.keys() {
		if t := root.table(name, true); t != nil {
			out[name] = t.backend(name, filepath.Dir(file))
		}
	}
	return out, r.probs, nil
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

// reader decodes a TOML document by hand so that every problem is found,
// each at its key's line and column.
type reader struct {
	file  string
	pos   map[string][2]int // dotted path ("checks.2.type") → line, col
	probs Problems
}

func newReader(file string, data []byte) (*reader, *table, bool) {
	r := &reader{file: file, pos: indexPositions(data)}
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			r.probs = append(r.probs, Problem{File: file, Line: line, Col: col, Msg: strings.TrimPrefix(de.Error(), "toml: ")})
		} else {
			r.probs = append(r.probs, Problem{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")})
		}
		return r, nil, false
	}
	return r, &table{r: r, m: m, used: map[string]bool{}}, true
}

// problem records a problem at path's position (or the nearest enclosing
// table's).
func (r *reader) problem(path, format string, args ...any) {
	p := Problem{File: r.file, Msg: fmt.Sprintf(format, args...)}
	for q := path; ; {
		if lc, ok := r.pos[q]; ok {
			p.Line, p.Col = lc[0], lc[1]
			break
		}
		i := strings.LastIndexByte(q, '.')
		if i < 0 {
			break
		}
		q = q[:i]
	}
	r.probs = append(r.probs, p)
}

// checkConfig validates [config] as a config.toml would be: unknown keys,
// wrong types and bad values, each at its line in the case file.
func (r *reader) checkConfig(t *table) {
	data, err := toml.Marshal(t.m)
	if err != nil {
		r.problem(t.path, "[config]: %v", err)
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
		r.problem(t.path, "[config]: %v", err)
		return
	}
	for _, e := range list {
		key := e.Key
		if i := strings.IndexByte(key, '['); i >= 0 {
			key = key[:i]
		}
		r.problem("config."+key, "[config] %s", e.Msg)
	}
}

// table is one TOML table being read; used marks the keys consumed.
type table struct {
	r    *reader
	path string
	m    map[string]any
	used map[string]bool
}

func (t *table) keyPath(key string) string {
	if t.path == "" {
		return key
	}
	return t.path + "." + key
}

func (t *table) bad(key, format string, args ...any) {
	t.r.problem(t.keyPath(key), format, args...)
}

func (t *table) missing(key, format string, args ...any) {
	name := t.path
	if name == "" {
		name = "the file"
	} else if strings.HasPrefix(name, "checks.") {
		name = "checks[" + strings.TrimPrefix(name, "checks.") + "]"
	} else {
		name = "[" + name + "]"
	}
	t.r.problem(t.path, "%s: missing %s: %s", name, key, fmt.Sprintf(format, args...))
}

func (t *table) keys() []string {
	ks := make([]string, 0, len(t.m))
	for k := range t.m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// finish reports every key nobody consumed.
func (t *table) finish() {
	for _, k := range t.keys() {
		if !t.used[k] {
			t.bad(k, "unknown key %q", t.keyPath(k))
		}
	}
}

func (t *table) table(key string, required bool) *table {
	v, ok := t.m[key]
	t.used[key] = true
	if !ok {
		if required {
			t.missing("["+t.keyPath(key)+"]", "add the table")
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.bad(key, "%s must be a table, got %s", t.keyPath(key), tomlType(v))
		return nil
	}
	return &table{r: t.r, path: t.keyPath(key), m: m, used: map[string]bool{}}
}

func (t *table) str(key string, required bool) string {
	v, ok := t.m[key]
	t.used[key] = true
	if !ok {
		if required {
			t.missing(key, "add %s = \"…\"", key)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		t.bad(key, "%s must be a string, got %s", key, tomlType(v))
		return ""
	}
	if s == "" && required {
		t.bad(key, "%s must not be empty", key)
	}
	return s
}

func (t *table) strs(key string) ([]string, bool) {
	v, ok := t.m[key]
	t.used[key] = true
	if !ok {
		return nil, false
	}
	list, isList := v.([]any)
	if !isList {
		t.bad(key, "%s must be an array of strings, got %s", key, tomlType(v))
		return nil, true
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, isStr := e.(string)
		if !isStr {
			t.bad(key, "%s[%d] must be a string, got %s", key, i, tomlType(e))
			continue
		}
		out = append(out, s)
	}
	return out, true
}

func (t *table) int(key string) (int, bool) {
	v, ok := t.m[key]
	t.used[key] = true
	if !ok {
		return 0, false
	}
	n, isInt := v.(int64)
	if !isInt {
		t.bad(key, "%s must be an integer, got %s", key, tomlType(v))
		return 0, false
	}
	return int(n), true
}

func (t *table) boolean(key string) *bool {
	v, ok := t.m[key]
	t.used[key] = true
	if !ok {
		return nil
	}
	b, isBool := v.(bool)
	if !isBool {
		t.bad(key, "%s must be true or false, got %s", key, tomlType(v))
		return nil
	}
	return &b
}

// backend reads a backend table; dir resolves a relative bin with a slash.
func (t *table) backend(name, dir string) Backend {
	b := Backend{Name: name, ExtraArgs: []string{}}
	if !tree.ValidID(name) {
		t.r.problem(t.path, "backend name %q must match %s", name, tree.IDPattern)
	}
	b.Backend = t.str("backend", true)
	if b.Backend != "" && !slices.Contains(config.Backends, b.Backend) {
		t.bad("backend", "backend must be one of %s, got %q", strings.Join(config.Backends, ", "), b.Backend)
	}
	b.Bin = t.str("bin", false)
	if strings.ContainsRune(b.Bin, '/') && !filepath.IsAbs(b.Bin) {
		b.Bin = filepath.Join(dir, b.Bin)
	}
	b.Model = t.str("model", false)
	b.DecomposeModel = t.str("decompose_model", false)
	b.ExecuteModel = t.str("execute_model", false)
	b.LastAttemptModel = t.str("last_attempt_model", false)
	if a, ok := t.strs("extra_args"); ok {
		b.ExtraArgs = a
	}
	if e, ok := t.strs("env"); ok {
		for _, kv := range e {
			if k, _, found := strings.Cut(kv, "="); !found || k == "" {
				t.bad("env", "env entries are KEY=VALUE, got %q", kv)
			}
		}
		b.Env = e
	}
	t.finish()
	return b
}

// check reads checks[i].
func (t *table) check(i int) Check {
	var c Check
	c.Type = t.str("type", true)
	c.Name = t.str("name", false)
	if !t.checkKeys(c.Type) {
		return c
	}
	need := func(key string) string { return t.str(key, true) }
	switch c.Type {
	case FileExists:
		c.Path = need("path")
	case FileContains:
		c.Path = need("path")
		c.Pattern = need("pattern")
		if c.Pattern != "" {
			if _, err := regexp.Compile(c.Pattern); err != nil {
				t.bad("pattern", "pattern: %v", err)
			} else {
				c.re = regexp.MustCompile("(?m)" + c.Pattern)
			}
		}
	case CommandSucceeds:
		t.commandCheck(&c)
	case JSONPath:
		c.Path = need("path")
		c.Query = need("query")
		c.Equals, c.HasEquals = t.m["equals"]
		t.used["equals"] = true
		c.Exists = t.boolean("exists")
		if c.HasEquals == (c.Exists != nil) {
			t.r.problem(t.path, "checks[%d]: a json_path check takes either equals or exists", i)
		}
	case TreePassedCount, TreeMaxDepth:
		t.boundsCheck(&c, i)
	}
	if c.Path != "" && (filepath.IsAbs(c.Path) || strings.HasPrefix(filepath.Clean(c.Path), "..")) {
		t.bad("path", "path %q must be relative to the workspace and stay inside it", c.Path)
	}
	if c.Name == "" {
		c.Name = defaultName(c)
	}
	t.finish()
	return c
}

// checkKeys reports whether typ is a known check type, and refuses the
// keys a check of that type does not take (all keys are consumed when
// the type is unknown: its problem is the type's).
func (t *table) checkKeys(typ string) bool {
	allowed, known := checkKeys[typ]
	if typ != "" && !known {
		t.bad("type", "unknown check type %q (want one of %s)", typ, strings.Join(CheckTypes, ", "))
	}
	for _, k := range t.keys() {
		if k == "type" || k == "name" {
			continue
		}
		if known && !slices.Contains(allowed, k) {
			t.used[k] = true
			if len(allowed) == 0 {
				t.bad(k, "a %s check takes no %q", typ, k)
			} else {
				t.bad(k, "a %s check takes no %q (it takes %s)", typ, k, strings.Join(allowed, ", "))
			}
		}
	}
	if !known {
		for _, k := range t.keys() {
			t.used[k] = true
		}
	}
	return known
}

// commandCheck reads a command_succeeds check's cmd and timeout_secs.
func (t *table) commandCheck(c *Check) {
	cmd, ok := t.strs("cmd")
	switch {
	case !ok:
		t.missing("cmd", "add cmd = [\"program\", \"arg\", …]")
	case cmd == nil: // not an array: already reported
	case len(cmd) == 0 || cmd[0] == "":
		t.bad("cmd", "cmd must be a non-empty argv")
	}
	c.Cmd = cmd
	c.TimeoutSecs = DefaultCheckTimeoutSecs
	if n, ok := t.int("timeout_secs"); ok {
		if n < 1 {
			t.bad("timeout_secs", "timeout_secs must be at least 1, got %d", n)
		}
		c.TimeoutSecs = n
	}
}

// boundsCheck reads the min and max of checks[i], a tree count check.
func (t *table) boundsCheck(c *Check, i int) {
	for _, k := range []string{"min", "max"} {
		if n, ok := t.int(k); ok {
			if n < 0 {
				t.bad(k, "%s must be 0 or more, got %d", k, n)
			}
			if k == "min" {
				c.Min = &n
			} else {
				c.Max = &n
			}
		}
	}
	switch {
	case c.Min == nil && c.Max == nil:
		t.r.problem(t.path, "checks[%d]: a %s check needs min, max or both", i, c.Type)
	case c.Min != nil && c.Max != nil && *c.Min > *c.Max:
		t.bad("min", "min %d is more than max %d", *c.Min, *c.Max)
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

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// indexPositions maps the dotted path of every table header and key of a
// document to its line and column; array tables are numbered
// ("checks.0.type").
func indexPositions(data []byte) map[string][2]int {
	pos := map[string][2]int{}
	var p unstable.Parser
	p.Reset(data)
	counts := map[string]int{}
	var table string
	keyOf := func(n *unstable.Node) (string, [2]int) {
		var parts []string
		var lc [2]int
		it := n.Key()
		for it.Next() {
			k := it.Node()
			if lc[0] == 0 {
				s := p.Shape(k.Raw).Start
				lc = [2]int{s.Line, s.Column}
			}
			parts = append(parts, string(k.Data))
		}
		return strings.Join(parts, "."), lc
	}
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + "." + b
	}
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table:
			k, lc := keyOf(n)
			table = k
			pos[table] = lc
		case unstable.ArrayTable:
			k, lc := keyOf(n)
			table = k + "." + strconv.Itoa(counts[k])
			counts[k]++
			pos[table] = lc
		case unstable.KeyValue:
			k, lc := keyOf(n)
			if _, ok := pos[join(table, k)]; !ok {
				pos[join(table, k)] = lc
			}
		}
	}
	return pos
}

// GoalBytes is the goal as runner-init takes it (a trailing newline added).
func (c *Case) GoalBytes() []byte {
	b := []byte(c.Goal)
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	return b
}
