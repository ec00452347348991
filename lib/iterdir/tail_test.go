package iterdir

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/treeloop/treeloop/lib/layout"
)

// A run directory as the runner leaves it: iterations 1..n, some without
// meta.json (running or unfinished), some set aside by a recovery, a few
// files beside them; the tail functions give what the plain listing gives,
// for a hint as run_state.json gives it (the last iteration, one
// behind it while an iteration is allocated) or ahead of it.
func TestTailMatchesListing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 60 {
		runDir := t.TempDir()
		n := rng.IntN(40)
		for k := 1; k <= n; k++ {
			if rng.IntN(10) == 0 {
				continue // a gap
			}
			dir := filepath.Join(runDir, layout.IterName(k))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if k == n && rng.IntN(2) == 0 || rng.IntN(15) == 0 {
				continue // no meta.json
			}
			data, _ := json.Marshal(Meta{Iteration: k, NodeID: "n", Summary: "s"})
			if err := os.WriteFile(filepath.Join(dir, MetaFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(2) == 0 {
			if err := os.MkdirAll(filepath.Join(runDir, layout.IterName(n+1)+".discarded"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(runDir, "seal-index"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		iters, err := Iters(runDir)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if len(iters) > 0 {
			want = iters[len(iters)-1]
		}
		wantLast, err := Last(runDir)
		if err != nil {
			t.Fatal(err)
		}
		rowCounts := []int{-1, 0, 1, 3, 10, 50} // 0 and below: all of them
		wantRows := make([][]Row, len(rowCounts))
		for i, rows := range rowCounts {
			if wantRows[i], err = History(runDir, rows); err != nil {
				t.Fatal(err)
			}
		}
		// A hint far above (a run_state.json not as the runner left it) costs
		// a run of probes, then the listing, never a walk down from it.
		for _, hint := range []int{0, want - 1, want, want + 3, n + 1, want + 500, 1 << 27} {
			got, err := LastIter(runDir, hint)
			if err != nil || got != want {
				t.Fatalf("round %d: LastIter(hint %d) = %d, %v; Iters' last is %d", round, hint, got, err, want)
			}
			gotLast, err := LastFrom(runDir, hint)
			if err != nil || !reflect.DeepEqual(gotLast, wantLast) {
				t.Fatalf("round %d: LastFrom(hint %d) = %+v, %v; Last = %+v", round, hint, gotLast, err, wantLast)
			}
			for i, rows := range rowCounts {
				gotRows, err := HistoryTail(runDir, hint, rows)
				if err != nil || !reflect.DeepEqual(gotRows, wantRows[i]) {
					t.Fatalf("round %d: HistoryTail(hint %d, %d) = %v, %v; History = %v", round, hint, rows, gotRows, err, wantRows[i])
				}
			}
		}
	}
}
