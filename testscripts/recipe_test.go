package testscripts

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// Recipes in Markdown. A fenced code block a reader copies (a command, a
// configuration) is marked on the line before its fence with
//
//	<!-- test: NAME -->
//
// where NAME is the testscript that runs it, testscripts/NAME.txtar, or
// NAME:PART when that script runs more than one block. The script takes
// the block's text with `recipe FILE NAME` (FILE relative to the
// checkout), so what it runs is what the reader copies. A block that
// cannot run in a test at all is marked `<!-- not tested: why -->`.
// A block inside a generated section (`<!-- NAME: generated from … -->`
// … `<!-- /NAME -->`) is checked by the test that generates it
// (TestDocsGenerated). TestMarkdownRecipes holds README.md and every
// Markdown file under docs/ to it: every code block, whatever its
// language and indentation (a block in a list item), is marked or
// generated, every mark names a script that runs it, and every `recipe` a
// script runs exists.

// recipe is one marked block of a Markdown file.
type recipe struct {
	name string // the mark's NAME, "" for an unmarked block
	skip string // why a block is not tested, from `<!-- not tested: … -->`
	lang string // the fence's info string
	text string // the block's lines, each ending in a newline, unindented as far as its fence
	line int    // the line of the opening fence, from 1
	gen  bool   // inside a generated section
}

var (
	testMark    = regexp.MustCompile(`^<!-- test: ([a-z0-9-]+(?::[a-z0-9-]+)?) -->$`)
	notTestMark = regexp.MustCompile(`^<!-- not tested: (.+) -->$`)
	fenceOpen   = regexp.MustCompile("^([ \\t]*)(```+|~~~+)\\s*([^`\\s]*)\\s*$")
	genEnd      = regexp.MustCompile(`^<!-- /[a-z-]+ -->$`)
)

// parseRecipes returns every fenced code block of the Markdown file at
// path, with its mark.
func parseRecipes(path string) ([]recipe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out    []recipe
		cur    *recipe
		fence  string
		indent string // the opening fence's indentation
		prev   string // the last line before this one that is not blank
		gen    bool
		n      int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		l := sc.Text()
		if cur != nil {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				out = append(out, *cur)
				cur = nil
			} else {
				cur.text += strings.TrimPrefix(l, indent) + "\n"
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(l); m != nil {
			cur = &recipe{lang: m[3], line: n, gen: gen}
			indent, fence = m[1], m[2]
			if mm := testMark.FindStringSubmatch(prev); mm != nil {
				cur.name = mm[1]
			} else if mm := notTestMark.FindStringSubmatch(prev); mm != nil {
				cur.skip = mm[1]
			}
			continue
		}
		switch t := strings.TrimSpace(l); {
		case generatedOpen.MatchString(t):
			gen = true
		case genEnd.MatchString(t):
			gen = false
		}
		if t := strings.TrimSpace(l); t != "" {
			prev = t
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a code fence that is never closed", path, cur.line)
	}
	return out, sc.Err()
}

// markdownFiles are the Markdown files whose recipes are held to the
// tests: README.md and docs/**/*.md, relative to the checkout.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	root := repoRoot()
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// scriptRecipes finds the `recipe FILE NAME` commands of every
// testscript: "FILE NAME" → the scripts that run it.
func scriptRecipes(t *testing.T) map[string][]string {
	t.Helper()
	scripts, err := filepath.Glob(filepath.Join(repoRoot(), "testscripts", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string][]string{}
	re := regexp.MustCompile(`(?m)^\s*(?:!\s+)?recipe\s+(\S+)\s+(\S+)\s*$`)
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			k := m[1] + " " + m[2]
			used[k] = append(used[k], strings.TrimSuffix(filepath.Base(s), ".txtar"))
		}
	}
	return used
}

func TestMarkdownRecipes(t *testing.T) {
	t.Parallel()
	trackSources(t)
	used := scriptRecipes(t)
	marked := map[string]bool{}
	for _, file := range markdownFiles(t) {
		rs, err := parseRecipes(filepath.Join(repoRoot(), file))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			at := fmt.Sprintf("%s:%d", file, r.line)
			switch {
			case r.name != "":
				k := file + " " + r.name
				if marked[k] {
					t.Errorf("%s: a second block named %s", at, r.name)
				}
				marked[k] = true
				script, _, _ := strings.Cut(r.name, ":")
				if !slices.Contains(used[k], script) {
					t.Errorf("%s: the block %s is not run: testscripts/%s.txtar has no `recipe %s %s`", at, r.name, script, file, r.name)
				}
			case r.skip != "", r.gen:
			default:
				t.Errorf("%s: a %s block has no `<!-- test: NAME -->` (or `<!-- not tested: why -->`) on the line before it, and is in no generated section", at, cmp.Or(r.lang, "plain"))
			}
		}
	}
	for k, scripts := range used {
		if !marked[k] {
			t.Errorf("%s: `recipe %s`: no such marked block", strings.Join(scripts, ", "), k)
		}
	}
	if len(marked) == 0 {
		t.Error("no marked recipe in any Markdown file")
	}
}

// recipeCmd is the testscript command `recipe FILE NAME`: it prints the
// block of the Markdown file FILE (relative to the checkout) marked
// `<!-- test: NAME -->`, as it stands.
func recipeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: recipe FILE NAME")
	}
	rs, err := parseRecipes(filepath.Join(repoRoot(), args[0]))
	if err != nil {
		ts.Fatalf("recipe: %v", err)
	}
	for _, r := range rs {
		if r.name == args[1] {
			fmt.Fprint(ts.Stdout(), r.text)
			return
		}
	}
	ts.Fatalf("recipe: %s has no block marked <!-- test: %s -->", args[0], args[1])
}
