package testscripts

import (
	"fmt"
	"io"
	"os"

	"github.com/tidwall/gjson"
)

// jsonq is a test helper, not a treeloop command.
func init() { helpers["jsonq"] = jsonq }

// jsonq FILE QUERY... prints the gjson result of each QUERY in FILE's
// JSON: strings unquoted, objects as JSON, an array one element a line; exit
// 1 when the file is not JSON or a query matches nothing.
func jsonq(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: jsonq FILE QUERY...")
		return 80
	}
	data, err := os.ReadFile(args[0])
	if err != nil || !gjson.ValidBytes(data) {
		fmt.Fprintf(stderr, "jsonq: %s: not readable JSON (%v)\n", args[0], err)
		return 1
	}
	for _, q := range args[1:] {
		r := gjson.GetBytes(data, q)
		if !r.Exists() {
			fmt.Fprintf(stderr, "jsonq: %s: no match for %s\n", args[0], q)
			return 1
		}
		if r.IsArray() {
			for _, e := range r.Array() {
				fmt.Fprintln(stdout, e.String())
			}
			continue
		}
		fmt.Fprintln(stdout, r.String())
	}
	return 0
}
