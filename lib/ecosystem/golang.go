package ecosystem

import (
	"path/filepath"
	"regexp"
	"strings"
)

// goRequire finds a require directive in go.mod.
var goRequire = regexp.MustCompile(`(?m)^\s*require\b`)

// goProject detects a Go module: go test -json names every test, and the
// witness runs the packages of the node's test files.
func goProject(e Env) *project {
	if !exists(e.Root, "go.mod") {
		return nil
	}
	pr := &project{name: Go, signal: "go.mod"}
	pr.guard = []string{"go", "test", "-json", "./..."}
	pr.guardWhy = "go.mod found; go test -json names every test"
	pr.witness = []string{"go", "test", "-json", "${RUNNER_TEST_DIRS}"}
	pr.witWhy = "go test runs only the packages of the node's test files"
	pr.programs = []string{"go"}
	// The module cache, when it lies under the home directory and the
	// module has dependencies: the guard reads them there.
	if goRequire.Match(read(e.Root, "go.mod")) && e.Run != nil {
		if out, err := e.Run(e.Root, "go", "env", "GOMODCACHE"); err == nil {
			if p := strings.TrimSpace(out); filepath.IsAbs(p) {
				if rel, ok := newResolver(e).underHome(p); ok {
					pr.readable = append(pr.readable, "~/"+rel)
					pr.hints = append(pr.hints, "the module cache (~/"+rel+") is shown read-only to the sandbox: a module the agent adds must be downloaded there first (go mod download), or the guard cannot build")
				}
			}
		}
	}
	return pr
}
