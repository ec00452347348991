package git

import (
	"bytes"
	"fmt"
	"strings"
)

// PathChange is one path a diff changed: its status letter as git's
// --name-status gives it (A added, M modified, D deleted, T type changed;
// no rename detection) and the path.
type PathChange struct {
	Status string
	Path   string
}

// FirstParentChanges lists, for each commit on to's first-parent chain
// after from ("" for the whole chain), the paths it changed against its
// first parent (a root commit: against the empty tree), by commit id.
// One git log, replace refs off.
func (r *Repo) FirstParentChanges(from, to string) (map[string][]PathChange, error) {
	rev := to
	if from != "" {
		rev = from + ".." + to
	}
	out, err := runEnv(r.root, noReplace, nil, "log", "--first-parent", "-m", "--no-renames", "--name-status", "-z", "--format=%x1e%H", rev, "--")
	if err != nil {
		return nil, err
	}
	m := map[string][]PathChange{}
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(string(rec), "\x00")
		if len(f) == 0 || f[0] == "" {
			continue
		}
		cs, err := pairs(f[1:])
		if err != nil {
			return nil, fmt.Errorf("git log of %s: %w", f[0], err)
		}
		m[f[0]] = cs
	}
	return m, nil
}

// pairs reads --name-status -z fields: a status, then its path, for each
// path; empty fields (between records) are skipped.
func pairs(f []string) ([]PathChange, error) {
	var out []PathChange
	for i := 0; i < len(f); i++ {
		st := strings.TrimLeft(f[i], "\n")
		if st == "" {
			continue
		}
		if i+1 >= len(f) || !isStatus(st) {
			return nil, fmt.Errorf("unexpected field %q", st)
		}
		out = append(out, PathChange{Status: st, Path: f[i+1]})
		i++
	}
	return out, nil
}

// isStatus reports whether s is a --name-status letter without a score.
func isStatus(s string) bool {
	return len(s) == 1 && s[0] >= 'A' && s[0] <= 'Z'
}

// DiffTrees lists the paths each pair of trees (or commits) differs in,
// from the first to the second, recursively, in the pairs' order: one git
// diff-tree --stdin for all of them.
func (r *Repo) DiffTrees(pairsIn [][2]string) ([][]PathChange, error) {
	out := make([][]PathChange, len(pairsIn))
	if len(pairsIn) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, p := range pairsIn {
		fmt.Fprintf(&in, "%s %s\n", p[0], p[1])
	}
	raw, err := runEnv(r.root, noReplace, in.Bytes(), "diff-tree", "--stdin", "--always", "-r", "--no-renames", "--name-status", "-z")
	if err != nil {
		return nil, err
	}
	// Each pair's output is a line "<a> <b>\n" then, NUL-terminated, a
	// status and a path for each path that differs (none when equal).
	// A status is an upper-case letter, an object id starts with a
	// lower-case hex digit.
	i := -1
	rest := string(raw)
	for rest != "" {
		if c := rest[0]; c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
			head, after, _ := strings.Cut(rest, "\n")
			if i+1 >= len(pairsIn) || head != pairsIn[i+1][0]+" "+pairsIn[i+1][1] {
				return nil, fmt.Errorf("git diff-tree --stdin: unexpected output %.40q", rest)
			}
			i, rest = i+1, after
			continue
		}
		st, after, ok := strings.Cut(rest, "\x00")
		path, after2, ok2 := strings.Cut(after, "\x00")
		if i < 0 || !ok || !ok2 || !isStatus(st) {
			return nil, fmt.Errorf("git diff-tree --stdin: unexpected output %.40q", rest)
		}
		out[i] = append(out[i], PathChange{Status: st, Path: path})
		rest = after2
	}
	if i != len(pairsIn)-1 {
		return nil, fmt.Errorf("git diff-tree --stdin: %d of %d pairs answered", i+1, len(pairsIn))
	}
	return out, nil
}

// TrailerLines lists, for each commit of shas, the lines of its trailers
// whose key is one of keys ("Key: value", as git prints them), by commit
// id: one git log --no-walk. None for no commits.
func (r *Repo) TrailerLines(shas []string, keys ...string) (map[string][]string, error) {
	m := map[string][]string{}
	if len(shas) == 0 {
		return m, nil
	}
	spec := "%(trailers:only,unfold,separator=%x1f"
	for _, k := range keys {
		spec += ",key=" + k
	}
	spec += ")"
	args := append([]string{"log", "--no-walk=unsorted", "--format=%H%x1f" + spec + "%x1e"}, shas...)
	out, err := runEnv(r.root, noReplace, nil, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) == 0 || f[0] == "" {
			continue
		}
		var lines []string
		for _, l := range f[1:] {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		m[f[0]] = lines
	}
	return m, nil
}
