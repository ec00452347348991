package export

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// FileChange is one file a passed leaf's pass changed: a path outside
// .runner/ whose content at the leaf's pass differs from the pass before
// it (the base's for the first), what the leaf's commit carries.
type FileChange struct {
	Path   string
	Status string // "added", "modified", "deleted" or "type changed"
	// Test: the path matches [guard] test_files.
	Test bool
	// NotNamed: the leaf's title, goal and acceptance name files of the
	// repository (Changes.Named) and not this one. Never set for a test
	// file: an execute leaf's witness is a test of its own.
	NotNamed bool
	// By are the run's commits since the pass before that changed the
	// path when none of the leaf's own iterations did: "iteration 3
	// (node root.5)", or "commit <sha12>" for one that is no iteration.
	By []string
}

// Changes is what a passed leaf changed, as the pull-request body tells
// it.
type Changes struct {
	Files []FileChange
	// Own are the paths outside .runner/ that the leaf's own iteration
	// commits changed, each against its parent, sorted: none is a pass
	// with no code change, whatever its commit carries.
	Own []string
	// Named are the words of the leaf's title, goal and acceptance that
	// name files of the repository (a path, a file's name, a directory
	// with its slash), in the order they appear; none: the leaf states no
	// scope in files, so no file is beyond it.
	Named []string
}

// NoCodeChange reports whether the leaf's iterations changed nothing
// outside .runner/.
func (c Changes) NoCodeChange() bool { return len(c.Own) == 0 }

// Tests and Others count c's files that are tests and those that are not.
func (c Changes) Tests() (tests, others int) {
	for _, f := range c.Files {
		if f.Test {
			tests++
		} else {
			others++
		}
	}
	return tests, others
}

// changeInput is what changesOf reads: the plan's steps and history, each
// step's changed paths against the previous step (stepFiles, in the
// steps' order), each commit's changed paths against its first parent,
// the paths of the tip's tree, and the test-file globs.
type changeInput struct {
	steps      []Step
	commits    []Commit
	stepFiles  [][]git.PathChange
	commitDiff map[string][]git.PathChange
	tipFiles   []string
	testGlobs  []string
}

// changesOf is each passed leaf's Changes, by node id.
func changesOf(in changeInput) map[string]Changes {
	index := map[string]int{}
	for i, c := range in.commits {
		index[c.SHA] = i
	}
	known := newFileNames()
	for _, p := range in.tipFiles {
		known.add(p)
	}
	for _, fs := range in.stepFiles {
		for _, f := range fs {
			known.add(f.Path) // a deleted file is named too
		}
	}
	out := map[string]Changes{}
	prev := -1
	for i, s := range in.steps {
		var ch Changes
		own := map[string]bool{}
		for _, c := range in.commits {
			if c.Iter > 0 && c.Node == s.Node.ID {
				for _, f := range outsideRunner(in.commitDiff[c.SHA]) {
					own[f.Path] = true
				}
			}
		}
		for p := range own {
			ch.Own = append(ch.Own, p)
		}
		slices.Sort(ch.Own)
		files := outsideRunner(in.stepFiles[i])
		ch.Named = named(nodeText(s.Node), known)
		at := index[s.Loop.SHA]
		for _, f := range files {
			fc := FileChange{Path: f.Path, Status: statusWord(f.Status), Test: len(evidence.TestFiles([]string{f.Path}, in.testGlobs)) > 0}
			fc.NotNamed = !fc.Test && len(ch.Named) > 0 && !namedIn(ch.Named, f.Path)
			if !own[f.Path] {
				fc.By = changedBy(in.commits[prev+1:at+1], in.commitDiff, f.Path, s.Node.ID)
			}
			ch.Files = append(ch.Files, fc)
		}
		out[s.Node.ID] = ch
		prev = at
	}
	return out
}

// changedBy names the commits of cs, other than node's iterations, that
// changed path p.
func changedBy(cs []Commit, diff map[string][]git.PathChange, p, node string) []string {
	var by []string
	for _, c := range cs {
		if c.Iter > 0 && c.Node == node {
			continue
		}
		if !slices.ContainsFunc(diff[c.SHA], func(f git.PathChange) bool { return f.Path == p }) {
			continue
		}
		if c.Iter > 0 {
			by = append(by, fmt.Sprintf("iteration %d (node %s)", c.Iter, c.Node))
		} else {
			by = append(by, "commit "+short(c.SHA))
		}
	}
	return by
}

// outsideRunner is the changes of cs outside .runner/.
func outsideRunner(cs []git.PathChange) []git.PathChange {
	var out []git.PathChange
	for _, c := range cs {
		if c.Path != layout.Runner && !strings.HasPrefix(c.Path, layout.Runner+"/") {
			out = append(out, c)
		}
	}
	return out
}

// statusWord is a --name-status letter in words.
func statusWord(s string) string {
	switch s {
	case "A":
		return "added"
	case "D":
		return "deleted"
	case "T":
		return "type changed"
	}
	return "modified"
}

// nodeText is what a node states of its work: its title, goal and
// acceptance.
func nodeText(n *tree.Node) string {
	return strings.Join(append([]string{n.Title, n.Goal}, n.Acceptance...), "\n")
}

// pathWord is a word that may name a file: path characters, trailing
// punctuation left out.
var pathWord = regexp.MustCompile(`[A-Za-z0-9_./@+-]*[A-Za-z0-9_/]`)

// codeSpan is a word in backticks, as Markdown quotes a name.
var codeSpan = regexp.MustCompile("`([^`\\s]+)`")

// named is the words of text that name a file of known (a path, or a
// file's name, or a directory: a word with a slash that a path starts
// with), each once, in text's order: a word with a dot or a slash, or any
// word in backticks (`justfile`).
func named(text string, known fileNames) []string {
	var out []string
	add := func(w string) {
		w = strings.TrimPrefix(w, "./")
		if w != "" && !slices.Contains(out, w) && known.has(w) {
			out = append(out, w)
		}
	}
	for _, w := range pathWord.FindAllString(text, -1) {
		if strings.ContainsAny(w, "./") {
			add(w)
		}
	}
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	return out
}

// fileNames indexes paths by what names them (nameMatches): the paths,
// their ends from each slash on, and their directories with theirs.
type fileNames struct{ ends, dirs map[string]bool }

func newFileNames() fileNames {
	return fileNames{ends: map[string]bool{}, dirs: map[string]bool{}}
}

// add indexes path p.
func (f fileNames) add(p string) {
	f.ends[p] = true
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		f.ends[p[i+1:]] = true
		dir := p[:i+1]
		f.dirs[dir] = true
		for j := 0; j < len(dir)-1; j++ {
			if dir[j] == '/' {
				f.dirs[dir[j+1:]] = true
			}
		}
	}
}

// has reports whether word w names an indexed path (nameMatches).
func (f fileNames) has(w string) bool {
	if f.ends[w] {
		return true
	}
	return strings.Contains(w, "/") && f.dirs[strings.TrimSuffix(w, "/")+"/"]
}

// namedIn reports whether one of the words names path p.
func namedIn(words []string, p string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return nameMatches(w, p) })
}

// nameMatches reports whether word w names path p: p itself, p's file
// name, the end of p from a slash on, or a directory p lies in (w with a
// slash).
func nameMatches(w, p string) bool {
	switch {
	case w == p, w == path.Base(p), strings.HasSuffix(p, "/"+w):
		return true
	case strings.Contains(w, "/"):
		dir := strings.TrimSuffix(w, "/") + "/"
		return strings.HasPrefix(p, dir) || strings.Contains(p, "/"+dir)
	}
	return false
}
