package wordshelper

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/tree"
)

// TestWordsOrHelper: a program without the full validator words a
// refused document through tree-validate beside its executable, every
// violation as the validator words it; with no helper there, it cannot
// (ok false), and it never looks on $PATH.
func TestWordsOrHelper(t *testing.T) {
	if schema.Linked() {
		t.Fatal("this test binary links the full validator: the helper is never asked")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(filepath.Dir(exe), schema.WordsHelper)
	v, err := jsonstrict.Decode([]byte(`{"status":"done","summary":"","children":[],"extra":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// None beside the executable: one on $PATH is not asked.
	os.Remove(helper)
	path := t.TempDir()
	build(t, filepath.Join(path, schema.WordsHelper))
	t.Setenv("PATH", path+string(os.PathListSeparator)+os.Getenv("PATH"))
	if vs, ok := schema.WordsOrHelper(schema.AgentOutput, v); ok || vs != nil {
		t.Errorf("no helper beside the executable: %v, %v", vs, ok)
	}
	build(t, helper)
	defer os.Remove(helper)
	vs, ok := schema.WordsOrHelper(schema.AgentOutput, v)
	want := []schema.Violation{
		{Pointer: "", Message: "additionalProperties 'extra' not allowed"},
		{Pointer: "/summary", Message: "length must be >= 1, but got 0"},
	}
	if !ok || !slices.Equal(vs, want) {
		t.Errorf("WordsOrHelper = %q, %v; want %q", vs, ok, want)
	}
}

// TestLoadEdited: without the full validator, a tree a session edited
// that the schema refuses gets every schema problem at its node, as the
// validator words them, through the helper; with no helper, the one
// problem Load gives.
func TestLoadEdited(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(filepath.Dir(exe), schema.WordsHelper)
	doc := []byte(`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"decompose","passes":false,"attempts":0,"max_attempts":3,"children":[` +
		`{"id":"a","order":1,"title":"","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":3,"children":[],"color":"red"}]}`)
	os.Remove(helper)
	_, plain := tree.Load(doc)
	if root, ps := tree.LoadEdited(doc); root != nil || len(ps) != 1 || ps.Error() != plain.Error() {
		t.Errorf("no helper: %v, %q; want Load's %q", root, ps, plain)
	}
	build(t, helper)
	defer os.Remove(helper)
	root, ps := tree.LoadEdited(doc)
	want := "root/a: additionalProperties 'color' not allowed; root/a: title: length must be >= 1, but got 0"
	if root != nil || ps.Error() != want {
		t.Errorf("LoadEdited = %v, %q; want %q", root, ps.Error(), want)
	}
	valid := []byte(`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":3,"children":[]}`)
	if root, ps := tree.LoadEdited(valid); root == nil || len(ps) != 0 {
		t.Errorf("a valid tree: %v, %q", root, ps)
	}
}

// build builds tree-validate, the helper, as a user does, at out.
func build(t *testing.T, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "github.com/treeloop/treeloop/cmd/tree-validate")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build tree-validate: %v\n%s", err, b)
	}
}
