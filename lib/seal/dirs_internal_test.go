package seal

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nopStore is a Store that keeps nothing and says so.
type nopStore struct{}

func (nopStore) Put(paths []string) ([]string, error) { return make([]string, len(paths)), nil }
func (nopStore) Get(string) ([]byte, bool, error)     { return nil, false, nil }

// changedAt is the latest change time of paths (lstat's ctime): a test's
// clock is set from it, never from the wall clock, so that a busy machine
// that takes longer than RacyWindow between a write and the seal does
// not move a path out of the window the test puts it in.
func changedAt(t *testing.T, paths ...string) time.Time {
	t.Helper()
	var latest time.Time
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if c := time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec); c.After(latest) {
			latest = c
		}
	}
	return latest
}

// A directory changed within RacyWindow of the seal is listed again by
// Restore whatever its metadata says (a change in the same clock tick
// could keep it), and is not indexed; past the window it may be taken as
// unchanged.
func TestListedAsNotWithinRacyWindow(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "0001", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		shift time.Duration
		want  bool
	}{{0, false}, {RacyWindow / 2, false}, {time.Second, true}} {
		at := changedAt(t, filepath.Join(root, "0001"), filepath.Join(root, "0001", "sub")).Add(tt.shift)
		ix := Index{Rel: "seal-index", Store: nopStore{}, Settled: func(string) bool { return true },
			SettledDir: func(string) bool { return true }, Now: func() time.Time { return at }}
		s, err := TakeIndexed(root, nil, ix)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"0001", "0001/sub"} {
			if got := s.files[d].listedAs; got != tt.want {
				t.Errorf("clock +%v: %s listedAs = %v, want %v", tt.shift, d, got, tt.want)
			}
		}
		_, indexed := readIndex(filepath.Join(root, "seal-index"))["0001"]
		if indexed != tt.want {
			t.Errorf("clock +%v: 0001 indexed = %v, want %v", tt.shift, indexed, tt.want)
		}
	}
}

// readIndexLines is the index reader as it was written first (a scanner,
// strings.SplitN, strconv.ParseInt): parseIndex is held to it.
func readIndexLines(data []byte) map[string]indexed {
	out := map[string]indexed{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != indexHeader && sc.Text() != indexHeaderDirs {
		return out
	}
	dirs := sc.Text() == indexHeaderDirs
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 8)
		if len(f) != 8 || f[0] == "" || f[7] == "" || f[0] == dirID && !dirs {
			return map[string]indexed{}
		}
		var n [6]int64
		for i := range n {
			v, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return map[string]indexed{}
			}
			n[i] = v
		}
		out[f[7]] = indexed{id: f[0], fp: fingerprint{size: n[0], mode: uint32(n[1]), mtime: n[2], ctime: n[3], ino: uint64(n[4])}, at: n[5]}
	}
	return out
}

// TestDifferentialParseIndex: parseIndex reads what formatIndex writes,
// and agrees with readIndexLines on indexes written and on malformed
// ones (headers, field counts, numbers at and past int64's bounds, signs,
// empty fields and lines, carriage returns, tabs in a path).
func TestDifferentialParseIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		entries := map[string]indexed{}
		for i := range rng.IntN(30) {
			e := indexed{id: fmt.Sprintf("%040x", rng.Uint64()), at: rng.Int64(),
				fp: fingerprint{size: rng.Int64N(1 << 40), mode: rng.Uint32(), mtime: rng.Int64() - rng.Int64(), ctime: rng.Int64(), ino: rng.Uint64() >> 1}}
			if rng.IntN(4) == 0 {
				e.id = dirID
			}
			entries[fmt.Sprintf("%04d/f %d", rng.IntN(100), i)] = e
		}
		data := formatIndex(entries)
		if got := parseIndex(data); !maps.Equal(got, entries) {
			t.Fatalf("parseIndex(formatIndex(%v)) = %v", entries, got)
		}
		if got, want := parseIndex(data), readIndexLines(data); !maps.Equal(got, want) {
			t.Fatalf("%q: parseIndex %v, readIndexLines %v", data, got, want)
		}
	}
	line := "abc\t1\t420\t5\t6\t7\t8\t0001/f"
	for _, in := range []string{
		"", "\n", indexHeader, indexHeader + "\n", indexHeaderDirs + "\n", "treeloop seal index v3\n" + line + "\n",
		indexHeader + "\n" + line, indexHeader + "\n" + line + "\n", indexHeader + "\r\n" + line + "\r\n",
		indexHeader + "\n" + line + "\n\n", indexHeader + "\n\n" + line + "\n",
		indexHeader + "\ndir\t1\t2\t3\t4\t5\t6\t0001\n", indexHeaderDirs + "\ndir\t1\t2\t3\t4\t5\t6\t0001\n",
		indexHeader + "\n\t1\t420\t5\t6\t7\t8\t0001/f\n", indexHeader + "\nabc\t1\t420\t5\t6\t7\t8\t\n",
		indexHeader + "\nabc\t1\t420\t5\t6\t7\t0001/f\n", indexHeader + "\nabc\t1\t420\t5\t6\t7\t8\t0001/a\tb\n",
		indexHeader + "\nabc\t9223372036854775807\t420\t-9223372036854775808\t6\t7\t8\tf\n",
		indexHeader + "\nabc\t9223372036854775808\t420\t5\t6\t7\t8\tf\n",
		indexHeader + "\nabc\t1\t420\t-9223372036854775809\t6\t7\t8\tf\n",
		indexHeader + "\nabc\t+1\t420\t-0\t6\t7\t8\tf\n", indexHeader + "\nabc\t1\t4x0\t5\t6\t7\t8\tf\n",
		indexHeader + "\nabc\t\t420\t5\t6\t7\t8\tf\n", indexHeader + "\nabc\t-\t420\t5\t6\t7\t8\tf\n",
		indexHeader + "\nabc\t1\t420\t5\t6\t7\t8\tf\nabc\t2\t420\t5\t6\t7\t8\tf\n",
	} {
		if got, want := parseIndex([]byte(in)), readIndexLines([]byte(in)); !maps.Equal(got, want) {
			t.Errorf("%q: parseIndex %v, readIndexLines %v", in, got, want)
		}
	}
}

// countStore is a Store that hands out an id for each file it is given.
type countStore struct{ n int }

func (c *countStore) Put(paths []string) ([]string, error) {
	ids := make([]string, len(paths))
	for i := range paths {
		c.n++
		ids[i] = fmt.Sprintf("id%d", c.n)
	}
	return ids, nil
}
func (*countStore) Get(string) ([]byte, bool, error) { return nil, false, nil }

// A file changed within RacyWindow of the seal, by its change time or its
// modification time, is read and sealed by its bytes but not indexed (a
// change in the same clock tick could keep its fingerprint); past the
// window by both it is indexed with its store id. A modification time set
// back (which sets the change time to now) or set ahead keeps it out too.
func TestIndexedNotWithinRacyWindow(t *testing.T) {
	for _, tt := range []struct {
		shift time.Duration
		mtime time.Duration // the file's modification time from its change; 0: as written
		want  bool
	}{
		{0, 0, false}, {RacyWindow / 2, 0, false}, {RacyWindow + 100*time.Millisecond, 0, true}, {time.Second, 0, true},
		{0, -time.Hour, false},          // changed now, modified long ago
		{time.Second, time.Hour, false}, // modified an hour ahead
	} {
		root := t.TempDir()
		p := filepath.Join(root, "0001", "a.log")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("log"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tt.mtime != 0 {
			at := time.Now().Add(tt.mtime)
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
		now := changedAt(t, p).Add(tt.shift)
		ix := Index{Rel: "seal-index", Store: &countStore{}, Settled: func(string) bool { return true },
			Now: func() time.Time { return now }}
		if _, err := TakeIndexed(root, nil, ix); err != nil {
			t.Fatal(err)
		}
		e, indexed := readIndex(filepath.Join(root, "seal-index"))["0001/a.log"]
		if indexed != tt.want || indexed && e.id == "" {
			t.Errorf("clock +%v, modified %v: 0001/a.log indexed = %v (%+v), want %v", tt.shift, tt.mtime, indexed, e, tt.want)
		}
	}
}

// A directory whose modification time was set back (its change time now)
// or ahead is not taken as unchanged either.
func TestListedAsNotWithTimesSet(t *testing.T) {
	for _, tt := range []struct {
		shift, mtime time.Duration
	}{{0, -time.Hour}, {time.Second, time.Hour}} {
		root := t.TempDir()
		d := filepath.Join(root, "0001")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(tt.mtime)
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
		now := changedAt(t, d).Add(tt.shift)
		ix := Index{Rel: "seal-index", Store: nopStore{}, Settled: func(string) bool { return true },
			SettledDir: func(string) bool { return true }, Now: func() time.Time { return now }}
		s, err := TakeIndexed(root, nil, ix)
		if err != nil {
			t.Fatal(err)
		}
		if s.files["0001"].listedAs {
			t.Errorf("clock +%v, modified %v: 0001 taken as unchanged", tt.shift, tt.mtime)
		}
	}
}

// An indexed file is taken from the index for less than Refresh after it
// was read, and read and stored again from Refresh on, in both walks
// (files alone, and directories listed as indexed).
func TestIndexedRefresh(t *testing.T) {
	for _, dirs := range []bool{false, true} {
		root := t.TempDir()
		p := filepath.Join(root, "0001", "a.log")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("log"), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now().Add(2 * time.Second) // past the racy window of the file's times
		store := &countStore{}
		take := func(at time.Time) {
			t.Helper()
			ix := Index{Rel: "seal-index", Store: store, Settled: func(string) bool { return true }, Now: func() time.Time { return at }}
			if dirs {
				ix.SettledDir = func(string) bool { return true }
			}
			if _, err := TakeIndexed(root, nil, ix); err != nil {
				t.Fatal(err)
			}
		}
		take(start)
		take(start.Add(Refresh - time.Second))
		if store.n != 1 {
			t.Errorf("dirs %v: %d copies within Refresh, want 1", dirs, store.n)
		}
		take(start.Add(Refresh))
		if store.n != 2 {
			t.Errorf("dirs %v: %d copies at Refresh, want 2", dirs, store.n)
		}
	}
}
