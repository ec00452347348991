package testscripts

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// costlyScripts are the scripts that take the longest (`just
// test-profile`), the longest first. They start before all the others, so
// that the suite does not end with one of them running alone on a machine
// whose other cores have nothing left to do. A name here that is no
// script fails TestCostlyScriptsExist; a script missing here only starts
// later.
var costlyScripts = []string{
	"readme-eval",
	"agent-opencode",
	"loop-agents-bwrap",
	"loop-hostile-agents",
	"evidence-go",
	"loop-pause-outage",
	"agent-gemini",
	"readme-bootstrap",
	"agent-opencode-stalls",
	"readme-install",
	"agent-config-refused",
	"agent-codex",
	"ecosystem-go",
	"ecosystem-jest",
	"agent-claude",
	"readme-cli-gemini",
	"readme-cli-opencode",
	"evidence-workspaces",
	"loop-hostile-trust-go",
}

// scriptOrder sorts script file names so that the costly scripts come
// first, in costlyScripts' order, and the rest after them by name.
func scriptOrder(files []string) []string {
	rank := func(f string) int {
		if i := slices.Index(costlyScripts, strings.TrimSuffix(filepath.Base(f), ".txtar")); i >= 0 {
			return i
		}
		return len(costlyScripts)
	}
	out := slices.Clone(files)
	slices.SortStableFunc(out, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return out
}

// scriptsAtOnce is how many scripts run at a time: go test's -parallel
// (its default, GOMAXPROCS, when the flag is not given).
func scriptsAtOnce() int {
	if f := flag.Lookup("test.parallel"); f != nil {
		if n, err := strconv.Atoi(f.Value.String()); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// inOrder runs testscript's subtests in the order testscript.RunT names
// them, `width` at a time. go test's own parallel subtests start in an
// order of the runtime's choosing (the reverse of their creation, as it
// happens), so the costly scripts, given first, would start last. Here
// each is a subtest started by t.Run from one of width goroutines, which
// testing allows; testscript's call to Parallel is then a no-op.
type inOrder struct {
	*testing.T
	jobs []scriptJob
}

type scriptJob struct {
	name string
	f    func(testscript.T)
}

// Run queues the subtest; runAll starts it.
func (q *inOrder) Run(name string, f func(testscript.T)) {
	q.jobs = append(q.jobs, scriptJob{name, f})
}

// Parallel: the scripts already run side by side (runAll).
func (q *inOrder) Parallel() {}

// Verbose: testing's -v.
func (q *inOrder) Verbose() bool { return testing.Verbose() }

// runAll runs the queued subtests in their order, width at a time, and
// returns when all have ended.
func (q *inOrder) runAll(width int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(width, len(q.jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(q.jobs) {
					return
				}
				job := q.jobs[i]
				q.T.Run(job.name, func(t *testing.T) { job.f(&inOrder{T: t}) })
			}
		}()
	}
	wg.Wait()
}

// runScripts is testscript.Run with the scripts started in p.Files' order.
func runScripts(t *testing.T, p testscript.Params) {
	q := &inOrder{T: t}
	testscript.RunT(q, p)
	q.runAll(scriptsAtOnce())
}

// TestCostlyScriptsExist holds costlyScripts to the scripts on disk.
func TestCostlyScriptsExist(t *testing.T) {
	t.Parallel()
	for i, name := range costlyScripts {
		if _, err := os.Stat(name + ".txtar"); err != nil {
			t.Errorf("costly script %s: %v", name, err)
		}
		if slices.Index(costlyScripts, name) != i {
			t.Errorf("costly script %s is named twice", name)
		}
	}
}

func TestScriptOrder(t *testing.T) {
	t.Parallel()
	got := scriptOrder([]string{"b.txtar", costlyScripts[1] + ".txtar", "a.txtar", costlyScripts[0] + ".txtar"})
	want := []string{costlyScripts[0] + ".txtar", costlyScripts[1] + ".txtar", "a.txtar", "b.txtar"}
	if !slices.Equal(got, want) {
		t.Errorf("scriptOrder = %q, want %q", got, want)
	}
}

// TestInOrder: one at a time the subtests start in the order queued;
// three at a time, the first three run at once (each waits for the
// others), never more than three do, and all run.
func TestInOrder(t *testing.T) {
	t.Parallel()
	for _, width := range []int{1, 3} {
		var mu sync.Mutex
		var started []string
		running, most := 0, 0
		all := make(chan struct{}) // closed once width run at once
		q := &inOrder{T: t}
		for i := range 9 {
			name := fmt.Sprintf("w%d-job%d", width, i)
			q.Run(name, func(st testscript.T) {
				mu.Lock()
				started = append(started, name)
				running++
				most = max(most, running)
				if running == width && most == width && len(started) == width {
					close(all)
				}
				mu.Unlock()
				if i < width {
					select {
					case <-all:
					case <-time.After(time.Minute):
						st.Fatal("the first subtests never ran at once")
					}
				}
				mu.Lock()
				running--
				mu.Unlock()
			})
		}
		q.runAll(width)
		if len(started) != 9 || most != width {
			t.Errorf("width %d: %d started, at most %d at once", width, len(started), most)
		}
		if width == 1 && !slices.IsSorted(started) {
			t.Errorf("one at a time, started %q: want the order queued", started)
		}
	}
}
