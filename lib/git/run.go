package git

import (
	"bytes"
	"strings"

	"github.com/treeloop/treeloop/lib/subject"
)

// RunCommit is one of a run's commits in git history.
type RunCommit struct {
	SHA     string
	Subject string
	// Values are the values of the trailer the caller asked for (none
	// when it asked for none).
	Values []string
}

// RunCommits lists run runID's commits reachable from rev, newest first:
// its iteration commits and its bootstrap commit, as loop-commit and
// runner-start write them (subject.OfRun), with the values of trailer (a
// git trailer key; "" for none) in each. One git log.
func (r *Repo) RunCommits(rev, runID, trailer string) ([]RunCommit, error) {
	format := "--format=%H%x1f%s%x1e"
	if trailer != "" {
		format = "--format=%H%x1f%s%x1f%(trailers:key=" + trailer + ",valueonly,separator=%x1f)%x1e"
	}
	out, err := r.Run("log", format, rev, "--")
	if err != nil {
		return nil, err
	}
	var cs []RunCommit
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) < 2 || !subject.OfRun(f[1], runID) {
			continue
		}
		c := RunCommit{SHA: f[0], Subject: f[1]}
		if trailer != "" {
			c.Values = f[2:]
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// RunCommitsSince is RunCommits(from+".."+to, runID, "") that also tells
// whether from is an ancestor of to (from != to), in the same git log:
// it is exactly when from is one of the range's boundary commits (the
// excluded parents of the commits listed), since a commit from descends
// from has from as a parent on some path. ok is false when from is not an
// ancestor or git cannot read the range (from no longer exists).
func (r *Repo) RunCommitsSince(from, to, runID string) (cs []RunCommit, ok bool) {
	out, err := r.Run("log", "--boundary", "--format=%m%H%x1f%s%x1e", from+".."+to, "--")
	if err != nil {
		return nil, false
	}
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) < 2 || f[0] == "" {
			continue
		}
		mark, sha := f[0][0], f[0][1:]
		if mark == '-' {
			ok = ok || sha == from
			continue
		}
		if subject.OfRun(f[1], runID) {
			cs = append(cs, RunCommit{SHA: sha, Subject: f[1]})
		}
	}
	return cs, ok
}
