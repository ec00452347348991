package tree

import "fmt"

// ControlChar is the first control character of s other than newline and
// tab (U+0000–U+001F, U+007F), and whether there is one. Text the runner
// writes into a commit message, a log or a prompt (a summary, a title, a
// goal, an acceptance line) may hold none: git refuses a message with
// U+0000, and the others rewrite what a terminal shows.
func ControlChar(s string) (rune, bool) {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			return r, true
		}
	}
	return 0, false
}

// controlProblem words a control character found in field.
func controlProblem(field string, r rune) string {
	return fmt.Sprintf("%s holds the control character U+%04X (only newline and tab are allowed)", field, r)
}

// ControlProblem is the error for a control character r in field (for
// the agent's output).
func ControlProblem(field string, r rune) error { return fmt.Errorf("%s", controlProblem(field, r)) }

// textProblems lists the control characters in n's own text.
func textProblems(n *Node) []string {
	var out []string
	if r, ok := ControlChar(n.Title); ok {
		out = append(out, controlProblem("title", r))
	}
	if r, ok := ControlChar(n.Goal); ok {
		out = append(out, controlProblem("goal", r))
	}
	for i, a := range n.Acceptance {
		if r, ok := ControlChar(a); ok {
			out = append(out, controlProblem(fmt.Sprintf("acceptance[%d]", i), r))
		}
	}
	return out
}
