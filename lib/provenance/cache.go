package provenance

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
)

// CacheFile is the audit's memory between steps, in the run's iteration
// directory (.runner/iterations/<run>/, local and outside git): the commit
// the step's audit last read the history up to, every pass commit of the
// run up to it, and which of them their iteration's log confirmed. A later
// audit whose HEAD descends from that commit reads only the commits since
// (git log C..HEAD) and the logs of passes not yet confirmed, so its cost
// follows what changed, not the run's length. Only runner-step's start
// writes it (tree-validate --audit --keep-audit), between sessions; the
// seal keeps it as it keeps the run's other settled logs, and a confined
// session sees it read-only. A missing, unreadable or foreign cache, or a
// HEAD that does not descend from its commit, means the full audit.
const CacheFile = "audit-cache.json"

// cacheDoc is CacheFile's content.
type cacheDoc struct {
	Version int                     `json:"version"`
	Run     string                  `json:"run"`
	Head    string                  `json:"head"`
	Commits map[string][]cachedPass `json:"commits"` // node id → its pass commits, oldest first
}

// cachedPass is one pass commit and whether its log confirmed it.
type cachedPass struct {
	SHA       string `json:"sha"`
	Iter      int    `json:"iter"`
	Confirmed bool   `json:"confirmed,omitempty"`
}

func cachePath(root, runID string) string {
	return filepath.Join(root, filepath.FromSlash(layout.Iterations), runID, CacheFile)
}

// history is the run's pass commits reachable from head (node → commits,
// oldest first) and the commits whose log confirmed them: from the cache
// and the commits since its head when head descends from it, else from the
// whole history.
func history(repo *git.Repo, root, runID, head string) (map[string][]passCommit, map[string]bool, error) {
	confirmed := map[string]bool{}
	c, ok := loadCache(cachePath(root, runID), runID)
	var since []git.RunCommit
	if ok && c.Head != head {
		// The commits since, and whether head descends from the cache's
		// commit, in one git log.
		since, ok = repo.RunCommitsSince(c.Head, head, runID)
	}
	if !ok {
		commits, err := passCommits(repo, runID, head)
		return commits, confirmed, err
	}
	commits := map[string][]passCommit{}
	for node, ps := range c.Commits {
		for _, p := range ps {
			commits[node] = append(commits[node], passCommit{sha: p.SHA, iter: p.Iter})
			if p.Confirmed {
				confirmed[p.SHA] = true
			}
		}
	}
	for node, ps := range passesOf(since, runID) {
		commits[node] = append(commits[node], ps...)
	}
	return commits, confirmed, nil
}

// loadCache reads the cache of run runID; ok is false when there is none
// that this version wrote for that run.
func loadCache(path, runID string) (cacheDoc, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return cacheDoc{}, false
	}
	var c cacheDoc
	if json.Unmarshal(data, &c) != nil || c.Version != 1 || c.Run != runID || !objectID(c.Head) {
		return cacheDoc{}, false
	}
	return c, true
}

// keepCache writes the cache of run runID at head: commits and the
// confirmed ones. The cache is derived: a failed write costs the next
// audit its speed, never its answer, so it is not synced.
func keepCache(root, runID, head string, commits map[string][]passCommit, confirmed map[string]bool) error {
	c := cacheDoc{Version: 1, Run: runID, Head: head, Commits: map[string][]cachedPass{}}
	for node, ps := range commits {
		for _, p := range ps {
			c.Commits[node] = append(c.Commits[node], cachedPass{SHA: p.sha, Iter: p.iter, Confirmed: confirmed[p.sha]})
		}
	}
	data, err := jsondoc.Compact(c)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomicUnsynced(cachePath(root, runID), data, 0o644)
}

// objectID reports a full object id: 40 or 64 lower-case hex digits.
func objectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
