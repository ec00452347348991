package tree

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
			// path (issue 16): it must take every valid tree within its
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
// have only the fast path for a valid tree (issue 16); invalid trees fall
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
