package treeedit

import (
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/tree"
)

const doc = `{"id":"root","order":0,"title":"r","goal":"g","acceptance":[],"next":"decompose","passes":false,"attempts":0,"max_attempts":3,"children":[
 {"id":"root.1","order":1,"title":"a","goal":"g","acceptance":[],"next":"decompose","passes":false,"attempts":0,"max_attempts":3,"children":[
  {"id":"root.1.1","order":1,"title":"aa","goal":"g","acceptance":[],"next":"execute","passes":false,"attempts":1,"max_attempts":3,"children":[]}]},
 {"id":"root.2","order":2,"title":"b","goal":"g","acceptance":[],"next":"execute","passes":false,"attempts":3,"max_attempts":3,"children":[]}]}`

// locate gives the path of a node in the document, dotted ids included,
// and sjson edits exactly that node.
func TestLocateEditsTheNode(t *testing.T) {
	root, ps := tree.Load([]byte(doc))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	for id, want := range map[string]string{"root": "", "root.1": "children.0", "root.1.1": "children.0.children.0", "root.2": "children.1"} {
		n, at := locate(root, id)
		if n == nil || n.ID != id || at != want {
			t.Errorf("locate(%s) = %v %q, want %q", id, n, at, want)
		}
		if got := gjson.Get(doc, field(at, "id")).String(); got != id {
			t.Errorf("%s: gjson at %q reads %q", id, field(at, "id"), got)
		}
	}
	_, at := locate(root, "root.1.1")
	out, err := sjson.Set(doc, field(at, "attempts"), 0)
	if err != nil {
		t.Fatal(err)
	}
	next, ps := tree.Load([]byte(out))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if n, _ := tree.Find(next, "root.1.1"); n.Attempts != 0 {
		t.Fatalf("attempts %d after the edit", n.Attempts)
	}
	if n, _ := tree.Find(next, "root.2"); n.Attempts != 3 {
		t.Fatal("a sibling changed")
	}
	if n, _ := locate(root, "nope"); n != nil {
		t.Fatal("found a node that is not there")
	}
}
