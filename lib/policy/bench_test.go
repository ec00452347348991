package policy

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
)

// BenchmarkChangesUnhidden measures the check's git part at 50,000 files
// The marks check and the scoped status side by side
// (changesUnhidden), against the two one after the other, interleaved in
// each iteration so that both see the same load on a shared machine.
// Reported: side-by-side-ms/op and one-after-the-other-ms/op.
//
//	go test ./lib/policy -run '^$' -bench ChangesUnhidden -benchtime 30x
func BenchmarkChangesUnhidden(b *testing.B) {
	dir := b.TempDir()
	gitIn(b, dir, "init", "-q", "-b", "runner/r")
	// No gc in the background: the commit of 50,000 loose objects would
	// start one, which would take a core while the clock runs.
	gitIn(b, dir, "config", "gc.auto", "0")
	for i := range 50000 {
		d, f := i/50, i%50
		writeFile(b, filepath.Join(dir, "src", fmt.Sprintf("d%d", d), fmt.Sprintf("f%d.go", f)), fmt.Sprintf("package d%d\n\nconst F%d = %d\n", d, f, f))
	}
	writeFile(b, filepath.Join(dir, "justfile"), "ci:\n    @true\n")
	writeFile(b, filepath.Join(dir, ".runner/state/config.toml"), "")
	gitIn(b, dir, "add", "-A")
	gitIn(b, dir, "commit", "-qm", "base")
	base := gitIn(b, dir, "rev-parse", "HEAD")
	repo, err := git.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	protected := []string{"justfile", "ci/*.sh"}
	scope := Scope(protected)
	var side, serial time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, _, err := changesUnhidden(repo, base, scope, protected); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := unhideProtected(repo, scope, protected); err != nil {
			b.Fatal(err)
		}
		if _, _, err := repo.ChangesSince(base, scope...); err != nil {
			b.Fatal(err)
		}
		side, serial = side+t1.Sub(t0), serial+time.Since(t1)
	}
	b.ReportMetric(float64(side.Microseconds())/1e3/float64(b.N), "side-by-side-ms/op")
	b.ReportMetric(float64(serial.Microseconds())/1e3/float64(b.N), "one-after-the-other-ms/op")
}
