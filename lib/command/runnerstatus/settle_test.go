package runnerstatus

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

// stateRepo is a repository's .runner/ with a one-node tree and a run
// state, and the tree's bytes.
func stateRepo(t *testing.T) (root string, treeData []byte) {
	t.Helper()
	root = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, layout.State), 0o755); err != nil {
		t.Fatal(err)
	}
	treeData = tree.Encode(&tree.Node{ID: "root", Title: "G", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{}})
	if err := os.WriteFile(filepath.Join(root, layout.Tree), treeData, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runstate.Save(filepath.Join(root, layout.RunState), runstate.New("r1")); err != nil {
		t.Fatal(err)
	}
	return root, treeData
}

// holdLock holds .runner/lock as a runner does, for the test.
func holdLock(t *testing.T, root string) {
	t.Helper()
	p := filepath.Join(root, layout.Lock)
	release, err := runlock.Take(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := runlock.WriteHolder(p, 42, "runner-loop"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// onSettling runs f, in a goroutine of its own, once readRepo waits for a
// change; the test ends once f has returned (a write of f's that readRepo
// did not wait for, WriteAtomic's sync of the directory after its rename,
// would otherwise outlive the test and its directory).
func onSettling(t *testing.T, f func()) {
	t.Helper()
	var running sync.WaitGroup
	settling = func() {
		running.Add(1)
		go func() {
			defer running.Done()
			f()
		}()
	}
	t.Cleanup(func() {
		settling = nil
		running.Wait()
	})
}

// A live run's tree caught missing, as git's checkout leaves it between
// removing and writing it, is read once a concurrent writer has renamed
// it in, not reported as a repository to set up.
func TestReadRepoWaitsForTheTreeRenamedIn(t *testing.T) {
	root, data := stateRepo(t)
	holdLock(t, root)
	path := filepath.Join(root, layout.Tree)
	os.Remove(path)
	onSettling(t, func() {
		if err := fsutil.WriteAtomic(path, data, 0o644); err != nil {
			t.Error(err)
		}
	})
	rp, err := readRepo(root)
	if err != nil || rp.Tree == nil || rp.Tree.ID != "root" {
		t.Fatalf("readRepo = %v, %v", rp, err)
	}
}

// A tree written in place in two pieces (truncated, then half, then the
// rest) is read again at each change until it parses.
func TestReadRepoWaitsForATreeWrittenInPieces(t *testing.T) {
	root, data := stateRepo(t)
	holdLock(t, root)
	path := filepath.Join(root, layout.Tree)
	os.WriteFile(path, data[:len(data)/3], 0o644)
	onSettling(t, func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		f.Write(data[:len(data)/2])
		f.Sync()
		f.Write(data[len(data)/2:])
	})
	if rp, err := readRepo(root); err != nil || rp.Tree == nil {
		t.Fatalf("readRepo = %v, %v", rp, err)
	}
}

// With no runner at work, a missing tree is told at once with the advice
// to set the repository up; readRepo waits for nothing.
func TestReadRepoWithoutARunner(t *testing.T) {
	root, _ := stateRepo(t)
	os.Remove(filepath.Join(root, layout.Tree))
	settling = func() { t.Error("readRepo waited with no runner at work") }
	t.Cleanup(func() { settling = nil })
	if _, err := readRepo(root); err == nil || !strings.HasSuffix(err.Error(), "(run runner-init first)") {
		t.Fatalf("readRepo: %v", err)
	}
}

// A tree that stays unreadable while the runner works is told after a
// bounded number of reads, each on a change, as the state of a live run:
// the holder named, runner-init not advised.
func TestReadRepoGivesUpAfterItsReads(t *testing.T) {
	root, _ := stateRepo(t)
	holdLock(t, root)
	os.Remove(filepath.Join(root, layout.Tree))
	done := make(chan struct{})
	defer close(done) // before onSettling's cleanup waits for the writer
	onSettling(t, func() {
		// Changes that never bring the tree back: each wakes a read.
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			os.WriteFile(filepath.Join(root, layout.State, "other.txt"), []byte{byte(i)}, 0o644)
		}
	})
	_, err := readRepo(root)
	if err == nil || strings.Contains(err.Error(), "runner-init") ||
		!strings.Contains(err.Error(), "read .runner/state/tree.json: ") ||
		!strings.HasSuffix(err.Error(), ", while a runner works here (pid=42 command=runner-loop) and rewrites it: run runner-status again") {
		t.Fatalf("readRepo: %v", err)
	}
}
