package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
)

// NewGitlinks are the paths that changes (StagedChanges(rev)) stage as a
// gitlink, a submodule's entry (mode 160000), where rev's tree had none:
// a git repository made inside the work tree with a commit of its own,
// which `git add -A` stages as that commit's id, not as its files.
func NewGitlinks(changes []StagedChange) []string {
	var paths []string
	for _, c := range changes {
		if c.Mode == "160000" && c.OldMode != "160000" {
			paths = append(paths, c.Path)
		}
	}
	return paths
}

// MovedGitlinks lists the changes that move a submodule of the base to
// another commit (a gitlink in both, its id changed).
func MovedGitlinks(changes []StagedChange) []StagedChange {
	var moved []StagedChange
	for _, c := range changes {
		if c.Mode == "160000" && c.OldMode == "160000" && c.ID != c.OldID {
			moved = append(moved, c)
		}
	}
	return moved
}

// Embedded is one git repository found inside the work tree and made a
// directory of plain files (Unembed).
type Embedded struct {
	Path string // slash path of the repository's directory in the work tree
	Kept string // the absolute path its .git was moved to
}

// MaxUnembedRounds bounds StageUnembedded's rounds: a repository inside an
// embedded one shows up only once its outer one's .git has gone.
const MaxUnembedRounds = 8

// StageUnembedded makes sure what is staged holds files, not gitlinks,
// wherever rev's tree had no gitlink: each repository that
// changes (StagedChanges(rev) of the index just staged with `git add -A`)
// stages as a new gitlink has its .git (a directory, or a file naming one)
// moved to keep/<path>/.git and its gitlink taken out of the index, and
// the work tree is staged again, until none
// is left (MaxUnembedRounds at most). A guard runs on the files of the
// work tree: committed as a gitlink they would be out of the iteration's
// commit, which would record only an id no clone can fetch. The user's
// own submodules (gitlinks in rev's tree) are left as they are. It
// returns the changes staged in the end and the repositories moved.
// Errors: a .git that cannot be moved (it is then left, and so is its
// gitlink), or git's.
func (r *Repo) StageUnembedded(rev, keep string, changes []StagedChange) ([]StagedChange, []Embedded, error) {
	var moved []Embedded
	for round := 0; ; round++ {
		paths := NewGitlinks(changes)
		if len(paths) == 0 {
			return changes, moved, nil
		}
		if round == MaxUnembedRounds {
			return changes, moved, fmt.Errorf("embedded git repositories still staged as gitlinks after %d rounds: %s", round, strings.Join(paths, ", "))
		}
		for _, p := range paths {
			e, err := r.unembed(p, keep)
			if err != nil {
				return changes, moved, err
			}
			if e.Kept != "" {
				moved = append(moved, e)
			}
		}
		// A gitlink in the index stays one, its .git gone, until it is
		// taken out of the index.
		if _, err := r.Run(append([]string{"update-index", "--force-remove", "--"}, paths...)...); err != nil {
			return changes, moved, err
		}
		if err := r.AddAll(); err != nil {
			return changes, moved, err
		}
		var err error
		if changes, err = r.StagedChanges(rev); err != nil {
			return changes, moved, err
		}
	}
}

// unembed moves the .git of the repository at rel (a slash path in the
// work tree, from git) to keep/rel/.git. With no .git there (moved
// already, by a run of this that a crash cut short after the move, its
// gitlink still in the index), nothing is moved (Kept "").
func (r *Repo) unembed(rel, keep string) (Embedded, error) {
	clean := path.Clean(rel)
	if clean != rel || clean == "." || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return Embedded{}, fmt.Errorf("embedded git repository %q: not a path inside the work tree", rel)
	}
	from := filepath.Join(r.root, filepath.FromSlash(rel), ".git")
	if _, err := os.Lstat(from); errors.Is(err, fs.ErrNotExist) {
		return Embedded{Path: rel}, nil
	} else if err != nil {
		return Embedded{}, fmt.Errorf("embedded git repository %s: %w", rel, err)
	}
	to := filepath.Join(keep, filepath.FromSlash(rel), ".git")
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return Embedded{}, fmt.Errorf("embedded git repository %s: %w", rel, err)
	}
	// One moved there already (the guard's first run made the same
	// repository its second run makes again): each keeps its own.
	for n := 2; ; n++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = filepath.Join(keep, filepath.FromSlash(rel), fmt.Sprintf(".git.%d", n))
	}
	if err := os.Rename(from, to); err != nil {
		return Embedded{}, fmt.Errorf("embedded git repository %s: move its .git: %w", rel, err)
	}
	return Embedded{Path: rel, Kept: to}, nil
}

// Pointers reports whether changes stage something that may point at
// content outside the commit: a new gitlink, or a new or changed symbolic
// link (StageFiles looks closer).
func Pointers(changes []StagedChange) bool {
	return len(NewGitlinks(changes)) > 0 || len(MovedGitlinks(changes)) > 0 || len(newLinks(changes)) > 0
}

// StageFiles stages as files what a session made that git would commit as
// a pointer to content the commit does not hold, though the guard ran on
// it: a git repository inside the work tree (StageUnembedded, each .git
// kept in the git directory under treeloop/embedded/<run>/<iteration>,
// layout.IterName) and a symbolic link out of the work tree
// (StageOutsideLinks, copied through treeloop/tmp there, when mayCopy says
// the sessions could read what it points to). With changes nil they are
// read here (StagedChanges(rev)). warn is given one line for each
// repository moved and each link out. It returns the changes staged in
// the end and whether any were. Errors: those two's, or the git
// directory's.
func (r *Repo) StageFiles(rev, run string, iter int, changes []StagedChange, mayCopy func() bool, warn func(line string)) ([]StagedChange, bool, error) {
	if changes == nil {
		var err error
		if changes, err = r.StagedChanges(rev); err != nil {
			return nil, false, err
		}
	}
	if !Pointers(changes) {
		return changes, false, nil
	}
	dirs, err := r.Dirs()
	if err != nil {
		return nil, false, err
	}
	keep := filepath.Join(dirs.Git, "treeloop", "embedded", run, layout.IterName(iter))
	changes, back, err := r.stageGitlinksBack(rev, keep, changes)
	for _, c := range back {
		warn(fmt.Sprintf("submodule %s was moved from its commit %.12s to %.12s, which no fresh clone fetches: the commit records %.12s, and the submodule is checked out there again", c.Path, c.OldID, c.ID, c.OldID))
	}
	if err != nil {
		return changes, len(back) > 0, err
	}
	changes, moved, err := r.StageUnembedded(rev, keep, changes)
	for _, e := range moved {
		warn(fmt.Sprintf("%s/ is a git repository made inside the work tree: its files are committed, not a gitlink to its commit; its .git is kept in %s", e.Path, e.Kept))
	}
	if err != nil {
		return changes, len(moved) > 0, err
	}
	changes, outside, err := r.StageOutsideLinks(rev, filepath.Join(dirs.Git, "treeloop", "tmp"), changes, mayCopy)
	copied := 0
	for _, o := range outside {
		switch {
		case o.Uncommitted:
			copied++
			warn(fmt.Sprintf("%s is a symbolic link to %s, which the commit would not hold (git ignores it, or it lies under a directory named .git): what it points to is committed in its place", o.Path, o.Target))
		case o.Copied:
			copied++
			warn(fmt.Sprintf("%s is a symbolic link out of the work tree, to %s: what it points to is committed in its place", o.Path, o.Target))
		default:
			warn(fmt.Sprintf("%s is a symbolic link out of the work tree, to %s: committed as the link (under a sandbox the runner copies nothing in)", o.Path, o.Target))
		}
	}
	return changes, len(back)+len(moved)+copied > 0, err
}

// stageGitlinksBack puts each submodule a session moved to another commit
// back at rev's (MovedGitlinks): its index entry, and its work tree
// (PutBackCommit; one that cannot be checked out again is left
// uninitialised, ClearSubmodule, its files kept under keep). It returns the
// changes staged then, and the ones it put back. Errors: git's.
func (r *Repo) stageGitlinksBack(rev, keep string, changes []StagedChange) ([]StagedChange, []StagedChange, error) {
	back := MovedGitlinks(changes)
	if len(back) == 0 {
		return changes, nil, nil
	}
	for _, c := range back {
		if _, err := r.Run("update-index", "--cacheinfo", "160000,"+c.OldID+","+c.Path); err != nil {
			return changes, back, err
		}
		if err := r.PutBackCommit(c.Path, c.OldID, keep); err != nil {
			// Left uninitialised: no checkout that no commit records
			// stays for the next session or guard.
			if _, err := r.ClearSubmodule(c.Path, keep); err != nil {
				return changes, back, err
			}
		}
	}
	changes, err := r.StagedChanges(rev)
	return changes, back, err
}

// Nested is a git repository inside the work tree that git lists as
// untracked: its directory (a slash path) and the inode of its .git (a
// directory, or a file naming one).
type Nested struct {
	Path string
	Ino  uint64
}

// NestedRepos lists the untracked git repositories inside the work tree,
// as they stand (UnembedMade's snapshot before a session). Errors: git's.
func (r *Repo) NestedRepos() ([]Nested, error) {
	repos, _, err := r.nestedRepos()
	return repos, err
}

// nestedRepos is NestedRepos with the listing it read: every untracked
// path, a repository as "dir/".
func (r *Repo) nestedRepos() ([]Nested, []string, error) {
	// Without --directory: a repository inside an untracked directory is
	// listed, not the directory whole.
	out, err := r.Run("ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, nil, err
	}
	untracked := splitZ(out)
	repos := []Nested{} // none is a list too (UnembedMade)
	for _, p := range untracked {
		rel, ok := strings.CutSuffix(p, "/")
		if !ok || rel == "" {
			continue
		}
		st, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(rel), ".git"))
		if err != nil {
			continue
		}
		if ino, ok := fsutil.Inode(st); ok {
			repos = append(repos, Nested{rel, ino})
		}
	}
	return repos, untracked, nil
}

// UnembedMade moves away, to keep/<path>/.git, the .git of every git
// repository inside the work tree that git lists as untracked and that
// before (NestedRepos, taken before the session) does not hold at its
// path with the same .git: one the session made, or whose .git it
// replaced (an old file renamed into place and made to name a git
// directory keeps its birth time; its inode gives it away). With before
// nil (a session that did not finish: no list was kept), one whose .git
// was born or changed at since or later. git then sees its files as the
// work tree's: judged by the ignore rules, swept when the session made
// them and git ignores them, staged otherwise; its own .gitignore, which
// git does not read across a repository's boundary, then applies to them
// like any other. Run before the checks that list the work tree's files:
// git looks into no repository but its own, so a repository whose
// .gitignore ignores everything in it hid its files from every listing.
// Rounds repeat for a repository inside a moved one (MaxUnembedRounds).
// Errors: git's, or a .git that cannot be moved.
func (r *Repo) UnembedMade(keep string, before []Nested, since time.Time) ([]Embedded, error) {
	moved, _, err := r.UnembedMadeListing(keep, before, since)
	return moved, err
}

// UnembedMadeListing is UnembedMade that also returns the untracked paths
// as git lists them once no repository is left to move (`git ls-files
// --others --exclude-standard`: each file, a repository kept as "dir/"),
// for the checks after a session to read.
func (r *Repo) UnembedMadeListing(keep string, before []Nested, since time.Time) ([]Embedded, []string, error) {
	var moved []Embedded
	for round := 0; round < MaxUnembedRounds; round++ {
		now, untracked, err := r.nestedRepos()
		if err != nil {
			return moved, nil, err
		}
		n := len(moved)
		for _, e := range now {
			if before != nil && slices.Contains(before, e) {
				continue
			}
			if before == nil && !fsutil.MadeSince(filepath.Join(r.root, filepath.FromSlash(e.Path), ".git"), since) {
				continue
			}
			m, err := r.unembed(e.Path, keep)
			if err != nil {
				return moved, nil, err
			}
			moved = append(moved, m)
		}
		if len(moved) == n {
			return moved, untracked, nil
		}
	}
	return moved, nil, fmt.Errorf("git repositories inside the work tree still there after %d rounds", MaxUnembedRounds)
}
