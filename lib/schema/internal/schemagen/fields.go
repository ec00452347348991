package main

import (
	"bytes"
	"fmt"
	"strings"
)

// fieldRow is one property of the streamed object, for its field table:
// its Go name, JSON key, kind ("string", "integer", "boolean", "enum",
// "strings", "objects" or "children": the kinds field reads), whether
// the schema requires it and whether it is readOnly (runner-owned).
type fieldRow struct {
	name, key, kind    string
	required, readOnly bool
}

// The groups of a field in lib/tree's table, every property in the first
// three: a node is equal to another, and a passed node unchanged, only
// when every field is.
const compared = "fieldEqual | fieldUnordered | fieldImmutable"

// writeFields writes <def>Fields, the table of the object's fields in
// the order of their bits, and the code generated from it: sameFields,
// the comparison of every field (children by count), and
// restoreRunnerOwned, which puts back the readOnly ones.
func (g *streamGen) writeFields(b *bytes.Buffer) error {
	var rows, same []string
	for _, f := range g.fields {
		owner := "fieldAgentOwned"
		if f.readOnly {
			owner = "fieldRunnerOwned"
		}
		rows = append(rows, fmt.Sprintf("{%q, %q, %q, %s | %s},", f.name, f.key, f.kind, compared, owner))
		same = append(same, compare(f))
	}
	fmt.Fprintf(b, "// %sFields is the table of a %s's fields, in the order of the bits\n", g.def, g.def)
	fmt.Fprintf(b, "// above: Go name, JSON key, kind and groups. Every field is compared;\n")
	fmt.Fprintf(b, "// the schema's readOnly makes one runner-owned, else it is the agent's.\n")
	fmt.Fprintf(b, "var %sFields = [...]%sField{\n\t%s\n}\n\n", g.def, g.def, strings.Join(rows, "\n\t"))
	fmt.Fprintf(b, "// sameFields reports whether a and b are equal in every field of their\n")
	fmt.Fprintf(b, "// own, and have as many children: the one comparison Equal, the\n")
	fmt.Fprintf(b, "// immutability checks and sameOwn make of a %s.\n", g.def)
	fmt.Fprintf(b, "func sameFields(a, b *%s) bool {\n\treturn %s\n}\n\n", g.typ, strings.Join(same, " &&\n\t\t"))
	return g.writeRestore(b)
}

// compare is the Go expression that a and b are equal in f.
func compare(f fieldRow) string {
	switch f.kind {
	case "strings", "objects":
		return fmt.Sprintf("slices.Equal(a.%s, b.%s)", f.name, f.name)
	case "children":
		return fmt.Sprintf("len(a.%s) == len(b.%s)", f.name, f.name)
	}
	return fmt.Sprintf("a.%s == b.%s", f.name, f.name)
}

// writeRestore writes restoreRunnerOwned. Its notes show a value where
// it is short: a number, a boolean or an enum (quoted when it may be
// absent, so that absent reads ""); free text and lists are only said to
// be restored.
func (g *streamGen) writeRestore(b *bytes.Buffer) error {
	var body strings.Builder
	for _, f := range g.fields {
		if !f.readOnly {
			continue
		}
		var note string
		switch f.kind {
		case "boolean":
			note = fmt.Sprintf("fmt.Sprintf(\"%%s: %s %%v restored to %%v\", path, n.%s, p.%s)", f.key, f.name, f.name)
		case "integer":
			note = fmt.Sprintf("fmt.Sprintf(\"%%s: %s %%d restored to %%d\", path, n.%s, p.%s)", f.key, f.name, f.name)
		case "enum":
			verb := "%s"
			if !f.required {
				verb = "%q"
			}
			note = fmt.Sprintf("fmt.Sprintf(\"%%s: %s %s restored to %s\", path, n.%s, p.%s)", f.key, verb, verb, f.name, f.name)
		case "string", "strings", "objects":
			note = fmt.Sprintf("path + %q", ": "+f.key+" restored")
		default:
			return fmt.Errorf("properties/%s: a readOnly %s cannot be restored", f.key, f.kind)
		}
		set := fmt.Sprintf("n.%s = p.%s", f.name, f.name)
		if f.kind == "strings" || f.kind == "objects" {
			set = fmt.Sprintf("n.%s = slices.Clone(p.%s)", f.name, f.name)
		}
		differ := fmt.Sprintf("n.%s != p.%s", f.name, f.name)
		if f.kind == "strings" || f.kind == "objects" {
			differ = fmt.Sprintf("!slices.Equal(n.%s, p.%s)", f.name, f.name)
		}
		fmt.Fprintf(&body, "\tif %s {\n\t\tnotes = append(notes, %s)\n\t\t%s\n\t}\n", differ, note, set)
	}
	fmt.Fprintf(b, "// restoreRunnerOwned puts p's value of every runner-owned field (readOnly\n")
	fmt.Fprintf(b, "// in the schema) back on n and appends to notes a line for each it\n")
	fmt.Fprintf(b, "// changed, \"<path>: <key> ...restored...\".\n")
	fmt.Fprintf(b, "func restoreRunnerOwned(n, p *%s, path string, notes []string) []string {\n%s\treturn notes\n}\n\n", g.typ, body.String())
	return nil
}
