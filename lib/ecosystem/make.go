package ecosystem

import (
	"regexp"
	"strings"
)

// justfiles are the names just reads, in its order.
var justfiles = []string{"justfile", "Justfile", ".justfile", "JUSTFILE"}

// justRecipe finds a recipe's header: "ci:", "@ci:", "ci arg:", "ci: dep".
var justRecipe = regexp.MustCompile(`(?m)^@?ci(\s+[^:=\n]*)?:([^=]|$)`)

// justCI is the text of the repository's justfile when it has a ci recipe
// (the guard `just ci` runs), and why, "" when it has none.
func justCI(root string) (text, why string) {
	name := firstOf(root, justfiles...)
	if name == "" {
		return "", ""
	}
	data := string(read(root, name))
	if !justRecipe.MatchString(data) {
		return "", ""
	}
	return data, name + " has a ci recipe"
}

// makefiles are the names GNU make reads, in its order.
var makefiles = []string{"GNUmakefile", "makefile", "Makefile"}

// makeTarget is the first of the targets ci, check and test the
// repository's Makefile has, the Makefile's text and its name; "" when
// none.
func makeTarget(root string) (target, text, name string) {
	name = firstOf(root, makefiles...)
	if name == "" {
		return "", "", ""
	}
	text = string(read(root, name))
	for _, t := range []string{"ci", "check", "test"} {
		if regexp.MustCompile(`(?m)^` + t + `\s*:([^=]|$)`).MatchString(text) {
			return t, text, name
		}
	}
	return "", "", ""
}

// byName are the marks of a command (or a recipe's text) that reports its
// tests by name in a form lib/testresults reads.
var byName = []*regexp.Regexp{
	regexp.MustCompile(`RUNNER_TEST_RESULTS`),
	regexp.MustCompile(`go\s+test\b[^\n]*\s-(json|v)\b`),
	regexp.MustCompile(`cargo\s+test\b`),
}

// reportsByName reports whether text is seen to report tests by name:
// it writes into $RUNNER_TEST_RESULTS, or runs go test -json or -v, or
// cargo test (whose lines name every test).
func reportsByName(text string) bool {
	text = strings.ReplaceAll(text, "\\\n", " ")
	for _, re := range byName {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}
