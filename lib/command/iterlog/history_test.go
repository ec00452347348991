package iterlog

import (
	"reflect"
	"testing"
)

func TestDiffStat(t *testing.T) {
	patch := `diff --git a/a.txt b/a.txt
index 1..2 100644
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-old
+new
+more
 same
diff --git a/b.bin b/b.bin
new file mode 100644
index 0000000..1
GIT binary patch
literal 3
Kc${NkU|;|M00aO5

diff --git a/dir/x y.md b/dir/x y.md
deleted file mode 100644
--- a/dir/x y.md
+++ /dev/null
@@ -1 +0,0 @@
---- a line that looks like a header
`
	want := []FileStat{{Path: "a.txt", Added: 2, Deleted: 1}, {Path: "b.bin", Binary: true}, {Path: "dir/x y.md", Deleted: 1}}
	if got := diffStat([]byte(patch)); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\n", 2); got != "b\nc\n" {
		t.Errorf("tail: %q", got)
	}
}
