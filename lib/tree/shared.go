package tree

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
)

// Shared loads: a process that runs several commands' cores as jobs (the
// step's Go halves, step-begin and step-end: tree-validate, tree-select,
// iter-log begin and context-write; tree-update, iter-log end and the
// run record's refresh) has each read tree.json and load it. With
// ShareLoads on, Load keeps the last document it loaded and what it
// found, and loads the very same bytes again (bytes.Equal) as a copy of
// that: the same answer (Load is a pure function of the bytes), without
// parsing them again. A load of the same bytes while the first is under
// way waits for it. Each caller gets a tree of its own (Clone), which it
// may change. The plain path is loadDocument; TestDifferentialSharedLoads
// holds the two to the same answers (bench/fastpaths.md).

// sharing is whether Load shares its loads (ShareLoads).
var sharing atomic.Bool

// ShareLoads makes Load, in this process from now on, load a document
// equal to the last one loaded as a copy of that load.
func ShareLoads() { sharing.Store(true) }

// sharedLoad is one document Load loaded, or is loading.
type sharedLoad struct {
	data []byte        // a copy of the document
	done chan struct{} // closed once the load ended
	ok   bool          // the load ended without a panic: root and ps are its answer
	root *Node         // held here, handed out as clones
	ps   Problems
}

// lastLoad is the last document Load began to load while sharing.
var lastLoad struct {
	sync.Mutex
	load *sharedLoad
}

// loadPlain is the load a shared load stands for (a variable for the
// test that panics in it).
var loadPlain = loadDocument

// sharedLoadOf is Load with ShareLoads on.
func sharedLoadOf(data []byte) (*Node, Problems) {
	// Copied before the lock is taken: a mapped file cut short under the
	// load (fsutil.MapFile) faults here, a panic in the caller's load with
	// no lock held.
	own := bytes.Clone(data)
	lastLoad.Lock()
	if l := lastLoad.load; l != nil && bytes.Equal(l.data, own) {
		lastLoad.Unlock()
		<-l.done
		if l.ok {
			return l.root.Clone(), slices.Clone(l.ps)
		}
		return loadPlain(own)
	}
	l := &sharedLoad{data: own, done: make(chan struct{})}
	lastLoad.load = l
	lastLoad.Unlock()
	// A panic in the load leaves it not ok: a caller waiting on it loads
	// for itself.
	defer close(l.done)
	root, ps := loadPlain(own)
	l.root, l.ps, l.ok = root.Clone(), slices.Clone(ps), true
	return root, ps
}

// share makes root and ps, a copy of them, the answer of the last load:
// Load's answer for data (Verify).
func share(data []byte, root *Node, ps Problems) {
	l := &sharedLoad{data: bytes.Clone(data), done: make(chan struct{}), ok: true, root: asLoaded(root.Clone()), ps: slices.Clone(ps)}
	close(l.done)
	lastLoad.Lock()
	lastLoad.load = l
	lastLoad.Unlock()
}

// asLoaded is n as the load of its encoding builds it: no answers is a
// nil list (Encode leaves the key out).
func asLoaded(n *Node) *Node {
	if len(n.Answers) == 0 {
		n.Answers = nil
	}
	for _, c := range n.Children {
		asLoaded(c)
	}
	return n
}
