package cli

import "github.com/treeloop/treeloop/lib/jsondoc"

// PrintJSON writes v to the command's stdout as every --json output is
// written (jsondoc.Marshal: 2-space indent, HTML characters unescaped,
// one trailing newline).
func (e *Env) PrintJSON(v any) error { return jsondoc.Write(e.Stdout, v) }
