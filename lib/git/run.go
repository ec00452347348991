package git

import (
	"bytes"
	"strings"
)

// RunCommit is one of a run's commits in git history.
type RunCommit struct {
	SHA     string
	Subject string
	// Values are the values of the trailer the caller asked for (none
	// when it asked for none).
	Values []string
}

// Subjects of the runner's commits (DESIGN.md decision 11): a run's
// bootstrap commit (runner-start) and its iteration commits (loop-commit).
const (
	startSubject = "chore(loop): start run "
	iterSubject  = "chore(loop): run "
)

// RunCommits lists run runID's commits reachable from rev, newest first:
// its iteration commits ("chore(loop): run <id> iter …") and its bootstrap
// commit ("chore(loop): start run <id>"), as loop-commit and runner-start
// write them, with the values of trailer (a git trailer key; "" for none)
// in each. One git log.
func (r *Repo) RunCommits(rev, runID, trailer string) ([]RunCommit, error) {
	format := "--format=%H%x1f%s%x1e"
	if trailer != "" {
		format = "--format=%H%x1f%s%x1f%(trailers:key=" + trailer + ",valueonly,separator=%x1f)%x1e"
	}
	out, err := r.Run("log", format, rev, "--")
	if err != nil {
		return nil, err
	}
	iter := iterSubject + runID + " iter "
	start := startSubject + runID
	var cs []RunCommit
	for _, rec := range bytes.Split(out, []byte{0x1e}) {
		f := strings.Split(strings.TrimSpace(string(rec)), "\x1f")
		if len(f) < 2 || !(strings.HasPrefix(f[1], iter) || f[1] == start) {
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
