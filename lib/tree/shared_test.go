package tree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// sharingLoads turns shared loads on for the test, and counts the
// documents parsed (loadPlain's calls) in *parsed.
func sharingLoads(t *testing.T) *atomic.Int64 {
	t.Helper()
	parsed := new(atomic.Int64)
	was := loadPlain
	loadPlain = func(data []byte) (*Node, Problems) {
		parsed.Add(1)
		return was(data)
	}
	ShareLoads()
	t.Cleanup(func() {
		sharing.Store(false)
		loadPlain = was
		// TryLock: a test that found the lock held has failed already.
		if lastLoad.TryLock() {
			lastLoad.load = nil
			lastLoad.Unlock()
		}
	})
	return parsed
}

// sharedDocuments are the fixtures and the fuzz corpus, and for each
// valid tree among them the tree changed (renamed, retitled, given a
// child, broken by a bad id or a title too long): valid and invalid
// documents alike.
func sharedDocuments(t *testing.T) [][]byte {
	var docs [][]byte
	for _, data := range fastSeeds(t) {
		docs = append(docs, data)
		root, ps := loadDocument(data)
		if root == nil || len(ps) > 0 {
			continue
		}
		for _, change := range []func(n *Node){
			func(n *Node) { n.Title += " again" },
			func(n *Node) {
				n.Children = append(n.Children, &Node{ID: n.ID + "-x", Title: "x", Next: NextExecute, MaxAttempts: 1})
			},
			func(n *Node) { n.ID = "no spaces" },
			func(n *Node) { n.Title = string(bytes.Repeat([]byte("t"), nodeTitleMaxLength+1)) },
			func(n *Node) { n.Attempts, n.MaxAttempts = 3, 2 },
		} {
			n := root.Clone()
			change(n)
			docs = append(docs, Encode(n))
		}
	}
	return docs
}

// TestDifferentialSharedLoads: with shared loads, Load gives what the
// plain load gives (reflect.DeepEqual: the same tree, nil and empty
// slices alike, and the same problems) for random sequences of the
// documents, each document repeated, and a tree changed by its caller
// changes no later load's answer; a document loaded again right after is
// not parsed again.
func TestDifferentialSharedLoads(t *testing.T) {
	docs := sharedDocuments(t)
	if len(docs) < 20 {
		t.Fatalf("only %d documents", len(docs))
	}
	parsed := sharingLoads(t)
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := 2000
	if testing.Short() {
		rounds = 400
	}
	var prev []byte
	hits := 0
	for range rounds {
		data := docs[rng.IntN(len(docs))]
		if rng.IntN(2) == 0 && prev != nil {
			data = prev // the same document again: the case shared loads serve
		}
		data = bytes.Clone(data)
		before := parsed.Load()
		got, gotPs := Load(data)
		if parsed.Load() == before {
			hits++
			if !bytes.Equal(data, prev) {
				t.Fatalf("a document unlike the last one was not parsed:\n%.80q", data)
			}
		} else if bytes.Equal(data, prev) {
			t.Fatalf("the last document loaded was parsed again:\n%.80q", data)
		}
		want, wantPs := loadDocument(data)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPs, wantPs) {
			t.Fatalf("shared load of %.80q:\n got %+v %v\nwant %+v %v", data, got, gotPs, want, wantPs)
		}
		if got != nil {
			// The caller's own tree: changing it changes nothing shared.
			got.Title, got.Attempts = "changed by its caller", got.Attempts+1
			got.Children = append(got.Children, &Node{ID: "added"})
			if len(got.Acceptance) > 0 {
				got.Acceptance[0] = "changed"
			}
			if len(got.Children) > 1 {
				got.Children[0].ID = "changed"
			}
		}
		// The caller's bytes are its own: a mapped file is unmapped
		// once loaded.
		prev = bytes.Clone(data)
		clear(data)
	}
	if hits < rounds/4 {
		t.Fatalf("%d of %d loads shared", hits, rounds)
	}
}

// TestSharedLoadsSideBySide: loads of one document side by side parse it
// once, each caller getting a tree of its own equal to the plain load's;
// run with -race.
func TestSharedLoadsSideBySide(t *testing.T) {
	docs := sharedDocuments(t)
	data := docs[0]
	for _, d := range docs {
		if r, ps := loadDocument(d); r != nil && len(ps) == 0 && len(d) > len(data) {
			data = d
		}
	}
	want, wantPs := loadDocument(data)
	parsed := sharingLoads(t)
	const loaders = 8
	trees := make([]*Node, loaders)
	var wg sync.WaitGroup
	for i := range loaders {
		wg.Go(func() {
			root, ps := Load(data)
			if !reflect.DeepEqual(root, want) || !reflect.DeepEqual(ps, wantPs) {
				t.Errorf("loader %d: %+v %v", i, root, ps)
			}
			trees[i] = root
			root.Title = fmt.Sprint("loader ", i) // its own to change
		})
	}
	wg.Wait()
	if n := parsed.Load(); n != 1 {
		t.Fatalf("%d loads side by side parsed the document %d times", loaders, n)
	}
	for i := range trees {
		for j := range i {
			if trees[i] == trees[j] {
				t.Fatalf("loaders %d and %d got the same tree", i, j)
			}
		}
	}
}

// TestSharedLoadPanics: a load that panics (a mapped file cut short
// under it) shares nothing: the next load of the document loads it.
func TestSharedLoadPanics(t *testing.T) {
	data := sharedDocuments(t)[0]
	want, wantPs := loadDocument(data)
	sharingLoads(t)
	plain := loadPlain
	loadPlain = func([]byte) (*Node, Problems) { panic("fault") }
	func() {
		defer func() {
			if r := recover(); r != "fault" {
				t.Fatalf("recovered %v, want the load's panic", r)
			}
		}()
		Load(data)
	}()
	loadPlain = plain
	if got, ps := Load(data); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(ps, wantPs) {
		t.Fatalf("after a panic: %+v %v, want %+v %v", got, ps, want, wantPs)
	}
}

// TestDifferentialVerifyShares: a tree Verify checked is, with shared
// loads, what the next Load of its encoding gives (reflect.DeepEqual with
// the plain load), whatever the change made to it (verifyChanges), and
// that load parses nothing when the tree is within the fast path's
// bounds and its strings valid UTF-8; a change to the tree after Verify
// changes nothing the load gives.
func TestDifferentialVerifyShares(t *testing.T) {
	parsed := sharingLoads(t)
	for name := range withinBoundsChanges {
		if _, ok := verifyChanges()[name]; !ok {
			t.Fatalf("withinBoundsChanges names %q, which verifyChanges does not make", name)
		}
	}
	shared := 0
	for _, data := range fastSeeds(t) {
		root, ps := loadDocument(data)
		if root == nil || len(ps) > 0 {
			continue
		}
		for name, change := range verifyChanges() {
			n := root.Clone()
			change(n)
			enc := Encode(n)
			want, wantPs := loadDocument(enc)
			lastLoad.Lock()
			lastLoad.load = nil
			lastLoad.Unlock()
			before := parsed.Load()
			Verify(n, enc)
			if parsed.Load() != before && withinBoundsChanges[name] {
				t.Errorf("%s of %.60q: Verify parsed a tree within the fast path's bounds", name, data)
			}
			n.Title, n.Children = "changed after Verify", nil
			before = parsed.Load()
			got, gotPs := Load(enc)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPs, wantPs) {
				t.Fatalf("%s of %.60q: after Verify, Load = %+v %v, want %+v %v", name, data, got, gotPs, want, wantPs)
			}
			if parsed.Load() == before {
				shared++
			} else if name == "unchanged" || name == "answers empty" || name == "evidence set" {
				t.Errorf("%s of %.60q: the tree Verify checked was parsed again", name, data)
			}
		}
	}
	if shared == 0 {
		t.Fatal("no tree Verify checked was shared")
	}
}

// withinBoundsChanges are the verifyChanges that leave a tree within
// the fast path's bounds, at them for some: Verify checks such a tree
// without parsing it.
var withinBoundsChanges = map[string]bool{
	"unchanged": true, "answers empty": true, "evidence set": true, "answered": true, "waiting": true,
	"title at its bound": true, "order at its bound": true, "order at its top": true,
	"criteria at their bound": true, "attempts at their bound": true, "nested to the bound": true,
}

// TestSharedLoadOfTruncatedMapping: a tree file cut short while mapped
// (fsutil.MapFile) faults in the load, a panic its caller reports, and
// leaves shared loads free for the next load.
func TestSharedLoadOfTruncatedMapping(t *testing.T) {
	sharingLoads(t)
	path := filepath.Join(t.TempDir(), "tree.json")
	doc := sharedDocuments(t)[0]
	big := append(bytes.Repeat([]byte(" "), 4*fsutil.MapThreshold), doc...)
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		data, release, err := fsutil.MapFile(path, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("loading a truncated mapping did not fault")
			}
		}()
		Load(data)
	}()
	if !lastLoad.TryLock() {
		t.Fatal("the fault left the shared loads locked: every later load would wait for ever")
	}
	lastLoad.Unlock()
	want, wantPs := loadDocument(doc)
	if got, ps := Load(doc); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(ps, wantPs) {
		t.Fatalf("after the fault: %+v %v", got, ps)
	}
}
