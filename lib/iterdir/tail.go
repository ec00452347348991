package iterdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/layout"
)

// The tail of a run: the last iterations found by probing their numbered
// directories down from the run's last iteration (run_state.json's
// next_iter - 1, the hint) instead of listing the run's directory, so what
// runner-status and iter-log list show of a long run costs what they show,
// not the run's length. Iters and History are the plain path; the
// functions here give what they give (tail_test.go holds them to it) for
// a run directory the runner wrote: iterations named IterName(n).

// down calls yield with the iteration numbers under runDir, highest first,
// until yield returns false: from the highest directory at or above hint
// (probed upwards while one of the next two exists) down to 1. A hint is
// at least the last iteration's number less one, as run_state.json's
// next_iter - 1 is (the directory of the iteration in progress is
// allocated first). hint < 1 lists runDir (Iters).
func down(runDir string, hint int, yield func(n int) (bool, error)) error {
	if hint < 1 {
		iters, err := Iters(runDir)
		if err != nil {
			return err
		}
		for i := len(iters) - 1; i >= 0; i-- {
			if more, err := yield(iters[i]); err != nil || !more {
				return err
			}
		}
		return nil
	}
	top := hint
	for {
		switch {
		case isIter(runDir, top+1):
			top++
			continue
		case isIter(runDir, top+2):
			top += 2
			continue
		}
		break
	}
	misses := 0
	for n := top; n >= 1; n-- {
		if !isIter(runDir, n) {
			// A hint far above the run's directories (a run_state.json
			// not as the runner left it): after a run of misses, the
			// listing says what lies below.
			if misses++; misses == maxMisses {
				return below(runDir, n, yield)
			}
			continue
		}
		misses = 0
		if more, err := yield(n); err != nil || !more {
			return err
		}
	}
	return nil
}

// maxMisses is how many numbers in a row down probes without finding an
// iteration before it lists the run's directory instead.
const maxMisses = 64

// below calls yield with the iterations under runDir numbered below n,
// highest first, from the listing (Iters).
func below(runDir string, n int, yield func(n int) (bool, error)) error {
	iters, err := Iters(runDir)
	if err != nil {
		return err
	}
	for i := len(iters) - 1; i >= 0; i-- {
		if iters[i] >= n {
			continue
		}
		if more, err := yield(iters[i]); err != nil || !more {
			return err
		}
	}
	return nil
}

// isIter reports whether iteration n's directory exists under runDir.
func isIter(runDir string, n int) bool {
	st, err := os.Stat(filepath.Join(runDir, layout.IterName(n)))
	return err == nil && st.IsDir()
}

// HistoryTail is History(runDir, n) for n > 0, probing down from hint
// (the run's last iteration number; < 1 when unknown). n <= 0 is History.
func HistoryTail(runDir string, hint, n int) ([]Row, error) {
	if n <= 0 {
		return History(runDir, n)
	}
	var rows []Row
	err := down(runDir, hint, func(k int) (bool, error) {
		var m Meta
		err := Read(filepath.Join(runDir, layout.IterName(k)), MetaFile, &m)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		rows = append(rows, RowOf(m))
		return len(rows) < n, nil
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows, nil
}

// LastIter is the last entry of Iters(runDir), probing from hint (< 1:
// listing runDir); 0 when there is none.
func LastIter(runDir string, hint int) (int, error) {
	last := 0
	err := down(runDir, hint, func(k int) (bool, error) {
		last = k
		return false, nil
	})
	return last, err
}
