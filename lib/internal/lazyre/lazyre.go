// Package lazyre compiles a package's regular expressions on first use
// instead of at every start of every program that links the package: a
// step's commands link packages (lib/plan, lib/evidence, lib/testresults)
// whose expressions most of their runs never use.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr (regexp.MustCompile: a
// malformed expr panics, at its first use) the first time it is called
// and returns the same *regexp.Regexp every time.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
