package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/posener/complete"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// completionRoot is the directory a command being completed would run in:
// the -C or --chdir value on the whole line (COMP_LINE: a subcommand's
// Args start after it), else TREELOOP_DIR, else ".".
func completionRoot(complete.Args) string {
	dir := os.Getenv("TREELOOP_DIR")
	line := os.Getenv("COMP_LINE")
	words := strings.Fields(line)
	if len(words) > 0 && !strings.HasSuffix(line, " ") {
		words = words[:len(words)-1] // the word being typed
	}
	for i, w := range words {
		switch {
		case (w == "-C" || w == "--chdir") && i+1 < len(words):
			dir = words[i+1]
		case strings.HasPrefix(w, "--chdir="):
			dir = strings.TrimPrefix(w, "--chdir=")
		}
	}
	if dir == "" {
		dir = "."
	}
	return dir
}

// predictNodes offers the ids of the task tree's nodes (tree-edit retry
// <TAB>, --selected <TAB>).
var predictNodes = complete.PredictFunc(func(a complete.Args) []string {
	data, err := fsutil.ReadFile(filepath.Join(completionRoot(a), filepath.FromSlash(layout.Tree)), "", 0)
	if err != nil {
		return nil
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		return nil
	}
	var ids []string
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		ids = append(ids, n.ID)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	return ids
})

// predictRuns offers the run ids the repository knows: the current run,
// those with iteration logs or run records here, and those of the run
// worktrees (--run <TAB>).
var predictRuns = complete.PredictFunc(func(a complete.Args) []string {
	root := completionRoot(a)
	seen := map[string]bool{}
	add := func(id string) {
		if tree.ValidID(id) {
			seen[id] = true
		}
	}
	var rs struct {
		RunID *string `json:"run_id"`
	}
	if data, err := fsutil.ReadFile(filepath.Join(root, filepath.FromSlash(layout.RunState)), "", 1<<20); err == nil && json.Unmarshal(data, &rs) == nil && rs.RunID != nil {
		add(*rs.RunID)
	}
	if ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(layout.Iterations))); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				add(e.Name())
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(layout.Runs))); err == nil {
		for _, e := range ents {
			if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
				if base, _, found := strings.Cut(id, "."); found && isDigits(id[len(base)+1:]) {
					id = base // <run-id>.2, a later record of the run
				}
				add(id)
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(layout.Worktrees))); err == nil {
		for _, e := range ents {
			add(e.Name())
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
})

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
