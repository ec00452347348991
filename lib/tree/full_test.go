package tree

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/schema"
	_ "github.com/treeloop/treeloop/lib/schema/full" // the tests compare the fast path with the full one
)

// TestParseWithoutFullValidator: in a program that does not link the full
// validator, a valid tree still loads (integers spelled 1.0 or 1e0
// included), and a tree the fast path refuses gets one problem naming the
// first thing wrong, or jsonstrict's error for a document that is not JSON.
func TestParseWithoutFullValidator(t *testing.T) {
	defer schema.SetValidator(schema.SetValidator(nil))
	const leaf = `{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":%s,"max_attempts":3,"children":[]}`
	for _, n := range []string{"0", "1.0", "1e0", "-0"} {
		if root, ps := Parse([]byte(strings.Replace(leaf, "%s", n, 1))); ps != nil || root == nil {
			t.Errorf("attempts %s: %v", n, ps)
		}
	}
	tests := []struct{ doc, want string }{
		{strings.Replace(leaf, "%s", "1.5", 1), "schema: node 'root': attempts: not a valid value"},
		{strings.Replace(strings.Replace(leaf, "%s", "0", 1), `"passes":false,`, "", 1), "schema: node 'root': missing passes"},
		{strings.Replace(strings.Replace(leaf, "%s", "0", 1), `"goal":"",`, `"goal":"","colour":"red",`, 1), `schema: node 'root': unknown field "colour"`},
		{`{"id":`, "json: "},
	}
	for _, tt := range tests {
		_, ps := Parse([]byte(tt.doc))
		if len(ps) != 1 || !strings.HasPrefix(ps[0].Layer+": "+ps[0].Message, tt.want) {
			t.Errorf("Parse(%s) = %v, want one problem %q", tt.doc, ps, tt.want)
		}
	}
}
