package tree

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsondoc"
)

// FuzzFastParse: whatever the streaming check accepts, the full path
// (jsonstrict and the JSON Schema validator) accepts too, with the same
// tree. Seeded with the fixtures and FuzzLoad's committed corpus.
func FuzzFastParse(f *testing.F) {
	for _, data := range fastSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastParse(data)
		full, ps := parseFull(data)
		if !ok {
			// Commands without the full validator have only the fast
			// path: it must take every valid tree within its
			// depth bound.
			if len(ps) == 0 && depth(full) <= fastMaxDepth {
				t.Fatalf("fast path refused a valid tree")
			}
			return
		}
		if len(ps) > 0 {
			t.Fatalf("fast path accepted what the full path rejects: %v", ps)
		}
		if !Equal(fast, full) || !bytes.Equal(Encode(fast), Encode(full)) {
			t.Fatalf("fast and full trees differ:\n%s\n%s", Encode(fast), Encode(full))
		}
	})
}

// fastSeeds are the load fixtures and the inputs of FuzzLoad's corpus
// files ("go test fuzz v1" followed by one []byte("...") line).
func fastSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "load", "*.json"))
	corpus, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzLoad", "*"))
	for _, name := range append(files, corpus...) {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		if !strings.Contains(name, "FuzzLoad") {
			out = append(out, data)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "[]byte(") {
				continue
			}
			s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
			if err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			out = append(out, []byte(s))
		}
	}
	if len(out) < 10 {
		tb.Fatalf("only %d seeds", len(out))
	}
	return out
}

// The fast path must serve the trees the runner writes: a canonical tree
// and a compact one take it, and so do integers spelled 1.0 or 1e2 (read
// as the full path reads them), since commands without the full validator
// have only the fast path for a valid tree; invalid trees fall
// back and are refused.
func TestFastParseTaken(t *testing.T) {
	leaf := `{"id":"r.1","order":2,"title":"Ünïcode title","goal":"g","acceptance":["a","b"],"next":"execute","passes":true,"attempts":1,"max_attempts":3,"children":[]}`
	compact := `{"id":"r","order":-5,"title":"T","goal":"","acceptance":[],"next":"decompose","passes":false,"attempts":0,"max_attempts":1000000,"children":[` + leaf + `]}`
	root, ok := fastParse([]byte(compact))
	if !ok {
		t.Fatal("compact tree did not take the fast path")
	}
	if _, ok := fastParse(Encode(root)); !ok {
		t.Fatal("canonical tree did not take the fast path")
	}
	full, ps := parseFull([]byte(compact))
	if len(ps) > 0 || !Equal(root, full) {
		t.Fatalf("full path: %v", ps)
	}
	for _, tt := range []struct {
		name, doc string
		valid     bool // valid trees take the fast path, invalid ones do not
	}{
		{"float integer", strings.Replace(compact, `"order":-5`, `"order":-5.0`, 1), true},
		{"exponent", strings.Replace(compact, `"order":-5`, `"order":1e2`, 1), true},
		{"fraction", strings.Replace(compact, `"order":-5`, `"order":-5.5`, 1), false},
		{"exponent too high", strings.Replace(compact, `"attempts":0`, `"attempts":1.1e6`, 1), false},
		{"extra key", strings.Replace(compact, `"order":-5`, `"order":-5,"x":1`, 1), false},
		{"duplicate key", strings.Replace(compact, `"order":-5`, `"order":-5,"order":1`, 1), false},
		{"missing key", strings.Replace(compact, `"order":-5,`, ``, 1), false},
		{"bad id", strings.Replace(compact, `"id":"r"`, `"id":".r"`, 1), false},
		{"empty title", strings.Replace(compact, `"title":"T"`, `"title":""`, 1), false},
		{"attempts too high", strings.Replace(compact, `"attempts":0`, `"attempts":1000001`, 1), false},
		{"bad next", strings.Replace(compact, `"next":"decompose"`, `"next":"skip"`, 1), false},
		{"trailing data", compact + `{}`, false},
		{"bom", "\xEF\xBB\xBF" + compact, false},
	} {
		if _, ok := fastParse([]byte(tt.doc)); ok != tt.valid {
			t.Errorf("%s: fast path taken %v, want %v", tt.name, ok, tt.valid)
		}
		if _, ps := Parse([]byte(tt.doc)); (len(ps) == 0) != tt.valid {
			t.Errorf("%s: Parse problems %v, want valid=%v", tt.name, ps, tt.valid)
		}
	}
}

// depth is the number of node levels below n.
func depth(n *Node) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, depth(c)+1)
	}
	return d
}

// encodeReflect is Encode through encoding/json, the definition the hand
// encoder keeps.
// encodeReflect is n as the one JSON writer (lib/jsondoc) writes it:
// Encode is held to it, so the tree file and every other JSON file escape
// alike.
func encodeReflect(n *Node) []byte {
	Sort(n)
	normalize(n)
	data, err := jsondoc.Marshal(n)
	if err != nil {
		panic(err)
	}
	return data
}

// TestEncodeEscapesAsJSONDoc: the tree's encoder and the one JSON writer
// write HTML characters as themselves and escape control characters,
// U+2028/U+2029 and invalid UTF-8 the same way.
func TestEncodeEscapesAsJSONDoc(t *testing.T) {
	text := "<b>a & b</b> \x00\x01\b\f\n\r\t\x1f\x7f \u2028\u2029 \xff \"q\" \\"
	n := &Node{ID: "r", Title: text, Goal: text, Acceptance: []string{text}, Next: NextExecute, Waiting: text,
		Answers: []Answer{{Question: text, Answer: text}}}
	got := Encode(n.Clone())
	if want := encodeReflect(n); !bytes.Equal(got, want) {
		t.Fatalf("Encode:\n%s\njsondoc.Marshal:\n%s", got, want)
	}
	want := `"title": "<b>a & b</b> \u0000\u0001\b\f\n\r\t\u001f` + "\x7f" + ` \u2028\u2029 \ufffd \"q\" \\"`
	if !bytes.Contains(got, []byte(want)) {
		t.Errorf("Encode's title is not %s:\n%s", want, got)
	}
}

// FuzzEncodeMatchesEncodingJSON: Encode writes the bytes encoding/json
// writes, for any text in any field (control bytes, quotes, HTML
// characters, U+2028, invalid UTF-8), any numbers and any nesting.
func FuzzEncodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "\"q\" \\ / <a>&", "\x00\x01\b\f\n\r\t\x1f\x7f", "é ü 日本 \u2028\u2029 😀", "\xff\xfe bad \xe2\x82", strings.Repeat("x", 300)} {
		f.Add(s, int64(-3), 7, true, uint8(3))
	}
	f.Fuzz(func(t *testing.T, text string, order int64, attempts int, passes bool, shape uint8) {
		var build func(depth int) *Node
		build = func(depth int) *Node {
			n := &Node{ID: "n" + strconv.Itoa(depth), Order: order - int64(depth), Title: text, Goal: text + text,
				Next: text, Passes: passes, Attempts: attempts, MaxAttempts: -attempts, SentBack: !passes}
			for i := 0; i < int(shape%4); i++ {
				n.Acceptance = append(n.Acceptance, text[:len(text)*i/4])
			}
			if depth < int(shape/16%8) {
				for i := 0; i < 1+int(shape%3); i++ {
					n.Children = append(n.Children, build(depth+1))
				}
			}
			return n
		}
		root := build(0)
		want := encodeReflect(root.Clone())
		if got := Encode(root); !bytes.Equal(got, want) {
			t.Fatalf("Encode differs from encoding/json:\n%q\nwant\n%q", got, want)
		}
	})
}

// TestEncodeMatchesEncodingJSONDeep: indents past the encoder's run of
// spaces, and every fixture tree.
func TestEncodeMatchesEncodingJSONDeep(t *testing.T) {
	root := &Node{ID: "r", Title: "t", Next: NextExecute}
	n := root
	for i := 0; i < 300; i++ {
		c := &Node{ID: "c" + strconv.Itoa(i), Title: "t", Next: NextExecute, Acceptance: []string{"a", "b"}}
		n.Children = []*Node{c, {ID: "z", Title: "u", Next: NextDecompose}}
		n = c
	}
	if got, want := Encode(root.Clone()), encodeReflect(root); !bytes.Equal(got, want) {
		t.Fatalf("deep tree: Encode differs from encoding/json")
	}
	for _, data := range fastSeeds(t) {
		full, ps := parseFull(data)
		if len(ps) > 0 {
			continue
		}
		if got, want := Encode(full.Clone()), encodeReflect(full); !bytes.Equal(got, want) {
			t.Fatalf("Encode differs from encoding/json:\n%s\nwant\n%s", got, want)
		}
	}
}
