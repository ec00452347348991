// Package vocab holds the words treeloop's printers share: the words of
// each outcome field, typed once (DESIGN.md decision 22), and the way a
// count is said.
package vocab

import "strconv"

// Plural is n with its noun: "1 node", "2 nodes", "0 nodes".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
