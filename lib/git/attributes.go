package git

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// RestoreAttributes puts every .gitattributes file of the work tree, at
// any depth, and .gitmodules back as rev has them, and returns the paths it put back (slash
// paths, sorted as git lists them). The attributes decide how git stores
// a file it stages (working-tree-encoding, filter, eol, ident): a
// session's own would make the commit hold other bytes than the ones the
// guard ran on. One changed, staged or removed is checked out from rev;
// one rev lacks (new, untracked or ignored: git reads an ignored one all
// the same) is removed, and out of the index. One inside a directory git
// ignores whole governs nothing git stages, and stays. Errors: git's, or a file
// that cannot be removed.
func (r *Repo) RestoreAttributes(rev string) ([]string, error) {
	tracked, err := r.Run("diff-index", "-z", "--name-only", "--no-renames", rev, "--", attributesGlob, modulesFile)
	if err != nil {
		return nil, err
	}
	others, err := r.Run("ls-files", "-z", "--others", "--exclude-standard", "--", attributesGlob, modulesFile)
	if err != nil {
		return nil, err
	}
	ignored, err := r.Run("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", attributesGlob, modulesFile)
	if err != nil {
		return nil, err
	}
	return r.restoreAttributes(rev, splitZ(tracked), append(splitZ(others), splitZ(ignored)...))
}

// ChangedAttributes lists the tracked .gitattributes files, at any
// depth, and .gitmodules that differ in the work tree from the index
// (`git diff-files`, which looks at no other file), slash paths as git
// lists them: RestoreAttributesListed's tracked. Errors: git's.
func (r *Repo) ChangedAttributes() ([]string, error) {
	out, err := r.Run("diff-files", "-z", "--name-only", "--", attributesGlob, modulesFile)
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

// RestoreAttributesListed is RestoreAttributes from listings of the work
// tree already taken: tracked, the tracked files changed
// (ChangedAttributes, for an index that holds rev's entries, as a
// session leaves it: session.Run resets an index the session wrote), and
// among untracked and ignored (UnembedMade's, Ignored's, or ChangesSince's
// two lists, whose changed paths hold the tracked ones too) the attributes
// files by name. Errors: as RestoreAttributes'.
func (r *Repo) RestoreAttributesListed(rev string, tracked, untracked, ignored []string) ([]string, error) {
	var others []string
	for _, p := range append(slices.Clone(untracked), ignored...) {
		if path.Base(p) == ".gitattributes" || p == modulesFile {
			others = append(others, p)
		}
	}
	return r.restoreAttributes(rev, tracked, others)
}

// attributesGlob is the pathspec of every .gitattributes file;
// modulesFile names the submodules, which the runner keeps at the base's
// commits (a session's own would point a submodule's put-back elsewhere):
// put back with them.
const (
	attributesGlob = ":(glob)**/.gitattributes"
	modulesFile    = ".gitmodules"
)

// restoreAttributes puts back the tracked .gitattributes files that
// differ from rev and removes the others (untracked or ignored), a
// directory whole ("dir/") left alone.
func (r *Repo) restoreAttributes(rev string, tracked, others []string) ([]string, error) {
	paths := slices.Concat(tracked, others)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var files, back, gone []string
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			// An ignored directory: git stages nothing under it, whatever
			// attributes lie there.
			continue
		}
		files = append(files, p)
		if _, err := r.Run("cat-file", "-e", rev+":"+p); err == nil {
			back = append(back, p)
		} else {
			gone = append(gone, p)
		}
	}
	if len(back) > 0 {
		if _, err := runEnv(r.root, literal(back), nil, append([]string{"checkout", rev, "--"}, back...)...); err != nil {
			return nil, err
		}
	}
	for _, p := range gone {
		if err := os.Remove(filepath.Join(r.root, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(gone) > 0 {
		if _, err := runEnv(r.root, literal(gone), nil, append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "--"}, gone...)...); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// WhyRestored is why RestoreAttributes put p back, for a reason line.
func WhyRestored(p string) string {
	if p == modulesFile {
		return "it names the base's submodules, which the runner keeps at their commits"
	}
	return "git's attributes decide what the commit holds of the files the guard runs on (working-tree-encoding, filter, eol)"
}
