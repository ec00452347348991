package evidence

import (
	"path"
	"slices"
	"strings"
)

// The variables the runner gives the guard and the witness, and expands
// in their argv (so that a command needs no shell to use them).
const (
	// EnvResults names the directory, made empty for each run, where the
	// guard writes its test results by name.
	EnvResults = "RUNNER_TEST_RESULTS"
	// EnvFiles names the test files the witness runs: as an argv element
	// of its own, ${RUNNER_TEST_FILES} stands for one element per file.
	// It is not in the environment: the witness's run and the guard's
	// must not be told apart by a test.
	EnvFiles = "RUNNER_TEST_FILES"
	// EnvDirs names those files' directories ("./dir", Go's packages): as
	// an element of its own, one element per directory.
	EnvDirs = "RUNNER_TEST_DIRS"
)

// Vars are the values of the variables for one run.
type Vars struct {
	Results string   // the results directory
	Files   []string // the test files (the witness only), repository-relative
}

// Dirs are the distinct directories of the files, as "./dir" ("." for the
// root), sorted.
func (v Vars) Dirs() []string {
	var out []string
	for _, f := range v.Files {
		d := path.Dir(f)
		if d != "." {
			d = "./" + d
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// Env is the variables the environment holds: the results directory,
// which the guard's run has too.
func (v Vars) Env() []string {
	return []string{EnvResults + "=" + v.Results}
}

// Expand is argv with the variables replaced: an element that is exactly
// ${RUNNER_TEST_FILES} or ${RUNNER_TEST_DIRS} becomes one element per file
// or directory, and ${RUNNER_TEST_RESULTS} anywhere in an element the
// results directory. Nothing else is expanded.
func (v Vars) Expand(argv []string) []string {
	out := make([]string, 0, len(argv))
	for _, a := range argv {
		switch a {
		case "${" + EnvFiles + "}":
			out = append(out, v.Files...)
		case "${" + EnvDirs + "}":
			out = append(out, v.Dirs()...)
		default:
			out = append(out, strings.ReplaceAll(a, "${"+EnvResults+"}", v.Results))
		}
	}
	return out
}
