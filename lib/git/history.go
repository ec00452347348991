package git

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// noReplace is the environment of the reads and writes that build a
// branch from a run's history: git's replace refs (refs/replace/, which
// anything that can write the repository may add) do not stand in for
// the objects the history names.
var noReplace = []string{"GIT_NO_REPLACE_OBJECTS=1"}

// Ident is a commit's author or committer: name, email and date (ISO 8601,
// as %aI gives it).
type Ident struct {
	Name, Email, Date string
}

// LogEntry is one commit of a first-parent history.
type LogEntry struct {
	SHA       string
	Tree      string
	Parent    string // the first parent, "" for a root commit
	Subject   string
	Author    Ident
	Committer Ident
}

// FirstParentLog lists the commits on rev's first-parent chain, oldest
// first: one `git log --first-parent`, replace refs off.
func (r *Repo) FirstParentLog(rev string) ([]LogEntry, error) {
	out, err := runEnv(r.root, noReplace, nil, "log", "--first-parent", "--reverse",
		"--format=%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%s%x1e", rev, "--")
	if err != nil {
		return nil, err
	}
	var log []LogEntry
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		rec = bytes.TrimLeft(rec, "\n")
		if len(rec) == 0 {
			continue
		}
		f := strings.Split(string(rec), "\x1f")
		if len(f) != 10 {
			return nil, fmt.Errorf("git log: unexpected record %q", rec)
		}
		parent, _, _ := strings.Cut(f[2], " ")
		log = append(log, LogEntry{
			SHA: f[0], Tree: f[1], Parent: parent, Subject: f[9],
			Author:    Ident{Name: f[3], Email: f[4], Date: f[5]},
			Committer: Ident{Name: f[6], Email: f[7], Date: f[8]},
		})
	}
	return log, nil
}

// CommitTree makes a commit object of tree with parents and message (used
// as given: the caller writes it clean) by author and committer, and
// returns its id; no reference moves. The user's commit.gpgSign does not
// apply (commit-tree does not read it).
func (r *Repo) CommitTree(tree string, parents []string, message string, author, committer Ident) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	env := append(append([]string(nil), noReplace...),
		"GIT_AUTHOR_NAME="+author.Name, "GIT_AUTHOR_EMAIL="+author.Email, "GIT_AUTHOR_DATE="+author.Date,
		"GIT_COMMITTER_NAME="+committer.Name, "GIT_COMMITTER_EMAIL="+committer.Email, "GIT_COMMITTER_DATE="+committer.Date)
	out, err := runEnv(r.root, env, []byte(message), args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ErrConflict is MergeTree's error when the two sides change the same
// lines or paths; Conflict lists the paths.
var ErrConflict = errors.New("the changes conflict")

// Conflict is a merge that did not resolve: the paths in conflict.
type Conflict struct{ Paths []string }

func (c *Conflict) Error() string {
	return ErrConflict.Error() + " in " + strings.Join(c.Paths, ", ")
}

func (c *Conflict) Unwrap() error { return ErrConflict }

// MergeTree merges the commits ours and theirs in memory (`git merge-tree
// --write-tree`, git 2.38 or later; no index or work tree is touched) and
// returns the merged tree's id, or a *Conflict naming the paths.
func (r *Repo) MergeTree(ours, theirs string) (string, error) {
	out, err := runEnv(r.root, noReplace, nil, "merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", ours, theirs)
	var ee *exec.ExitError
	switch {
	case err == nil:
		tree, _, _ := strings.Cut(string(out), "\x00")
		return strings.TrimSpace(tree), nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		// "<tree>" NUL then the conflicted paths, each NUL-terminated, an
		// empty one ending the list.
		f := strings.Split(string(out), "\x00")
		c := &Conflict{}
		for _, p := range f[1:] {
			if p == "" {
				break
			}
			if len(c.Paths) == 0 || c.Paths[len(c.Paths)-1] != p {
				c.Paths = append(c.Paths, p)
			}
		}
		return "", c
	}
	return "", err
}

// SetBranch points refs/heads/name at commit, with old the value it must
// have now ("" for none: the branch must not exist), and msg in the
// reflog.
func (r *Repo) SetBranch(name, commit, old, msg string) error {
	if old == "" {
		old = strings.Repeat("0", len(commit))
	}
	_, err := r.Run("update-ref", "-m", msg, "refs/heads/"+name, commit, old)
	return err
}

// ValidBranchName reports whether name is a branch name git accepts.
func (r *Repo) ValidBranchName(name string) bool {
	if strings.HasPrefix(name, "-") {
		return false
	}
	_, err := r.Run("check-ref-format", "--branch", name)
	return err == nil
}

// RootEntry is one entry of a root tree by name: its mode and object id;
// the zero RootEntry stands for no such entry.
type RootEntry struct {
	Mode string // as in a tree object: 40000 for a directory
	ID   string // hex
}

// WithRootEntry returns, for each tree id of trees, the id of that tree
// with its root entry name set to e (removed when e is the zero
// RootEntry), and the entry name has in from (a tree id; "" for none).
// One `git cat-file --batch` reads the root trees and one `git mktree -z
// --batch` writes the new ones.
func (r *Repo) WithRootEntry(trees []string, name, from string) (out []string, e RootEntry, err error) {
	var in strings.Builder
	for _, t := range trees {
		in.WriteString(t + "^{tree}\n")
	}
	if from != "" {
		in.WriteString(from + "^{tree}\n")
	}
	raw, err := runEnv(r.root, noReplace, []byte(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, RootEntry{}, err
	}
	parsed := make([]gitfile.Tree, 0, len(trees)+1)
	for range len(trees) + boolInt(from != "") {
		var rec gitfile.BatchRecord
		if rec, raw, err = gitfile.ReadBatch(raw); err != nil {
			return nil, RootEntry{}, err
		}
		if rec.Type != "tree" {
			return nil, RootEntry{}, fmt.Errorf("git cat-file: tree %d of %d is missing", len(parsed)+1, len(trees))
		}
		idLen := 20
		if len(trees) > 0 && len(trees[0]) == 64 {
			idLen = 32
		}
		t, err := gitfile.ParseTree(rec.Body, idLen)
		if err != nil {
			return nil, RootEntry{}, fmt.Errorf("git cat-file: %w", err)
		}
		parsed = append(parsed, t)
	}
	var set *gitfile.TreeEntry
	if from != "" {
		if te, ok := parsed[len(parsed)-1][name]; ok {
			set = &te
			e = RootEntry{Mode: te.Mode, ID: hex.EncodeToString(te.ID)}
		}
		parsed = parsed[:len(parsed)-1]
	}
	var batch bytes.Buffer
	for _, t := range parsed {
		delete(t, name)
		if set != nil {
			t[name] = *set
		}
		_, lines := gitfile.EncodeTree(t)
		batch.Write(lines)
		batch.WriteByte(0)
	}
	got, err := runEnv(r.root, noReplace, batch.Bytes(), "mktree", "-z", "--batch")
	if err != nil {
		return nil, RootEntry{}, err
	}
	out = strings.Fields(string(got))
	if len(out) != len(trees) {
		return nil, RootEntry{}, fmt.Errorf("git mktree: %d trees for %d", len(out), len(trees))
	}
	return out, e, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
