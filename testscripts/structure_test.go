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
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
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

// No command package is a library of another: shared logic lives in lib/
// (the step context among it: lib/stepctx), and lib/command holds
// commands only.
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
