package seal

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// nopStore is a Store that keeps nothing and says so.
type nopStore struct{}

func (nopStore) Put(paths []string) ([]string, error) { return make([]string, len(paths)), nil }
func (nopStore) Get(string) ([]byte, bool, error)     { return nil, false, nil }

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
		ix := Index{Rel: "seal-index", Store: nopStore{}, Settled: func(string) bool { return true },
			SettledDir: func(string) bool { return true }, Now: func() time.Time { return time.Now().Add(tt.shift) }}
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
