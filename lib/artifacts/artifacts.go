// Package artifacts is a node's artifacts sidecar (seed 000 §3.4): the
// files sessions save for their node in .runner/nodes/<id>/artifacts/ (a
// report, a screenshot, a benchmark). They are committed with the
// iteration, listed in the later prompts of the node and of its parent,
// and shown in the web UI's node view. What a directory holds is capped
// ([config] artifacts_limit_bytes): a session that leaves more, or
// anything but regular files and directories, breaks the contract, and
// the directory goes back to what it held at the step's start.
package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
)

// File is one artifact: its path under the node's artifacts directory
// (slashes) and its size in bytes.
type File struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// List lists node id's artifacts in the repository at root, sorted by name,
// and their total size; none when the directory does not exist. A path
// that is not a regular file or a directory (a symbolic link, a device)
// is an error naming it.
func List(root, id string) ([]File, int64, error) {
	dir := filepath.Join(root, filepath.FromSlash(layout.NodeArtifacts(id)))
	var files []File
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", rel(root, p))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		name, _ := filepath.Rel(dir, p)
		files = append(files, File{Name: filepath.ToSlash(name), Bytes: info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return files, total, nil
}

// Enforce checks every node's artifacts directory in the repository after
// a session: over limit bytes, or holding anything but regular files and
// directories, it goes back to what it held at base (git's copy; a
// directory base did not have is removed), and a reason names it. A node
// directory whose id is not a node id is left to the caller's checks.
func Enforce(repo *git.Repo, base string, limit int64) ([]string, error) {
	root := repo.Root()
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(layout.Nodes)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var reasons []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id := e.Name()
		_, total, err := List(root, id)
		var why string
		switch {
		case err != nil:
			why = err.Error()
		case total > limit:
			why = fmt.Sprintf("it holds %d bytes, more than artifacts_limit_bytes=%d", total, limit)
		default:
			continue
		}
		dir := layout.NodeArtifacts(id)
		if err := restore(repo, base, dir); err != nil {
			return nil, fmt.Errorf("put %s back: %w", dir, err)
		}
		reasons = append(reasons, fmt.Sprintf("the session left %s over its limit (%s); the runner put it back as it was", dir, why))
	}
	return reasons, nil
}

// restore puts dir back as base has it: removed, then checked out from
// base when base has it.
func restore(repo *git.Repo, base, dir string) error {
	if err := os.RemoveAll(filepath.Join(repo.Root(), filepath.FromSlash(dir))); err != nil {
		return err
	}
	if _, err := repo.Run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", dir); err != nil {
		return err
	}
	out, err := repo.Run("ls-tree", "-d", "--name-only", base, "--", dir)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(out)) == "" {
		return nil
	}
	_, err = repo.Run("checkout", base, "--", dir)
	return err
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// AtCommit lists the artifacts every node holds in commit rev of repo
// (git ls-tree, nothing read from the work tree): node id → its files,
// sorted by name. Nodes without artifacts are absent.
func AtCommit(repo *git.Repo, rev string) (map[string][]File, error) {
	out, err := repo.Run("ls-tree", "-r", "-l", "-z", rev, "--", layout.Nodes)
	if err != nil {
		return nil, err
	}
	byNode := map[string][]File{}
	prefix := layout.Nodes + "/"
	for _, rec := range strings.Split(string(out), "\x00") {
		// "<mode> blob <sha> <size>\t<path>"
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" {
			continue
		}
		id, name, ok := strings.Cut(strings.TrimPrefix(p, prefix), "/artifacts/")
		if !ok || strings.Contains(id, "/") || name == "" {
			continue
		}
		var size int64
		fmt.Sscan(f[3], &size)
		byNode[id] = append(byNode[id], File{Name: name, Bytes: size})
	}
	for _, fs := range byNode {
		slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	}
	return byNode, nil
}
