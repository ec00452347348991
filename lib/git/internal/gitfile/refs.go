package gitfile

import (
	"os"
	"path/filepath"
	"strings"
)

// LooseHead reads the checked-out branch and its commit from the git
// directory gitDir as git reads them (gitrepository-layout(5): HEAD, and
// refs/heads/<branch>, whose loose file wins over packed-refs), when they
// are kept the plain way: HEAD is "ref: refs/heads/<branch>" LF for a
// branch ValidBranchName accepts, and the branch's loose file holds a
// full object id (IsObjectID) and LF. ok is false for anything else (a
// detached HEAD, a packed or reftable ref, an unborn branch, an
// unreadable file), where git must answer.
func LooseHead(gitDir string) (branch, head string, ok bool) {
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", "", false
	}
	branch, found := strings.CutPrefix(string(data), "ref: refs/heads/")
	if branch, found = strings.CutSuffix(branch, "\n"); !found || !ValidBranchName(branch) {
		return "", "", false
	}
	data, err = os.ReadFile(filepath.Join(gitDir, "refs", "heads", filepath.FromSlash(branch)))
	if err != nil {
		return "", "", false
	}
	head, found = strings.CutSuffix(string(data), "\n")
	if !found || !IsObjectID(head) {
		return "", "", false
	}
	return branch, head, true
}

// ValidBranchName is a conservative subset of git-check-ref-format(1):
// a plain branch name that cannot step outside refs/heads/ as a file
// path (no empty, "." or ".."-led component, no ".lock" end, none of
// git's forbidden characters).
func ValidBranchName(name string) bool {
	if strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".") {
			return false
		}
	}
	return !strings.ContainsAny(name, "\\ ~^:?*[\x00\x7f")
}
