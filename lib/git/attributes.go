package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RestoreAttributes puts every .gitattributes file of the work tree, at
// any depth, back as rev has it, and returns the paths it put back (slash
// paths, sorted as git lists them). The attributes decide how git stores
// a file it stages (working-tree-encoding, filter, eol, ident): a
// session's own would make the commit hold other bytes than the ones the
// guard ran on. One changed, staged or removed is checked out from rev;
// one rev lacks (new, untracked or ignored: git reads an ignored one all
// the same) is removed, and out of the index. One inside a directory git
// ignores whole governs nothing git stages, and stays. Errors: git's, or a file
// that cannot be removed.
func (r *Repo) RestoreAttributes(rev string) ([]string, error) {
	out, err := r.Run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames", "--", ":(glob)**/.gitattributes")
	if err != nil {
		return nil, err
	}
	var paths, back, gone []string
	for _, e := range strings.Split(string(out), "\x00") {
		if len(e) < 4 {
			continue
		}
		p := e[3:]
		if strings.HasSuffix(p, "/") {
			// An ignored directory: git stages nothing under it, whatever
			// attributes lie there.
			continue
		}
		paths = append(paths, p)
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
	return paths, nil
}
