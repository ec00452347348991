package git

import (
	"bytes"
	"os"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/subject"
)

// CheckoutTree writes the files of commit (or tree) rev into dir, through
// the index file index: the repository's own index and work tree are not
// touched, and no worktree is registered. dir's existing files of the same
// names are overwritten; others are left. One git process.
func (r *Repo) CheckoutTree(rev, dir, index string) error {
	os.Remove(index) // an index from another checkout would make git keep its entries
	env := []string{"GIT_INDEX_FILE=" + index}
	// No hook runs: a post-checkout hook (core.hooksPath may name one in
	// the work tree, a session's to write) would run outside any sandbox.
	_, err := runEnv(r.root, env, nil, "-c", "core.hooksPath=/dev/null", "--work-tree="+dir, "checkout", "-q", "-f", rev, "--", ".")
	return err
}

// NodeCommits lists the iteration commits of node nodeID in run runID
// reachable from rev, newest first, and the first parent of the oldest:
// the commit the node's work began from ("" with no commit). One git log.
func (r *Repo) NodeCommits(rev, runID, nodeID string) (shas []string, base string, err error) {
	out, err := r.Run("log", "--format=%H%x1f%P%x1f%s%x1e", rev, "--")
	if err != nil {
		return nil, "", err
	}
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) < 3 {
			continue
		}
		it, ok := subject.ParseRunIteration(f[2], runID)
		if !ok || it.Node != nodeID {
			continue
		}
		shas = append(shas, f[0])
		base, _, _ = strings.Cut(f[1], " ")
	}
	return shas, base, nil
}

// FilesChangedIn lists, sorted and deduplicated, the paths the commits
// shas changed against their first parents (added, modified, deleted; no
// rename detection). One git process; none for no commits.
func (r *Repo) FilesChangedIn(shas []string) ([]string, error) {
	if len(shas) == 0 {
		return nil, nil
	}
	args := append([]string{"log", "--no-walk=unsorted", "--first-parent", "-m", "--no-renames", "--name-only", "-z", "--format="}, shas...)
	out, err := r.Run(append(args, "--")...)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var paths []string
	for _, p := range splitZ(out) {
		p = strings.TrimLeft(p, "\n")
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, nil
}
