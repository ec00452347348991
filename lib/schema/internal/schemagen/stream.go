package main

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/schema"
)

// streamGen writes what lib/tree's streaming parser (fast.go) needs of the
// object schema $defs/<def>, read into the Go struct typ: the field bits,
// the field table (fields.go), the schema's bounds as constants, the
// reader of each field (fastParser.field), the cut of its strings, and
// the bounds check of a decoded value (<def>WithinBounds) that Verify
// uses.
type streamGen struct {
	def, typ string
	obj      *node
	fields   []fieldRow
	consts   bytes.Buffer
	cases    bytes.Buffer
	bounds   []string
	spans    []string        // Go names of the string fields
	optional map[string]bool // of spans: absent leaves the span zero
	helpers  bytes.Buffer
	required map[string]bool
}

func (g *streamGen) emit() (string, error) {
	if g.obj == nil || g.obj.kind() != "object" || !g.obj.closed() {
		return "", fmt.Errorf("stream: $defs/%s is not a closed object schema", g.def)
	}
	if k := g.obj.objectKeywords(); k != "" {
		return "", fmt.Errorf("stream: $defs/%s: %s is not supported", g.def, k)
	}
	required := map[string]bool{}
	for _, r := range g.obj.Required {
		required[r] = true
	}
	g.required = required
	var bits, req []string
	for i, p := range g.obj.Properties {
		bit := "f" + goName(p.name)
		if i == 0 {
			bits = append(bits, bit+" = 1 << iota")
		} else {
			bits = append(bits, bit)
		}
		if required[p.name] {
			req = append(req, bit)
		}
		kind, err := g.field(p)
		if err != nil {
			return "", fmt.Errorf("stream: $defs/%s/properties/%s: %w", g.def, p.name, err)
		}
		g.fields = append(g.fields, fieldRow{goName(p.name), p.name, kind, required[p.name], p.schema.ReadOnly})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// The bits of a %s's fields, in schema order; fRequired are the\n// required ones.\nconst (\n\t%s\n)\n\n", g.def, strings.Join(bits, "\n\t"))
	fmt.Fprintf(&b, "const fRequired = %s\n\n", strings.Join(req, " | "))
	if err := g.writeFields(&b); err != nil {
		return "", fmt.Errorf("stream: $defs/%s: %w", g.def, err)
	}
	fmt.Fprintf(&b, "// The schema's bounds on a %s's values (lengths in code points).\nconst (\n%s)\n\n", g.def, g.consts.String())
	g.writeSpans(&b)
	fmt.Fprintf(&b, "// field reads the value of the field name of n, its strings as spans\n// into s; it returns the field's bit (0 for a name the schema does not\n// know) and whether the value is valid.\n")
	fmt.Fprintf(&b, "func (p *fastParser) field(name string, n *%s, s *%sSpans, depth int) (bit int, ok bool) {\n\tswitch name {\n%s\t}\n\treturn 0, false\n}\n\n", g.typ, g.def, g.cases.String())
	fmt.Fprintf(&b, "// %sWithinBounds reports whether n's own fields (not its children's)\n// are within what field accepts.\n", g.def)
	fmt.Fprintf(&b, "func %sWithinBounds(n *%s) bool {\n\treturn %s\n}\n", g.def, g.typ, strings.Join(g.bounds, " &&\n\t\t"))
	b.Write(g.helpers.Bytes())
	return b.String(), nil
}

func (g *streamGen) writeSpans(b *bytes.Buffer) {
	lower := make([]string, len(g.spans))
	sets := make([]string, len(g.spans))
	for i, f := range g.spans {
		lower[i] = strings.ToLower(f)
		sets[i] = fmt.Sprintf("n.%s = cut(s.%s)", f, lower[i])
		if g.optional[f] {
			sets[i] = fmt.Sprintf("if s.%s != (span{}) { // absent\n\t\t%s\n\t}", lower[i], sets[i])
		}
	}
	fmt.Fprintf(b, "// %sSpans are a %s's string fields while it is read: spans of\n// fastParser.buf.\ntype %sSpans struct{ %s span }\n\n", g.def, g.def, g.def, strings.Join(lower, ", "))
	fmt.Fprintf(b, "// set gives n its strings, cut from the node's one allocation.\nfunc (s *%sSpans) set(n *%s, cut func(span) string) {\n\t%s\n}\n\n", g.def, g.typ, strings.Join(sets, "\n\t"))
}

// constant writes the bound const <def><Field><what> = v and returns its name.
func (g *streamGen) constant(field, what, v string) string {
	name := g.def + goName(field) + what
	fmt.Fprintf(&g.consts, "\t%s = %s\n", name, v)
	return name
}

// field writes the reader case and the bounds of one property and
// returns its kind (fieldRow).
func (g *streamGen) field(p property) (kind string, err error) {
	s, f, bit := p.schema, goName(p.name), "f"+goName(p.name)
	fmt.Fprintf(&g.cases, "\tcase %q:\n", p.name)
	switch {
	case s.Ref == "#/$defs/"+g.def:
		return "", fmt.Errorf("a single %s is not supported", g.def)
	case s.has("string") && len(s.Type) == 1 && s.Enum == nil:
		return "string", g.stringField(p, f, bit)
	case s.has("integer") && len(s.Type) == 1:
		if s.Minimum == nil || s.Maximum == nil {
			return "", fmt.Errorf("an integer needs a minimum and a maximum")
		}
		lo, hi := g.constant(p.name, "Minimum", s.Minimum.String()), g.constant(p.name, "Maximum", s.Maximum.String())
		fmt.Fprintf(&g.cases, "\t\treturn %s, readInt(p, &n.%s, %s, %s)\n", bit, f, lo, hi)
		g.bounds = append(g.bounds, fmt.Sprintf("n.%s >= %s && n.%s <= %s", f, lo, f, hi))
		return "integer", nil
	case s.has("boolean") && len(s.Type) == 1:
		fmt.Fprintf(&g.cases, "\t\tn.%s, ok = p.boolean()\n\t\treturn %s, ok\n", f, bit)
		return "boolean", nil
	case s.Type == nil && s.Enum != nil && stringValues(s) && !s.nullable():
		vals := enumStrings(s)
		fmt.Fprintf(&g.cases, "\t\tn.%s, ok = p.enum(%s)\n\t\treturn %s, ok\n", f, strings.Join(vals, ", "), bit)
		check := fmt.Sprintf("schema.OneOf(n.%s, %s)", f, strings.Join(vals, ", "))
		if !g.required[p.name] {
			check = fmt.Sprintf("(n.%s == \"\" || %s)", f, check) // "" is absent
		}
		g.bounds = append(g.bounds, check)
		return "enum", nil
	case s.has("array") && len(s.Type) == 1 && s.MaxItems != nil && s.MinItems == nil && s.Items != nil:
		return g.arrayField(p, f, bit)
	}
	return "", fmt.Errorf("this kind of value has no reader: add one to lib/tree/fast.go and to schemagen's stream.go")
}

func (g *streamGen) stringField(p property, f, bit string) error {
	s := p.schema
	lo, hi := "0", "-1"
	if s.MinLength != nil {
		lo = g.constant(p.name, "MinLength", strconv.Itoa(*s.MinLength))
	}
	if s.MaxLength != nil {
		hi = g.constant(p.name, "MaxLength", strconv.Itoa(*s.MaxLength))
	}
	field := strings.ToLower(f)
	g.spans = append(g.spans, f)
	fmt.Fprintf(&g.cases, "\t\ts.%s, ok = p.str(%s, %s)\n", field, lo, hi)
	check := fmt.Sprintf("schema.Runes(n.%s, %s, %s)", f, lo, hi)
	if s.Pattern != "" {
		fmt.Fprintf(&g.cases, "\t\treturn %s, ok && %s\n", bit, matchCall(s.Pattern, "p.text(s."+field+")"))
		check = matchCall(s.Pattern, "n."+f)
	} else {
		fmt.Fprintf(&g.cases, "\t\treturn %s, ok\n", bit)
	}
	if !g.required[p.name] {
		if g.optional == nil {
			g.optional = map[string]bool{}
		}
		g.optional[f] = true
		check = fmt.Sprintf("(n.%s == \"\" || %s)", f, check) // "" is absent
	}
	g.bounds = append(g.bounds, check)
	return nil
}

func (g *streamGen) arrayField(p property, f, bit string) (kind string, err error) {
	s, items := p.schema, p.schema.Items
	max := g.constant(p.name, "MaxItems", strconv.Itoa(*s.MaxItems))
	switch {
	case items.Ref == "#/$defs/"+g.def:
		fmt.Fprintf(&g.cases, "\t\tn.%s, ok = p.children(depth, %s)\n\t\treturn %s, ok\n", f, max, bit)
		g.bounds = append(g.bounds, fmt.Sprintf("len(n.%s) <= %s", f, max))
		return "children", nil
	case items.has("string") && len(items.Type) == 1 && items.MinLength == nil && items.Pattern == "" && items.MaxLength != nil:
		itemMax := g.constant(p.name, "ItemMaxLength", strconv.Itoa(*items.MaxLength))
		fmt.Fprintf(&g.cases, "\t\tn.%s, ok = p.strings(%s, %s)\n\t\treturn %s, ok\n", f, max, itemMax, bit)
		g.bounds = append(g.bounds, fmt.Sprintf("len(n.%s) <= %s && allRunes(n.%s, %s)", f, max, f, itemMax))
		return "strings", nil
	case items.kind() == "object" && items.closed():
		return "objects", g.objectsField(p, f, bit, max)
	}
	return "", fmt.Errorf("these items have no reader: add one to lib/tree/fast.go and to schemagen's stream.go")
}

// objectsField writes the reader and bounds of an array of closed objects
// whose properties are all required strings, read into []<Item> (the
// property's name, singular, in Go's spelling).
func (g *streamGen) objectsField(p property, f, bit, max string) error {
	items := p.schema.Items
	typ := strings.TrimSuffix(f, "s")
	var fields, checks []string
	for _, ip := range items.Properties {
		s := ip.schema
		if !s.has("string") || len(s.Type) != 1 || s.Pattern != "" || s.Enum != nil || !slices.Contains(items.Required, ip.name) {
			return fmt.Errorf("%s: only required strings are read in an array of objects", ip.name)
		}
		lo, hi := strconv.Itoa(intOr(s.MinLength, 0)), strconv.Itoa(intOr(s.MaxLength, -1))
		fields = append(fields, fmt.Sprintf("{%q, &x.%s, %s, %s}", ip.name, goName(ip.name), lo, hi))
		checks = append(checks, fmt.Sprintf("schema.Runes(x.%s, %s, %s)", goName(ip.name), lo, hi))
	}
	if len(items.Required) != len(items.Properties) {
		return fmt.Errorf("every property of the items must be required")
	}
	fmt.Fprintf(&g.cases, "\t\tn.%s, ok = readObjects(p, %s, %v, func(x *%s) []stringField {\n\t\t\treturn []stringField{%s}\n\t\t})\n\t\treturn %s, ok\n",
		f, max, !g.required[p.name], typ, strings.Join(fields, ", "), bit)
	helper := g.def + f + "WithinBounds"
	fmt.Fprintf(&g.helpers, "\n// %s reports whether every item is within what field accepts.\nfunc %s(xs []%s) bool {\n\tfor _, x := range xs {\n\t\tif !(%s) {\n\t\t\treturn false\n\t\t}\n\t}\n\treturn true\n}\n",
		helper, helper, typ, strings.Join(checks, " && "))
	g.bounds = append(g.bounds, fmt.Sprintf("len(n.%s) <= %s && %s(n.%s)", f, max, helper, f))
	return nil
}

// matchCall is the Go expression that matches arg against pattern:
// lib/schema's plain matcher where it has one, else schema.Match.
func matchCall(pattern, arg string) string {
	if pattern == schema.IDPattern {
		return "schema.MatchID(" + arg + ")"
	}
	return fmt.Sprintf("schema.Match(%q, %s)", pattern, arg)
}
