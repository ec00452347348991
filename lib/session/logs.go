package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/seal"
)

// iterLogs holds the run's iteration directories (.runner/iterations/<run>/,
// outside git) across a session: what the runner wrote there before the
// session (begin.json, the tree snapshot, prompt.md, agent.json, earlier
// iterations' records) is what later commands read, so a session may change
// none of it.
type iterLogs struct {
	rel  string
	seal *seal.Seal
}

// SealIndex is the seal's index of the run's settled iteration logs, in
// the run's iteration directory (lib/seal Index): the logs of finished
// iterations are checked by their metadata and put back from their copies
// in git's object database, so a session's seal costs the same at the
// thousandth iteration as at the first.
const SealIndex = "seal-index"

// runLogs is the run's iteration directory (relative to the root, and
// absolute) and the seal index of its logs: every file outside iterDir is
// settled, since the runner wrote it in an earlier iteration and reads it
// as it is.
func runLogs(repo *git.Repo, runID, iterDir string) (rel, runDir, iterRel string, ix seal.Index, err error) {
	rel = path.Join(layout.Iterations, runID)
	runDir = filepath.Join(repo.Root(), filepath.FromSlash(rel))
	iterRel, err = filepath.Rel(runDir, iterDir)
	if err != nil {
		return "", "", "", seal.Index{}, err
	}
	iterRel = filepath.ToSlash(iterRel)
	ix = seal.Index{Rel: SealIndex, Store: blobStore{repo},
		Settled: func(p string) bool { return !strings.HasPrefix(p, iterRel+"/") }}
	return rel, runDir, iterRel, ix, nil
}

// sealLogs seals the run's iteration directories under repo's root; own are the
// names of the files of the iteration directory iterDir that the caller
// itself writes during the session (the agent's output.json among them).
func sealLogs(repo *git.Repo, runID, iterDir string, own ...string) (*iterLogs, error) {
	rel, runDir, iterRel, ix, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return nil, err
	}
	s, err := seal.TakeIndexed(runDir, func(p string) bool {
		dir, name := path.Split(p)
		return dir == iterRel+"/" && slices.Contains(own, name)
	}, ix)
	if err != nil {
		return nil, err
	}
	return &iterLogs{rel: rel, seal: s}, nil
}

// RestoreLogs puts back the earlier iterations' logs that the seal index
// lists and that changed, from their copies, for a session that ended
// without its check (agent-exec or guard-run killed while the session ran,
// iterDir its iteration). It returns one reason per path, naming who.
func RestoreLogs(repo *git.Repo, runID, iterDir, who string) ([]string, error) {
	rel, runDir, _, ix, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return nil, err
	}
	notes, err := seal.CheckIndex(runDir, ix)
	if err != nil {
		return nil, err
	}
	return (&iterLogs{rel: rel}).reasons(who, notes), nil
}

// DropSealIndex removes the run's seal index: the next seal reads every
// log and indexes them again.
func DropSealIndex(repo *git.Repo, runID string) error {
	err := os.Remove(filepath.Join(repo.Root(), filepath.FromSlash(layout.Iterations), runID, SealIndex))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// blobStore keeps the seal's copies as git blobs.
type blobStore struct{ repo *git.Repo }

func (b blobStore) Put(paths []string) ([]string, error) { return b.repo.WriteBlobs(paths) }

func (b blobStore) Get(id string) ([]byte, bool, error) { return b.repo.Blob(id) }

// Restore puts the run's iteration directories back as sealed and returns
// one reason per path, naming who ("the agent", "the guard").
func (l *iterLogs) Restore(who string) ([]string, error) {
	notes, err := l.seal.Restore()
	if err != nil {
		return nil, err
	}
	return l.reasons(who, notes), nil
}

// reasons words the seal's notes as reasons naming who.
func (l *iterLogs) reasons(who string, notes []string) []string {
	reasons := make([]string, len(notes))
	for i, n := range notes {
		reasons[i] = fmt.Sprintf("%s touched the runner's iteration log: %s/%s", who, l.rel, n)
		if seal.Restored(n) {
			reasons[i] += "; the runner put it back"
		}
	}
	return reasons
}
