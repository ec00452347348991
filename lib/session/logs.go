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
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/seal"
)

// iterLogs holds the run's iteration directories (.runner/iterations/<run>/,
// outside git) across a session: what the runner wrote there before the
// session (begin.json, the tree snapshot, prompt.md, agent.json, earlier
// iterations' records) is what later commands read, so a session may change
// none of it. The current iteration is sealed by its bytes; the earlier
// ones by the seal index, and only when the session can reach them
// (reach): a session the sandbox shows them read-only cannot change
// them, so its seal costs the same whatever the run's length.
type iterLogs struct {
	rel     string     // the run's iteration directory, relative to the root
	iterRel string     // the current iteration's, relative to the run's
	current *seal.Seal // the current iteration's directory
	earlier *seal.Seal // the rest of the run's, indexed; nil until reach, or out of the session's reach
	out     bool       // reach found the rest out of the session's reach
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
		Settled: func(p string) bool { return !strings.HasPrefix(p, iterRel+"/") },
		// Every directory but the current iteration's, those above it and
		// those in it (one that changed is listed again all the same).
		SettledDir: func(d string) bool {
			return d != iterRel && !strings.HasPrefix(iterRel, d+"/") && !strings.HasPrefix(d, iterRel+"/")
		}}
	return rel, runDir, iterRel, ix, nil
}

// sealLogs seals the current iteration's directory iterDir, by its
// bytes; own are the names of its files (or directories) that the caller
// itself writes during the session (the agent's output.json among them). reach seals the
// rest of the run's.
func sealLogs(repo *git.Repo, runID, iterDir string, own ...string) (*iterLogs, error) {
	rel, _, iterRel, _, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return nil, err
	}
	s, err := seal.Take(iterDir, func(name string) bool {
		return slices.ContainsFunc(own, func(o string) bool { return name == o || strings.HasPrefix(name, o+"/") })
	})
	if err != nil {
		return nil, err
	}
	return &iterLogs{rel: rel, iterRel: iterRel, current: s}, nil
}

// reach seals the run's earlier iterations (everything of the run's
// iteration directory but the current iteration's) by the seal index,
// unless the session runs confined by c and the sandbox shows them
// read-only (sandbox.Shields): then there is nothing of theirs it could
// change, and nothing is read.
func (l *iterLogs) reach(repo *git.Repo, runID, iterDir string, c Confinement) error {
	_, runDir, iterRel, ix, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return err
	}
	if sandbox.Shields(c.Sandbox, c.Root, runDir, iterDir, c.Writable) {
		l.out = true
		return nil
	}
	// The current iteration's directory itself is sealed here (replaced
	// by a file, it is made again), its files by current.
	s, err := seal.TakeIndexed(runDir, func(p string) bool { return strings.HasPrefix(p, iterRel+"/") }, ix)
	if err != nil {
		return err
	}
	l.earlier = s
	return nil
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

// Restore puts the run's iteration directories back as sealed (the
// current iteration's, and the earlier ones' when the session could reach
// them) and returns one reason per path, naming who ("the agent", "the
// guard"), in the order of the paths.
func (l *iterLogs) Restore(who string) ([]string, error) {
	var notes []string
	if l.earlier != nil { // first: a directory it makes again is filled below
		var err error
		if notes, err = l.earlier.Restore(); err != nil {
			return nil, err
		}
	}
	current, err := l.current.Restore()
	if err != nil {
		return nil, err
	}
	for _, n := range current {
		notes = append(notes, l.iterRel+"/"+n)
	}
	slices.Sort(notes)
	return l.reasons(who, notes), nil
}

// index is the bytes of the seal index as sealed; ok is false when the
// earlier iterations were not sealed or had no index.
func (l *iterLogs) index() (data []byte, ok bool) {
	if l.earlier == nil {
		return nil, false
	}
	return l.earlier.Bytes(SealIndex)
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
