package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
)

// entryPoint is a Go test file's code that runs around every test of its
// package: a TestMain decides the test binary's exit status, an init runs
// before any test.
var entryPoint = regexp.MustCompile(`(?m)^func (TestMain|init)\(`)

// EntryPoints names the TestMain and init functions that the work tree's
// Go test files have and base's do not (new files, or more of them in a
// changed one), one note each, for the iteration's log: they are a way
// to make a failing test's package exit 0, which the ratchet by names
// catches only through the guard's output.
func EntryPoints(repo *git.Repo, base string) ([]string, error) {
	changed, err := repo.ChangedPathsSince(base)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, p := range changed {
		if !strings.HasSuffix(p, "_test.go") {
			continue
		}
		now, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(p)))
		if err != nil {
			continue // deleted
		}
		was, _, err := repo.ShowFile(base, p)
		if err != nil {
			return nil, err
		}
		for _, name := range []string{"TestMain", "init"} {
			if n, m := count(now, name), count(was, name); n > m {
				notes = append(notes, fmt.Sprintf("%s adds func %s: it runs around every test of its package and can decide its exit status; read it", p, name))
			}
		}
	}
	return notes, nil
}

func count(src []byte, name string) int {
	n := 0
	for _, m := range entryPoint.FindAllSubmatch(src, -1) {
		if string(m[1]) == name {
			n++
		}
	}
	return n
}
