package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// checkGen writes a plain check of decoded documents: one Go function per
// subschema, each func(x any, ptr string) string returning "" or the first
// problem as "<pointer>: <what>" (lib/schema's helpers do the walking).
type checkGen struct {
	name  string            // the check's function name
	root  *node             // the whole schema, for $ref
	what  map[string]string // instance location ("/log/*/kind") → what a value there must be
	defs  map[string]string // $defs name → its function
	names map[string]bool   // the functions written
	funcs bytes.Buffer
}

// emit writes the check named g.name: func(v any) string.
func (g *checkGen) emit() (string, error) {
	top, err := g.fn(g.root, "")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s returns \"\" when the schema accepts v, a document decoded by\n", g.name)
	fmt.Fprintf(&b, "// jsonstrict, else the first problem as \"<pointer>: <what>\".\n")
	fmt.Fprintf(&b, "func %s(v any) string { return %s(v, \"\") }\n\n", g.name, top)
	b.Write(g.funcs.Bytes())
	return b.String(), nil
}

// fn writes the function of the subschema n at the instance location loc
// and returns its name.
func (g *checkGen) fn(n *node, loc string) (string, error) {
	if n.Ref != "" {
		if n.constrains() {
			return "", fmt.Errorf("%s: keywords beside $ref are not supported", at(loc))
		}
		return g.def(n.Ref)
	}
	if len(n.Type) == 1 && n.Type[0] == "null" {
		return "", fmt.Errorf("%s: a null-only schema outside a oneOf with null is not supported", at(loc))
	}
	if n.Not != nil && (n.nullable() || n.Not.nullable()) {
		return "", fmt.Errorf("%s: not with null is not supported", at(loc))
	}
	if len(n.Type) == 0 && n.stringKeywords() && (n.kind() == "object" || n.kind() == "array") {
		return "", fmt.Errorf("%s: string keywords beside %s keywords without a type are not supported", at(loc), n.kind())
	}
	if other, ok := n.nullBranch(); ok {
		inner, err := g.fn(other, loc)
		if err != nil {
			return "", err
		}
		name := g.newName(loc)
		fmt.Fprintf(&g.funcs, "func %s(x any, ptr string) string {\n\tif x == nil {\n\t\treturn \"\"\n\t}\n\treturn %s(x, ptr)\n}\n\n", name, inner)
		return name, nil
	}
	if n.OneOf != nil {
		return "", fmt.Errorf("%s: oneOf other than a schema or null is not supported", at(loc))
	}
	var body strings.Builder
	if n.nullable() {
		body.WriteString("\tif x == nil {\n\t\treturn \"\"\n\t}\n")
	}
	if err := g.value(&body, n, loc); err != nil {
		return "", err
	}
	if err := g.combined(&body, n, loc); err != nil {
		return "", err
	}
	name := g.newName(loc)
	fmt.Fprintf(&g.funcs, "func %s(x any, ptr string) string {\n%s\treturn \"\"\n}\n\n", name, body.String())
	return name, nil
}

// newName names the function of a subschema at loc after it
// ("/log/*/kind" → <check>LogItemKind), numbered when the name is taken.
func (g *checkGen) newName(loc string) string {
	name := g.name
	for _, part := range strings.Split(strings.TrimPrefix(loc, "#"), "/") {
		if part == "*" {
			part = "item"
		}
		part = strings.TrimPrefix(part, "~") // a name's, a not's schema
		name += goName(part)
	}
	if loc == "" {
		name += "Document"
	}
	base := name
	for i := 2; g.names[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	g.names[name] = true
	return name
}

// def returns the function of a "#/$defs/<name>" reference, writing it
// the first time.
func (g *checkGen) def(ref string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || g.root.Defs[name] == nil {
		return "", fmt.Errorf("$ref %q: only #/$defs/<name> of the same schema is supported", ref)
	}
	if f, ok := g.defs[name]; ok {
		return f, nil
	}
	g.defs[name] = "" // a reference back to itself is refused below
	f, err := g.fn(g.root.Defs[name], "#"+name)
	if err != nil {
		return "", err
	}
	if g.defs[name] != "" {
		return "", fmt.Errorf("$defs/%s refers to itself: not supported", name)
	}
	g.defs[name] = f
	return f, nil
}

// value writes the checks of n's own keywords, by the type of its values.
func (g *checkGen) value(b *strings.Builder, n *node, loc string) error {
	lenient := len(n.Type) == 0 // keywords apply to values of their type only
	switch n.kind() {
	case "object":
		return g.object(b, n, loc, lenient)
	case "array":
		return g.array(b, n, loc, lenient)
	case "":
		if !n.stringKeywords() {
			return nil
		}
		// Keywords of strings, for string values alone.
		typed := *n
		typed.Type = typeList{"string"}
		_, cond, err := scalar(&typed)
		if err != nil {
			return fmt.Errorf("%s: %w", at(loc), err)
		}
		cond = strings.TrimPrefix(cond, "!ok || ")
		if strings.Contains(cond, " || ") {
			cond = "(" + cond + ")"
		}
		fmt.Fprintf(b, "\tif s, ok := x.(string); ok && %s {\n\t\treturn schema.Fail(ptr, %q)\n\t}\n", cond, g.whatOf(&typed, loc))
		return nil
	}
	decl, cond, err := scalar(n)
	if err != nil {
		return fmt.Errorf("%s: %w", at(loc), err)
	}
	fmt.Fprintf(b, "\t%s\n\tif %s {\n\t\treturn schema.Fail(ptr, %q)\n\t}\n", decl, cond, g.whatOf(n, loc))
	return nil
}

func (g *checkGen) object(b *strings.Builder, n *node, loc string, lenient bool) error {
	var props []string
	for _, p := range n.Properties {
		f, err := g.fn(p.schema, loc+"/"+p.name)
		if err != nil {
			return err
		}
		props = append(props, fmt.Sprintf("\t\t{Name: %q, Check: %s},\n", p.name, f))
	}
	if lenient {
		b.WriteString("\tif _, ok := x.(map[string]any); !ok {\n\t\treturn \"\"\n\t}\n")
	}
	fmt.Fprintf(b, "\tif why := schema.Object(x, ptr, %s, []schema.Prop{\n%s\t}, %v); why != \"\" {\n\t\treturn why\n\t}\n",
		goStrings(n.Required), strings.Join(props, ""), n.closed())
	if n.Names == nil && n.extra() == nil {
		return nil
	}
	// Every name by propertyNames; the value of each name "properties"
	// does not list by additionalProperties.
	names, extra := "nil", "nil"
	if n.Names != nil {
		f, err := g.fn(n.Names, loc+"/~name")
		if err != nil {
			return err
		}
		names = f
	}
	if n.extra() != nil {
		f, err := g.fn(n.extra(), loc+"/*")
		if err != nil {
			return err
		}
		extra = f
	}
	var listed []string
	for _, p := range n.Properties {
		listed = append(listed, p.name)
	}
	fmt.Fprintf(b, "\tif why := schema.Entries(x, ptr, %s, %s, %s); why != \"\" {\n\t\treturn why\n\t}\n", goStrings(listed), names, extra)
	return nil
}

func (g *checkGen) array(b *strings.Builder, n *node, loc string, lenient bool) error {
	item := "nil"
	if n.Items != nil {
		f, err := g.fn(n.Items, loc+"/*")
		if err != nil {
			return err
		}
		item = f
	}
	fail := "schema.Fail(ptr, " + strconv.Quote(g.whatOf(n, loc)) + ")"
	if lenient {
		fail = `""`
	}
	fmt.Fprintf(b, "\ta, ok := x.([]any)\n\tif !ok {\n\t\treturn %s\n\t}\n", fail)
	fmt.Fprintf(b, "\tif why := schema.Items(a, ptr, %d, %d, %s); why != \"\" {\n\t\treturn why\n\t}\n", intOr(n.MinItems, 0), intOr(n.MaxItems, -1), item)
	return nil
}

// combined writes not, allOf and if/then/else.
func (g *checkGen) combined(b *strings.Builder, n *node, loc string) error {
	if n.Not != nil {
		f, err := g.fn(n.Not, loc+"/~not")
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "\tif %s(x, ptr) == \"\" {\n\t\treturn schema.Fail(ptr, %q)\n\t}\n", f, "must not be "+describe(n.Not))
	}
	for _, sub := range n.AllOf {
		f, err := g.fn(sub, loc)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "\tif why := %s(x, ptr); why != \"\" {\n\t\treturn why\n\t}\n", f)
	}
	if n.If == nil {
		return nil
	}
	cond, err := g.fn(n.If, loc)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\tif %s(x, ptr) == \"\" {\n", cond)
	if err := g.branch(b, n.Then, loc); err != nil {
		return err
	}
	if n.Else != nil {
		b.WriteString("\t} else {\n")
		if err := g.branch(b, n.Else, loc); err != nil {
			return err
		}
	}
	b.WriteString("\t}\n")
	return nil
}

// branch writes the check of then or else (nothing when absent).
func (g *checkGen) branch(b *strings.Builder, s *node, loc string) error {
	if s == nil {
		return nil
	}
	f, err := g.fn(s, loc)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\t\tif why := %s(x, ptr); why != \"\" {\n\t\t\treturn why\n\t\t}\n", f)
	return nil
}

// scalar returns the declaration and the failing condition of a string,
// number, boolean or enum/const value.
func scalar(n *node) (decl, cond string, err error) {
	var conds []string
	switch k := n.kind(); {
	case k == "string" || (k == "value" && stringValues(n)):
		decl, conds = "s, ok := x.(string)", []string{"!ok"}
		if n.MinLength != nil || n.MaxLength != nil {
			conds = append(conds, fmt.Sprintf("!schema.Runes(s, %d, %d)", intOr(n.MinLength, 0), intOr(n.MaxLength, -1)))
		}
		if n.Pattern != "" {
			conds = append(conds, "!"+matchCall(n.Pattern, "s"))
		}
		if vals := enumStrings(n); vals != nil {
			conds = append(conds, "!schema.OneOf(s, "+strings.Join(vals, ", ")+")")
		}
	case k == "integer" || k == "number" || k == "value":
		decl, conds = "f, ok := x.(float64)", []string{"!ok"}
		if k == "integer" {
			decl = "f, ok := schema.Integer(x)"
		}
		if n.Minimum != nil {
			conds = append(conds, "f < "+n.Minimum.String())
		}
		if n.Maximum != nil {
			conds = append(conds, "f > "+n.Maximum.String())
		}
		if n.Const != nil {
			conds = append(conds, "f != "+string(n.Const))
		}
	case k == "boolean":
		decl, conds = "_, ok := x.(bool)", []string{"!ok"}
	default:
		return "", "", fmt.Errorf("type %q is not supported", k)
	}
	if len(conds) == 1 { // the value itself is not needed
		decl = "_" + decl[1:]
	}
	return decl, strings.Join(conds, " || "), nil
}

// stringValues reports whether n's enum or const holds strings (and null).
func stringValues(n *node) bool {
	if n.Const != nil {
		return bytes.HasPrefix(n.Const, []byte(`"`))
	}
	for _, v := range n.Enum {
		if _, ok := v.(string); !ok && v != nil {
			return false
		}
	}
	return true
}

// enumStrings returns n's enum or const strings, quoted for Go (nil when
// it has none).
func enumStrings(n *node) []string {
	var out []string
	if n.Const != nil {
		var s string
		_ = json.Unmarshal(n.Const, &s)
		return []string{strconv.Quote(s)}
	}
	for _, v := range n.Enum {
		if s, ok := v.(string); ok {
			out = append(out, strconv.Quote(s))
		}
	}
	return out
}

// whatOf is what a value at loc must be, for its problem ("not <what>"):
// the -what given for loc, else said from the schema.
func (g *checkGen) whatOf(n *node, loc string) string {
	w, ok := g.what[loc]
	if !ok {
		w = describe(n)
	}
	if n.nullable() && n.kind() != "" {
		w = "null or " + w
	}
	return "not " + w
}

// describe says what values n admits, e.g. "an integer >= 1", "one of a, b".
func describe(n *node) string {
	switch n.kind() {
	case "object":
		return "a JSON object"
	case "array":
		return "an array"
	case "boolean":
		return "a boolean"
	case "integer", "number":
		return describeNumber(n)
	case "value":
		if n.Const != nil {
			return string(n.Const)
		}
		var vals []string
		for _, v := range n.Enum {
			if s, ok := v.(string); ok {
				vals = append(vals, s)
			}
		}
		return "one of " + strings.Join(vals, ", ")
	}
	return describeString(n)
}

func describeNumber(n *node) string {
	w := "a number"
	if n.kind() == "integer" {
		w = "an integer"
	}
	switch {
	case n.Minimum != nil && n.Maximum != nil:
		return w + " from " + n.Minimum.String() + " to " + n.Maximum.String()
	case n.Minimum != nil:
		return w + " >= " + n.Minimum.String()
	case n.Maximum != nil:
		return w + " <= " + n.Maximum.String()
	}
	return w
}

func describeString(n *node) string {
	w := "a string"
	switch {
	case n.MinLength != nil && *n.MinLength == 1 && n.MaxLength == nil:
		w = "a non-empty string"
	case n.MinLength != nil && n.MaxLength != nil:
		w += fmt.Sprintf(" of %d to %d characters", *n.MinLength, *n.MaxLength)
	case n.MinLength != nil:
		w += fmt.Sprintf(" of at least %d characters", *n.MinLength)
	case n.MaxLength != nil:
		w += fmt.Sprintf(" of at most %d characters", *n.MaxLength)
	}
	if n.Pattern != "" {
		w += " matching " + n.Pattern
	}
	if vals := enumStrings(n); vals != nil {
		w += " (" + strings.Join(vals, ", ") + ")"
	}
	return w
}

func goStrings(ss []string) string {
	if ss == nil {
		return "nil"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func at(loc string) string {
	if loc == "" {
		return "/"
	}
	return loc
}
