package iterlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/layout"
)

// BenchmarkRecoverNothing is `iter-log recover` at the start of every
// step, with nothing to recover (the last iteration committed), as the run
// grows: it lists the run's directory to find the last iteration, so it
// reads every earlier iteration's name (one directory read, no stat of
// each).
func BenchmarkRecoverNothing(b *testing.B) {
	for _, n := range []int{50, 1000, 5000} {
		root := b.TempDir()
		run := filepath.Join(root, filepath.FromSlash(layout.Iterations), "run-b")
		for k := 1; k <= n; k++ {
			if err := os.MkdirAll(filepath.Join(run, layout.IterName(k)), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		meta := fmt.Sprintf(`{"iteration": %d, "commit": "0123456789012345678901234567890123456789"}`, n)
		if err := os.WriteFile(filepath.Join(run, layout.IterName(n), "meta.json"), []byte(meta), 0o644); err != nil {
			b.Fatal(err)
		}
		state := filepath.Join(root, filepath.FromSlash(layout.RunState))
		if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
			b.Fatal(err)
		}
		rs := fmt.Sprintf(`{"run_id": "run-b", "next_iter": %d, "last_status": "done", "last_summary": "", "last_guard": "pass"}`, n+1)
		if err := os.WriteFile(state, []byte(rs), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("iterations=%d", n), func(b *testing.B) {
			for b.Loop() {
				var out bytes.Buffer
				if code := Main([]string{"-C", root, "recover"}, strings.NewReader(""), &out, io.Discard); code != 0 || out.String() != "action=none\n" {
					b.Fatalf("exit %d: %q", code, out.String())
				}
			}
		})
	}
}
