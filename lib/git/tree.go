package git

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"path"
	"sort"
	"strings"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// StagedChange is one path whose index entry differs from a commit's tree,
// as `git diff --cached --raw` gives it: the index's mode and object id
// ("000000" and zeros for a path the index no longer has).
type StagedChange struct {
	Mode     string // octal, six digits: 100644, 100755, 120000, 160000 or 000000
	OldMode  string // the tree's mode at the path, as Mode ("000000" where it had none)
	OldID    string // the tree's object id at the path (zeros where it had none)
	ID       string
	Path     string
	Unmerged bool // status U: the index holds conflict stages
}

// Deleted reports a path the index no longer has.
func (c StagedChange) Deleted() bool { return c.Mode == "000000" }

// StagedChanges lists what the index changes against rev's tree: one `git
// diff --cached --raw -z --no-renames --no-abbrev --ignore-submodules=none`
// (every path, submodules included, whatever diff.* settings say).
func (r *Repo) StagedChanges(rev string) ([]StagedChange, error) {
	out, err := r.Run("diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev", "--ignore-submodules=none", rev, "--")
	if err != nil {
		return nil, err
	}
	return parseRaw(out)
}

// parseRaw reads `git diff --raw -z` records: ":<old mode> <new mode>
// <old id> <new id> <status>" NUL <path> NUL.
func parseRaw(out []byte) ([]StagedChange, error) {
	var cs []StagedChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		head := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if !strings.HasPrefix(fields[i], ":") || len(head) != 5 {
			return nil, fmt.Errorf("git diff --raw: unexpected record %q", fields[i])
		}
		cs = append(cs, StagedChange{OldMode: head[0], Mode: head[1], OldID: head[2], ID: head[3], Path: fields[i+1], Unmerged: strings.HasPrefix(head[4], "U")})
	}
	return cs, nil
}

// ErrTreeByHand: TreeWith does not build this tree (a conflict, an
// unusual path or mode, nothing left in it, or a tree of the commit that
// git would not write so: gitfile.CanonicalTree); `git write-tree` does.
var ErrTreeByHand = errors.New("git write-tree needed")

// TreeWith writes, without touching the index, the tree that `git
// write-tree` would write for an index that differs from commit's tree by
// changes (StagedChanges(commit)), and returns its id: the trees of the
// changed paths' directories are read from commit (one `git cat-file
// --batch`), changed in memory, and written bottom up with one `git mktree
// -z --batch`, which checks that every entry's object exists; each id
// mktree prints must equal the one computed here. write-tree would also
// rewrite the whole index to record its cache of tree ids, which is most
// of its time in a large repository. ErrTreeByHand when a
// change is a conflict, a path is not a plain relative path or the tree
// would be empty, or a tree read from commit is not as git writes trees
// (a zero-padded mode, a name twice, entries out of order: rebuilt from
// its entries it would not keep what git's does): the caller runs
// write-tree.
func (r *Repo) TreeWith(commit string, changes []StagedChange) (string, error) {
	var newHash func() hash.Hash
	switch len(commit) {
	case 40:
		newHash = sha1.New
	case 64:
		newHash = sha256.New
	default:
		return "", fmt.Errorf("git mktree: %q is not a commit id", commit)
	}
	names, err := changedDirs(changes)
	if err != nil {
		return "", err
	}
	trees, err := r.readTrees(commit, names, newHash().Size())
	if err != nil {
		return "", err
	}
	for _, c := range changes {
		t := trees[parentDir(c.Path)]
		name := path.Base(c.Path)
		if c.Deleted() {
			delete(t, name)
			continue
		}
		id, err := hex.DecodeString(c.ID)
		if err != nil || len(id) != newHash().Size() {
			return "", fmt.Errorf("git diff --raw: %q is not an object id", c.ID)
		}
		t[name] = gitfile.TreeEntry{Mode: c.Mode, ID: id}
	}
	batch, objs, want, err := gitfile.EncodeTrees(trees, names, newHash)
	if errors.Is(err, gitfile.ErrEmptyTree) {
		return "", ErrTreeByHand
	}
	if objects, ok := r.treesWritable(changes, newHash().Size()); ok {
		for i, obj := range objs {
			id, err := gitfile.WriteLoose(objects, newHash, "tree", obj)
			if err != nil {
				return "", fmt.Errorf("write tree %s: %w", want[i], err)
			}
			if id != want[i] {
				return "", fmt.Errorf("write tree: %s, computed %s", id, want[i])
			}
		}
		return want[len(want)-1], nil
	}
	got, err := run(r.root, batch, "mktree", "-z", "--batch")
	if err != nil {
		return "", err
	}
	ids := strings.Fields(string(got))
	if len(ids) != len(want) {
		return "", fmt.Errorf("git mktree: %d trees for %d", len(ids), len(want))
	}
	for i := range want {
		if ids[i] != want[i] {
			return "", fmt.Errorf("git mktree: tree %s, computed %s", ids[i], want[i])
		}
	}
	return want[len(want)-1], nil
}

// treesWritable is the objects directory to write TreeWith's trees into
// without git, where git would write them the same way (looseWritable,
// with the hash of changes' ids) and mktree's check would pass: every
// blob a change names (a submodule's commit aside) is a loose blob, as
// the git add before it leaves a new file's bytes. ok is false
// otherwise (an id the index names that no object has, a blob kept only
// in a pack): mktree writes them, and checks.
func (r *Repo) treesWritable(changes []StagedChange, hashSize int) (string, bool) {
	objects, newHash, ok := r.looseWritable()
	if !ok || newHash().Size() != hashSize {
		return "", false
	}
	for _, c := range changes {
		if c.Deleted() || c.Mode == "160000" {
			continue
		}
		if typ, ok := gitfile.LooseType(objects, c.ID); !ok || typ != "blob" {
			return "", false
		}
	}
	return objects, true
}

// changedDirs returns the directories the changes touch, the root ("")
// included, sorted; ErrTreeByHand for a change the plain path must make.
func changedDirs(changes []StagedChange) ([]string, error) {
	dirs := map[string]bool{"": true}
	for _, c := range changes {
		if c.Unmerged || !plainPath(c.Path) {
			return nil, ErrTreeByHand
		}
		switch c.Mode {
		case "000000", "100644", "100755", "120000", "160000":
		default:
			return nil, ErrTreeByHand
		}
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	return names, nil
}

// readTrees reads the entries of each directory of names at commit
// through one git cat-file --batch: empty for a directory commit does not
// have (a new one, or one that was a file).
func (r *Repo) readTrees(commit string, names []string, hashSize int) (map[string]gitfile.Tree, error) {
	if trees, ok := r.looseTrees(commit, names); ok {
		return trees, nil
	}
	var in strings.Builder
	for _, d := range names {
		if d == "" {
			in.WriteString(commit + "^{tree}\n")
		} else {
			in.WriteString(commit + ":" + d + "\n")
		}
	}
	out, err := run(r.root, []byte(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	trees := make(map[string]gitfile.Tree, len(names))
	for _, d := range names {
		var rec gitfile.BatchRecord
		if rec, out, err = gitfile.ReadBatch(out); err != nil {
			return nil, err
		}
		entries := gitfile.Tree{}
		if rec.Type == "tree" {
			if entries, err = gitfile.ParseTree(rec.Body, hashSize); err != nil {
				return nil, fmt.Errorf("git cat-file: %w", err)
			}
			if !gitfile.CanonicalTree(rec.Body, entries) {
				return nil, ErrTreeByHand // rebuilt from entries, it would lose what git keeps
			}
		} else if d == "" {
			return nil, fmt.Errorf("git cat-file: %s has no tree", commit)
		}
		trees[d] = entries // a new directory, or one that was a file
	}
	return trees, nil
}

// plainPath: a relative path of non-empty components other than . and ..,
// without line breaks (cat-file --batch reads one name per line).
func plainPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\n\r\x00") {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

func parentDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// maxStaleTrees bounds the directories the index's cache of tree ids may
// leave stale (staleTrees) before IndexTree lets write-tree fill them in:
// git status, add and diff --cached read the trees of stale directories
// from the object database instead of trusting the cache, which slows
// them (bench/fastpaths.md).
const maxStaleTrees = 64

// IndexTree writes the index's tree and returns its id: by TreeWith from
// commit (the commit the index was staged on), leaving the index as it is,
// while the index's cache of tree ids has at most maxStaleTrees stale
// directories; else, or where TreeWith cannot, by WriteTree(by), which
// also fills the cache in again. write-tree spends most of its time
// rewriting the whole index for that cache, which TreeWith does not
// (bench/fastpaths.md). It also returns the index's changes against
// commit (StagedChanges), read while the cache is looked at: nil when
// they could not be read.
func (r *Repo) IndexTree(commit, by string) (string, []StagedChange, error) {
	type count struct {
		n  int
		ok bool
	}
	stale := make(chan count, 1)
	go func() {
		n, ok := r.staleTrees()
		stale <- count{n, ok}
	}()
	cs, err := r.StagedChanges(commit)
	if c := <-stale; err == nil && c.ok && c.n <= maxStaleTrees {
		if tree, err := r.TreeWith(commit, cs); err == nil {
			return tree, cs, nil
		}
	}
	tree, err := r.WriteTree(by)
	return tree, cs, err
}
