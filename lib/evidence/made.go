package evidence

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
	"github.com/treeloop/treeloop/lib/git"
)

// Made is what RemoveMadeSince found: the paths it removed (repository-
// relative, the top-most of each removal, a directory's with a trailing
// "/") and those whose birth time the filesystem does not keep (left as
// they are).
type Made struct {
	Removed []string
	Unknown []string
}

// RemoveMadeSince removes what a session made among a work tree's ignored
// paths: git keeps it out of the iteration's commit, so the guard must not
// run on it either (the guard judges what is committed). ignored is git's
// list ("dir/" for a whole directory, as git.Repo.Ignored gives it); an
// entry born at since or later by its birth time (fsutil.BirthTime) is
// removed whole, and in an ignored directory born before, each entry of it
// born since is. keep names the directories (repository-relative) whose
// insides are not looked at when they were born before since (the
// dependency directories: read-only under a sandbox, the operator's);
// .runner and .git are never touched. A session's new module behind an
// ignore rule (a .gitignore that ignores itself, a pattern such as
// *.egg-info or local_settings.py the project ignores already), a package
// entry point or a build output the guard would load goes before the
// guard runs. Errors: an entry cannot be read or removed.
func RemoveMadeSince(root string, ignored []string, keep func(rel string) bool, since time.Time) (Made, error) {
	var m Made
	for _, p := range ignored {
		rel := strings.TrimSuffix(p, "/")
		if rel == "" || rel == "." || ownTop(rel) {
			continue
		}
		if err := m.sweep(root, rel, keep, since); err != nil {
			return m, err
		}
	}
	return m, nil
}

// sweep removes rel (under root) when the session made it or put it there:
// born since, or (a file, a link) changed since by its change time, which
// a rename and every write move and no process sets back (an old inode
// renamed into an ignored place and rewritten is the session's too).
// Else it looks into rel when it is a directory keep does not name.
func (m *Made) sweep(root, rel string, keep func(string) bool, since time.Time) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	born, bornOK := fsutil.BirthTime(p)
	changed, changedOK := fsutil.ChangeTime(st)
	switch {
	case !bornOK && !changedOK:
		m.Unknown = append(m.Unknown, rel)
		return nil
	case bornOK && !born.Before(since), !st.IsDir() && changedOK && !changed.Before(since):
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		pruneEmpty(root, path.Dir(rel), since)
		if st.IsDir() {
			rel += "/"
		}
		m.Removed = append(m.Removed, rel)
		return nil
	case !st.IsDir() || keep(rel):
		return nil
	}
	// An older directory: what lies in it may be new (a directory's
	// change time moves with its entries, so it cannot tell a rename of
	// the directory from a new file in it: each entry is judged).
	ents, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := m.sweep(root, path.Join(rel, e.Name()), keep, since); err != nil {
			return err
		}
	}
	return nil
}

// pruneEmpty removes dir (under root) and the directories above it, up to
// the root, while each is empty and was born at since or later: the
// directory git listed the files of one by one (all of them ignored), left
// empty by their removal.
func pruneEmpty(root, dir string, since time.Time) {
	for ; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
		p := filepath.Join(root, filepath.FromSlash(dir))
		born, ok := fsutil.BirthTime(p)
		if !ok || born.Before(since) || os.Remove(p) != nil {
			return
		}
	}
}

// ownTop reports a path under the runner's own .runner or git's .git.
func ownTop(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top == ".runner" || top == ".git"
}

// Dir is a directory of the work tree as it stood before a session:
// repository-relative, and its inode.
type Dir struct {
	Rel string
	Ino uint64
}

// Kept lists, before a session, the directories SweepMade will not look
// into after it: the dependency directories (DependencyDirs) among repo's
// ignored paths, each with its inode, so that one a session renamed into
// such a place (an old src/ moved to src/node_modules) is not taken for
// it. Errors: git's.
func Kept(repo *git.Repo) ([]Dir, error) {
	ignored, err := repo.Ignored()
	if err != nil {
		return nil, fmt.Errorf("list the work tree's ignored files: %w", err)
	}
	return KeptAmong(repo.Root(), ignored), nil
}

// KeptAmong is Kept from a listing of the ignored paths already made.
func KeptAmong(root string, ignored []string) []Dir {
	rels := DependencyDirs(root, ignored)
	var out []Dir
	for _, rel := range rels {
		if ino, ok := inode(filepath.Join(root, filepath.FromSlash(rel))); ok {
			out = append(out, Dir{rel, ino})
		}
	}
	return out
}

// inode is p's inode (p itself, not what a link names).
func inode(p string) (uint64, bool) {
	st, err := os.Lstat(p)
	if err != nil || !st.IsDir() {
		return 0, false
	}
	return fsutil.Inode(st)
}

// SweepMade removes what was made since among repo's ignored paths
// (RemoveMadeSince), but inside the directories of kept (Kept, listed
// before the session) still at their path as the same directory: after
// the agent's session, before the guard, so that the guard runs on what
// the iteration commits; after the guard, so that no later guard runs on
// what a test wrote. cargo's target/ is no exception: pytest, jest and
// vitest collect the tests they find there. Errors: git's, or
// RemoveMadeSince's.
func SweepMade(repo *git.Repo, since time.Time, kept []Dir) (Made, error) {
	ignored, err := repo.Ignored()
	if err != nil {
		return Made{}, fmt.Errorf("list the work tree's ignored files: %w", err)
	}
	return SweepMadeAmong(repo, ignored, since, kept)
}

// SweepMadeAmong is SweepMade from a listing of the ignored paths taken
// after the session (git.Repo.Ignored's, or ChangesSince's).
func SweepMadeAmong(repo *git.Repo, ignored []string, since time.Time, kept []Dir) (Made, error) {
	keep := func(rel string) bool {
		i := slices.IndexFunc(kept, func(d Dir) bool { return d.Rel == rel })
		if i < 0 {
			return false
		}
		ino, ok := inode(filepath.Join(repo.Root(), filepath.FromSlash(rel)))
		return ok && ino == kept[i].Ino
	}
	return RemoveMadeSince(repo.Root(), ignored, keep, since)
}

// Submodules sweeps the work trees of repo's submodules at paths (those
// the base's .gitmodules names, git.Repo.Submodules): what differs there
// from the commit base records for the submodule is in no commit of the
// run, which records that commit alone. A submodule moved to another
// commit (a commit made inside it, or a repository of the session's put
// in its place) is put back to base's (git.Repo.PutBackCommit, a
// replaced .git moved under keep), with a reason. What was made since among the paths git would not
// commit there (untracked or ignored; RemoveMadeSince, its dependency
// directories born before left whole) is removed, and tracked files
// changed are put back as the submodule's HEAD has them (git.Repo.PutBack),
// one reason for each submodule, for the caller to refuse the run that
// saw them. Errors: git's, or RemoveMadeSince's.
func Submodules(repo *git.Repo, base string, paths []string, since time.Time, keep string) (m Made, reasons []string, err error) {
	for _, p := range paths {
		s, ok, err := repo.SubmoduleAt(p)
		if err != nil {
			return m, reasons, fmt.Errorf("submodule %s: %w", p, err)
		}
		if !ok {
			// Not a repository: an uninitialised submodule is an empty
			// directory, and files there (a session took its .git away)
			// are in no commit.
			why, err := clearSubmodule(repo, p, keep, "holds files but no repository")
			if why != "" {
				reasons = append(reasons, why)
			}
			if err != nil {
				return m, reasons, err
			}
			continue
		}
		recorded, err := repo.Gitlink(base, p)
		if err != nil {
			return m, reasons, fmt.Errorf("submodule %s: %w", p, err)
		}
		if recorded != "" && s.Head != recorded {
			reasons = append(reasons, fmt.Sprintf("submodule %s was moved from its commit %.12s to %.12s: a commit made inside a submodule is in no repository a fresh clone fetches; put back (move a submodule outside the run)", p, recorded, s.Head))
			if err := repo.PutBackCommit(p, recorded, keep); err != nil {
				why, err := clearSubmodule(repo, p, keep, fmt.Sprintf("could not be checked out at %.12s again (%v)", recorded, err))
				if why != "" {
					reasons = append(reasons, why)
				}
				if err != nil {
					return m, reasons, err
				}
				continue
			}
			if s, _, err = repo.SubmoduleAt(p); err != nil {
				return m, reasons, fmt.Errorf("submodule %s: %w", p, err)
			}
		}
		root := filepath.Join(repo.Root(), filepath.FromSlash(p))
		deps := DependencyDirs(root, s.Others)
		made, err := RemoveMadeSince(root, s.Others, func(rel string) bool { return slices.Contains(deps, rel) }, since)
		for _, r := range made.Removed {
			m.Removed = append(m.Removed, p+"/"+r) // "dir/" keeps its slash
		}
		for _, u := range made.Unknown {
			m.Unknown = append(m.Unknown, p+"/"+u)
		}
		if err != nil {
			return m, reasons, fmt.Errorf("submodule %s: %w", p, err)
		}
		if len(s.Modified) > 0 {
			reasons = append(reasons, fmt.Sprintf("the work tree of submodule %s differed from its commit (%s), which is all the iteration commits of it: put back (a submodule's files change with a commit of its own, outside the run)", p, strings.Join(s.Modified, ", ")))
			if err := repo.PutBack(p); err != nil {
				return m, reasons, fmt.Errorf("submodule %s: put back its files: %w", p, err)
			}
		}
	}
	return m, reasons, nil
}

// clearSubmodule is git.Repo.ClearSubmodule with a reason saying so
// (what: what was wrong with the submodule), "" when it held nothing.
func clearSubmodule(repo *git.Repo, p, keep, what string) (string, error) {
	to, err := repo.ClearSubmodule(p, keep)
	if err != nil || to == "" {
		return "", err
	}
	return fmt.Sprintf("submodule %s %s: its files, in no commit, were moved to %s and it is left uninitialised (git submodule update --init %s, outside the run, checks it out)", p, what, to, p), nil
}
