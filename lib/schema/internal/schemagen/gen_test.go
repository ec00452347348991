package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGeneratedFilesUpToDate regenerates, into memory, every file a
// //go:generate line of the module writes with schemagen and compares it
// with the committed file: a schema changed without `go generate ./...`
// fails here.
func TestGeneratedFilesUpToDate(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		for _, args := range directives(t, p) {
			found++
			checkUpToDate(t, filepath.Dir(p), args)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 4 {
		t.Fatalf("only %d schemagen directives found", found)
	}
}

func checkUpToDate(t *testing.T, dir string, args []string) {
	t.Helper()
	o, err := parseFlags(append(args, "-package", filepath.Base(dir)))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	want, err := generate(o)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	out := filepath.Join(dir, o.out)
	got, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not what schemagen writes from schemas/%s.schema.json: run go generate ./... (%v)", out, o.schema, err)
	}
}

// directives returns the arguments of the file's schemagen //go:generate
// lines, split as go generate splits them (quoted strings in Go syntax).
func directives(t *testing.T, path string) [][]string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "//go:generate go run ")
		if !ok || !strings.Contains(line, "schemagen ") {
			continue
		}
		words := split(t, line)
		out = append(out, words[1:])
	}
	return out
}

func split(t *testing.T, line string) []string {
	var words []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			w, _ := strconv.Unquote(q)
			words, line = append(words, w), line[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		words, line = append(words, w), rest
	}
	return words
}

// TestUnsupportedKeywordFails: a schema keyword the generator does not
// know fails generation, so no check is written looser than its schema.
func TestUnsupportedKeywordFails(t *testing.T) {
	var n node
	if err := parseNode([]byte(`{"type":"string","multipleOf":2}`), &n); err == nil {
		t.Fatal("multipleOf accepted")
	}
	g := &checkGen{name: "c", root: &node{OneOf: []*node{{Type: typeList{"string"}}, {Type: typeList{"integer"}}}}, what: map[string]string{}, defs: map[string]string{}, names: map[string]bool{}}
	if _, err := g.emit(); err == nil {
		t.Fatal("a oneOf of two types accepted")
	}
	// What the plain check would check loosely or wrongly fails instead.
	for _, doc := range []string{
		`{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "not": {"pattern": "^x"}}`,
		`{"type": "null"}`,
		`{"type": ["string", "null"], "not": {"pattern": "^x"}}`,
		`{"type": "string", "not": {"type": ["string", "null"]}}`,
		`{"properties": {"a": {"type": "string"}}, "pattern": "^x"}`,
	} {
		var root node
		if err := parseNode([]byte(doc), &root); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		g := &checkGen{name: "c", root: &root, what: map[string]string{}, defs: map[string]string{}, names: map[string]bool{}}
		if _, err := g.emit(); err == nil {
			t.Errorf("%s: generated", doc)
		}
	}
}

// TestUntypedObjectKeywords: propertyNames and additionalProperties as a
// schema make a node without a type an object's (checked when the value
// is an object, as JSON Schema applies them).
func TestUntypedObjectKeywords(t *testing.T) {
	var root node
	if err := parseNode([]byte(`{"propertyNames": {"pattern": "^[A-Z]+$"}, "additionalProperties": {"type": "string"}}`), &root); err != nil {
		t.Fatal(err)
	}
	g := &checkGen{name: "c", root: &root, what: map[string]string{}, defs: map[string]string{}, names: map[string]bool{}}
	src, err := g.emit()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(src, "schema.Entries(x, ptr, nil, cName, cItem)") || !strings.Contains(src, "if _, ok := x.(map[string]any); !ok {") {
		t.Errorf("no lenient object check:\n%s", src)
	}
}

// TestStreamRefusesObjectKeywords: the streaming parser's tables are not
// written for a definition with propertyNames, not or additionalProperties
// as a schema, at any depth (the plain check supports them; the stream
// would check them loosely).
func TestStreamRefusesObjectKeywords(t *testing.T) {
	for _, prop := range []string{
		`"env": {"type": "object", "propertyNames": {"pattern": "^[A-Z]+$"}}`,
		`"env": {"type": "object", "additionalProperties": {"type": "string"}}`,
		`"list": {"type": "array", "items": {"type": "string", "not": {"pattern": "^x"}}}`,
	} {
		var root node
		if err := parseNode([]byte(`{"$defs": {"node": {"type": "object", "additionalProperties": false, "properties": {`+prop+`}}}}`), &root); err != nil {
			t.Fatal(err)
		}
		g := &streamGen{def: "node", typ: "Node", obj: root.Defs["node"]}
		if _, err := g.emit(); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: err = %v, want not supported", prop, err)
		}
	}
}

// TestReadOnlyFields: the field table marks the schema's readOnly
// properties runner-owned and restores them; a readOnly list of nodes has
// no restore and fails generation.
func TestReadOnlyFields(t *testing.T) {
	gen := func(props string) (string, error) {
		var root node
		if err := parseNode([]byte(`{"$defs": {"node": {"type": "object", "additionalProperties": false, "properties": {`+props+`}}}}`), &root); err != nil {
			t.Fatal(err)
		}
		g := &streamGen{def: "node", typ: "Node", obj: root.Defs["node"]}
		return g.emit()
	}
	src, err := gen(`"title": {"type": "string", "maxLength": 9}, "passes": {"type": "boolean", "readOnly": true}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"Title", "title", "string", fieldEqual | fieldUnordered | fieldImmutable | fieldAgentOwned}`,
		`{"Passes", "passes", "boolean", fieldEqual | fieldUnordered | fieldImmutable | fieldRunnerOwned}`,
		`n.Passes = p.Passes`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("generated code lacks %s", want)
		}
	}
	if strings.Contains(src, "n.Title = p.Title") {
		t.Error("the agent's title is restored")
	}
	if _, err := gen(`"children": {"type": "array", "maxItems": 9, "readOnly": true, "items": {"$ref": "#/$defs/node"}}`); err == nil {
		t.Error("readOnly children accepted")
	}
}
