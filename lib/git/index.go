package git

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// The index file read without a git process (gitfile.WalkIndex), for
// HiddenPaths, TrackedPaths and IndexTree's count of stale trees. Here is
// the decision to read it: only the work tree's own .git/index, with git's
// environment pointing nowhere else; everything the reader refuses, git
// answers (hiddenByGit, ls-files, write-tree). The differential tests in
// index_test.go hold the reader to git on repositories git makes.

// mapIndex maps .git/index when the index reader may answer: the index is
// .git/index of a work tree whose .git is a directory, git's environment
// does not point elsewhere (GIT_DIR, GIT_INDEX_FILE, GIT_COMMON_DIR,
// GIT_WORK_TREE), scope holds only clean relative paths
// (gitfile.CleanScope), and the file exists and maps. Mapped, not copied
// into fresh heap (fsutil.MapFile): git replaces the index by a rename,
// so the mapping holds the file as it was when opened. ok false: git
// answers.
func (r *Repo) mapIndex(scope []string) (data []byte, release func(), ok bool) {
	if gitEnvElsewhere() || !gitfile.CleanScope(scope) {
		return nil, nil, false
	}
	gitDir := filepath.Join(r.root, ".git")
	if st, err := os.Lstat(gitDir); err != nil || !st.IsDir() {
		return nil, nil, false
	}
	data, release, err := fsutil.MapFile(filepath.Join(gitDir, "index"), "", 1<<40)
	if err != nil {
		return nil, nil, false // no index (a repository without one) or unreadable: git says
	}
	return data, release, true
}

// hiddenInIndex is HiddenPaths read from the index file (gitfile.Hidden,
// which lists them as `git ls-files -v` tags them); ok is false where
// mapIndex or the reader refuses, and git answers.
func (r *Repo) hiddenInIndex(scope []string) (assumed, skipped []string, ok bool) {
	data, release, ok := r.mapIndex(scope)
	if !ok {
		return nil, nil, false
	}
	defer release()
	assumed, skipped, err := gitfile.Hidden(data, scope)
	return assumed, skipped, err == nil
}

// gitEnvElsewhere reports git's environment pointing at another
// repository, work tree or index than the work tree's own .git/index.
func gitEnvElsewhere() bool {
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_WORK_TREE"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// staleTrees counts the directories whose tree the index's cache of tree
// ids does not hold (gitfile.StaleTrees; math.MaxInt without the cache);
// ok is false where the index is not of the plain kind the reader reads.
func (r *Repo) staleTrees() (n int, ok bool) {
	data, release, ok := r.mapIndex(nil)
	if !ok {
		return 0, false
	}
	defer release()
	n, err := gitfile.StaleTrees(data)
	return n, err == nil
}

// TrackedPaths lists the paths of git's index at or under scope's paths
// (every path when scope is empty), stage 0 and conflicts alike, once
// each: read from the index file itself when it is of the plain kind
// the index reader reads (gitfile.Tracked), else from `git ls-files`.
func (r *Repo) TrackedPaths(scope ...string) ([]string, error) {
	if paths, ok := r.trackedInIndex(scope); ok {
		return paths, nil
	}
	return r.trackedByGit(scope)
}

// trackedByGit is TrackedPaths through `git ls-files -z --cached`.
func (r *Repo) trackedByGit(scope []string) ([]string, error) {
	out, err := runEnv(r.root, literal(scope), nil, append([]string{"ls-files", "-z", "--cached"}, pathspec(scope)...)...)
	if err != nil {
		return nil, err
	}
	return slices.Compact(splitZ(out)), nil
}

func (r *Repo) trackedInIndex(scope []string) (paths []string, ok bool) {
	data, release, ok := r.mapIndex(scope)
	if !ok {
		return nil, false
	}
	defer release()
	paths, err := gitfile.Tracked(data, scope)
	return paths, err == nil
}
