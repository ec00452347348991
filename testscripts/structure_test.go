package testscripts

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/fzipp/gocyclo"

	"github.com/treeloop/treeloop/lib/agent"
)

// The limits a reader can hold: no function (declared or literal) longer
// than maxFuncLines lines, none with a cyclomatic complexity above
// maxComplexity (gocyclo's count).
const (
	maxFuncLines  = 100
	maxComplexity = 30
)

// structureDebt lists the functions that break a limit today, by
// "path func" (gocyclo's name for the complexity, the declared name for the
// length). It only shrinks: a new violation fails, and so does an entry that
// no longer breaks its limit, so that it is taken off the list.
var structureDebt = map[string]bool{}

// goFiles calls f for every Go file of the module (testdata excluded), with
// its path relative to the module's root.
func goFiles(t *testing.T, f func(rel string, file *ast.File, fset *token.FileSet)) {
	t.Helper()
	root := repoRoot()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f(filepath.ToSlash(rel), file, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// funcName is gocyclo's name of a declared function: "(*T).M", "(T).M" or
// "F".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	var b strings.Builder
	typ := fd.Recv.List[0].Type
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	b.WriteString("(")
	if star, ok := typ.(*ast.StarExpr); ok {
		b.WriteString("*")
		typ = star.X
		if idx, ok := typ.(*ast.IndexExpr); ok {
			typ = idx.X
		}
	}
	if id, ok := typ.(*ast.Ident); ok {
		b.WriteString(id.Name)
	}
	b.WriteString(").")
	b.WriteString(fd.Name.Name)
	return b.String()
}

// Every function is short and simple enough to hold in one's head, but for
// the listed debt.
func TestFunctionSize(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var broken []string
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
		ast.Inspect(file, func(n ast.Node) bool {
			var name string
			switch x := n.(type) {
			case *ast.FuncDecl:
				if x.Body == nil {
					return false
				}
				name = funcName(x)
			case *ast.FuncLit:
				name = "func literal at line " + strconv.Itoa(fset.Position(x.Pos()).Line)
			default:
				return true
			}
			if l := lines(n); l > maxFuncLines {
				key := rel + " " + name
				seen[key] = true
				if !structureDebt[key] {
					broken = append(broken, key+": "+strconv.Itoa(l)+" lines (at most "+strconv.Itoa(maxFuncLines)+")")
				}
			}
			return true
		})
		for _, s := range gocyclo.AnalyzeASTFile(file, fset, nil) {
			if s.Complexity > maxComplexity {
				key := rel + " " + s.FuncName
				seen[key] = true
				if !structureDebt[key] {
					broken = append(broken, key+": cyclomatic complexity "+strconv.Itoa(s.Complexity)+" (at most "+strconv.Itoa(maxComplexity)+")")
				}
			}
		}
	})
	for key := range structureDebt {
		if !seen[key] {
			broken = append(broken, key+": within the limits now: take it off structureDebt")
		}
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Error(b)
	}
}

// commandImportDebt lists the imports of one command package by another
// that exist today ("importer imported"); the list only shrinks.
var commandImportDebt = map[string]bool{}

// stepComposes is what runner-step's Go halves may import of lib/command:
// the plumbing commands they run in process, each through its typed core
// (docs/development.md, "The step").
var stepComposes = map[string][]string{
	"lib/command/stepbegin": {"lib/command/contextwrite", "lib/command/iterlog", "lib/command/loopcommit", "lib/command/treeselect", "lib/command/treeupdate", "lib/command/treevalidate"},
	"lib/command/stepend":   {"lib/command/iterlog", "lib/command/loopcommit", "lib/command/treeupdate"},
}

// No command package is a library of another: shared logic lives in lib/
// (the step context among it: lib/stepctx), and lib/command holds
// commands only. The one composition is the step's: step-begin and
// step-end call the cores of the plumbing commands they compose
// (stepComposes), in process instead of as processes, and those import
// no command package.
func TestCommandPackagesStandAlone(t *testing.T) {
	t.Parallel()
	const mod = "github.com/treeloop/treeloop/"
	seen := map[string]bool{}
	var broken []string
	goFiles(t, func(rel string, file *ast.File, _ *token.FileSet) {
		if !strings.HasPrefix(rel, "lib/command/") {
			return
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dep := strings.TrimPrefix(path, mod)
			if dep == path || !strings.HasPrefix(dep, "lib/command/") || dep == pkg {
				continue
			}
			key := pkg + " " + dep
			seen[key] = true
			if slices.Contains(stepComposes[pkg], dep) {
				continue
			}
			if !commandImportDebt[key] {
				broken = append(broken, rel+" imports "+dep+": move what both need into lib/")
			}
		}
	})
	for key := range commandImportDebt {
		if !seen[key] {
			broken = append(broken, key+": gone now: take it off commandImportDebt")
		}
	}
	sort.Strings(broken)
	for _, b := range broken {
		t.Error(b)
	}
}

// Every command package tests its own decisions.
func TestCommandPackagesHaveTests(t *testing.T) {
	t.Parallel()
	debt := map[string]bool{}
	dirs, err := os.ReadDir(filepath.Join(repoRoot(), "lib", "command"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		tests, _ := filepath.Glob(filepath.Join(repoRoot(), "lib", "command", d.Name(), "*_test.go"))
		switch {
		case len(tests) == 0 && !debt[d.Name()]:
			t.Errorf("lib/command/%s has no test file: test its own decisions there", d.Name())
		case len(tests) > 0 && debt[d.Name()]:
			t.Errorf("lib/command/%s has tests now: take it off the debt list", d.Name())
		}
	}
}

// timing is a figure of time in a comment: "9 ms", "15 µs", "0.1 to 0.4
// ms" (its last number). The contract's own figures pass: a default or a
// bound ("default 100 ms", "at most 10 ms") and code in backquotes (a
// format's example, `850ms`).
var (
	timing        = regexp.MustCompile(`\b[0-9][0-9.,]* ?(ms|µs|us|ns)\b`)
	timingAllowed = regexp.MustCompile("(default|at most) [0-9][0-9.,]* ?(ms|µs|us|ns)\\b|`[^`]*`")
	issueNumber   = regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`)
)

// lib/'s comments give the contract, not measurements (docs/development.md:
// the figures are in bench/, such as bench/fastpaths.md), and no issue
// numbers: a timing or an issue cited in a comment of a Go file under lib/
// fails, generated files and tests excepted.
func TestCommentsQuoteNoMeasurements(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "lib"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == "testdata" {
			if err == nil {
				err = filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(file) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		for _, group := range file.Comments {
			for _, c := range group.List {
				for i, line := range strings.Split(c.Text, "\n") {
					at := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(c.Slash).Line+i)
					if m := timing.FindString(timingAllowed.ReplaceAllString(line, "")); m != "" {
						t.Errorf("%s: the comment quotes a timing (%q): move the figure to bench/fastpaths.md and keep the contract", at, m)
					}
					if m := issueNumber.FindString(line); m != "" {
						t.Errorf("%s: the comment cites %q: say what the code does, not which issue asked for it", at, m)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// jsonEncoders are the files that may encode JSON with encoding/json
// directly; every other file writes JSON through lib/jsondoc, so that
// every JSON file and --json output is indented and escaped alike (the
// task tree's canonical encoder is held to it by its own tests).
var jsonEncoders = map[string]string{
	"lib/jsondoc/jsondoc.go": "the one writer",
	// The scripted model server speaks the model APIs' wire protocols to
	// the agent CLIs under test: neither a file nor --json.
	"testscripts/modelserver/modelserver.go": "a model API's wire",
}

// No JSON is encoded outside lib/jsondoc (tests and jsonEncoders aside):
// no json.Marshal, json.MarshalIndent or json.NewEncoder elsewhere.
func TestOneJSONWriter(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		name := ""
		for _, imp := range file.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "encoding/json" {
				name = "json"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != name {
				return true
			}
			switch sel.Sel.Name {
			case "Marshal", "MarshalIndent", "NewEncoder", "Encoder":
				seen[rel] = true
				if _, ok := jsonEncoders[rel]; !ok {
					t.Errorf("%s:%d: json.%s: write JSON with lib/jsondoc (Marshal for documents, Compact for one line)", rel, fset.Position(sel.Pos()).Line, sel.Sel.Name)
				}
			}
			return true
		})
	})
	for rel := range jsonEncoders {
		if !seen[rel] {
			t.Errorf("%s encodes no JSON now: take it off jsonEncoders", rel)
		}
	}
}

// stepProcesses are the treeloop commands runner-step's Go halves still
// start as processes, each on a path a step rarely takes and each for a
// reason docs/development.md gives ("The step"): agent-exec --restore,
// tree-edit apply-answers and runner-record update. Their output is shown
// or logged, never read for a value.
var stepProcesses = []string{"agent-exec", "tree-edit", "runner-record"}

// The step hands typed values on, not text: in step-begin, step-end and
// lib/plumbing no treeloop command but stepProcesses is started
// (plumbing.Held, exec.Command, or an argv's first word), and nothing splits words
// (Fields) out of what a command printed.
func TestStepParsesNoOutput(t *testing.T) {
	t.Parallel()
	cmds, err := os.ReadDir(filepath.Join(repoRoot(), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	isCommand := func(lit string) (string, bool) {
		name, _, _ := strings.Cut(lit, " ")
		for _, c := range cmds {
			if c.Name() == name {
				return name, true
			}
		}
		return "", false
	}
	var broken []string
	goFiles(t, func(rel string, file *ast.File, fset *token.FileSet) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if strings.HasSuffix(rel, "_test.go") || (dir != "lib/command/stepbegin" && dir != "lib/command/stepend" && dir != "lib/plumbing") {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			var argv []ast.Expr // what may start a process: Held's arguments, a []string's first element
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					switch sel.Sel.Name {
					case "Held", "Start", "start", "Command", "CommandContext":
						argv = n.Args
					case "Fields":
						broken = append(broken, fmt.Sprintf("%s: Fields splits a command's words: hand a typed value on instead", fset.Position(n.Pos())))
					}
				}
			case *ast.CompositeLit:
				if arr, ok := n.Type.(*ast.ArrayType); ok && len(n.Elts) > 0 {
					if id, ok := arr.Elt.(*ast.Ident); ok && id.Name == "string" {
						argv = n.Elts[:1]
					}
				}
			}
			for _, a := range argv {
				lit, ok := a.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				if name, ok := isCommand(s); ok && !slices.Contains(stepProcesses, name) {
					broken = append(broken, fmt.Sprintf("%s: the step runs %s as a process: call its core in process (cli.Call, plumbing.Go)", fset.Position(lit.Pos()), s))
				}
			}
			return true
		})
	})
	for _, b := range broken {
		t.Error(b)
	}
}

// Each backend is one file. lib/agent/<name>.go declares the backend's row
// of agent.Specs (<name>Spec), everything named for the backend (its name,
// or its name and then a capital or a digit, case aside: Codex,
// codexEvents, CodexMessageFile, openCodePermission; a method goes with
// its type) and every function, variable or constant the row names (the
// live view's summary, the settings probes and files, the endpoint);
// backends.go lists the rows in agent.Names' order, and no other file of
// lib/agent uses what a backend's file declares.
func TestOneFilePerBackend(t *testing.T) {
	t.Parallel()
	files, decls := agentDecls(t)
	backends := agent.Names(false)
	owner := func(name string) string {
		for _, b := range backends {
			if rest, ok := strings.CutPrefix(strings.ToLower(name), b); ok && (rest == "" || !unicode.IsLower(rune(name[len(b)]))) {
				return b
			}
		}
		return ""
	}
	for _, d := range decls {
		if b := owner(d.owner); b != "" && d.file != b+".go" {
			t.Errorf("lib/agent/%s declares %s: move it to %s.go", d.file, d.name, b)
		}
	}
	byName := map[string]agentDecl{}
	for _, d := range decls {
		if d.kind != "method" {
			byName[d.name] = d
		}
	}
	var rows []string
	for _, b := range backends {
		rows = append(rows, b+"Spec")
		row, ok := byName[b+"Spec"]
		if !ok {
			t.Errorf("no %sSpec: declare the %s backend's row of Specs in lib/agent/%s.go", b, b, b)
			continue
		}
		for _, id := range usedIdents(row.node) {
			if d, ok := byName[id]; ok && d.kind != "type" && d.file != b+".go" {
				t.Errorf("%sSpec names %s of lib/agent/%s: declare it in %s.go", b, id, d.file, b)
			}
		}
	}
	if got := specsRows(files["backends.go"]); !slices.Equal(got, rows) {
		t.Errorf("backends.go lists Specs %q, want %q", got, rows)
	}
	for name, file := range files {
		for _, id := range usedIdents(file) {
			if d, ok := byName[id]; ok && owner(d.file[:len(d.file)-3]) != "" && d.file != name && !(name == "backends.go" && id == d.file[:len(d.file)-3]+"Spec") {
				t.Errorf("lib/agent/%s uses %s of %s: a backend's own code stays in its file, reached through its row of Specs", name, id, d.file)
			}
		}
	}
}

// agentDecl is one top-level declaration of lib/agent: its name, the name
// that says whose it is (a method's type's), its kind and file.
type agentDecl struct {
	name, owner, kind, file string
	node                    ast.Node
}

// agentDecls parses lib/agent's files (tests aside) and lists their
// declarations.
func agentDecls(t *testing.T) (map[string]*ast.File, []agentDecl) {
	t.Helper()
	dir := filepath.Join(repoRoot(), "lib", "agent")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	var decls []agentDecl
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = file
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					decls = append(decls, agentDecl{d.Name.Name, d.Name.Name, "func", name, d})
					continue
				}
				recv := strings.TrimPrefix(funcName(d), "(")
				recv = strings.TrimPrefix(recv[:strings.Index(recv, ")")], "*")
				decls = append(decls, agentDecl{recv + "." + d.Name.Name, recv, "method", name, d})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						decls = append(decls, agentDecl{s.Name.Name, s.Name.Name, "type", name, s})
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name != "_" {
								decls = append(decls, agentDecl{n.Name, n.Name, d.Tok.String(), name, s})
							}
						}
					}
				}
			}
		}
	}
	return files, decls
}

// usedIdents are the identifiers n uses, not counting selected fields and
// methods, composite literals' keys, and the names n declares.
func usedIdents(n ast.Node) []string {
	skip := map[*ast.Ident]bool{}
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			skip[x.Sel] = true
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.FuncDecl:
			skip[x.Name] = true
		case *ast.TypeSpec:
			skip[x.Name] = true
		case *ast.ValueSpec:
			for _, id := range x.Names {
				skip[id] = true
			}
		case *ast.Ident:
			if !skip[x] {
				out = append(out, x.Name)
			}
		}
		return true
	})
	return out
}

// specsRows are the names backends.go lists in Specs.
func specsRows(file *ast.File) []string {
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "Specs" || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.CompositeLit); ok {
			for _, e := range lit.Elts {
				if id, ok := e.(*ast.Ident); ok {
					out = append(out, id.Name)
				} else {
					out = append(out, "(not a name)")
				}
			}
		}
		return false
	})
	return out
}
