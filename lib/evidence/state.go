package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// State is what the work tree holds at the paths that differ from the
// commit it is judged against (git.Repo.ChangesSince lists them): each
// path (slash-separated, as git lists it; "dir/" for a repository git
// does not look into) and its digest, "-" when it is absent. A path
// outside a State is as the commit holds it.
type State map[string]string

// StateOf digests each of paths as the work tree under root holds it
// now: a regular file by its content and its executable bit, a symbolic
// link by its target, a directory (a repository inside the work tree, a
// submodule) by its kind alone. Read before and after the guard's run,
// two States tell what the run changed among the files the iteration
// commits (Differ). Errors: a path that exists and cannot be read.
func StateOf(root string, paths []string) (State, error) {
	s := make(State, len(paths))
	for _, p := range paths {
		d, err := digest(filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/"))))
		if err != nil {
			return nil, err
		}
		s[p] = d
	}
	return s, nil
}

// digest is StateOf's digest of the file at p.
func digest(p string) (string, error) {
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "-", nil // gone, or a directory above it made a file
	}
	if err != nil {
		return "", err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		return "l " + target, err
	case st.IsDir():
		return "d", nil
	case !st.Mode().IsRegular():
		return "o " + st.Mode().Type().String(), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	kind := "f "
	if st.Mode()&0o111 != 0 {
		kind = "x "
	}
	return kind + hex.EncodeToString(h.Sum(nil)), nil
}

// Differ lists, sorted, the paths whose digest differs between a and b:
// a path in one State only differs too, since in the other it is as the
// commit holds it.
func Differ(a, b State) []string {
	var out []string
	for p, d := range a {
		if e, ok := b[p]; !ok || e != d {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Touch sets the modification time of each of paths (slash paths under
// root; a regular file: a link or a directory is left alone) modified
// before olderThan (the zero time: every one) to now, before a guard's
// run: a build tool that trusts modification times (cargo's fingerprints,
// make) would take a file whose time a session set back for the one its
// caches were built from, and reuse that build. A file the session wrote
// has a newer time and keeps it (touched, a source would have bytecode
// that records its time made again on every run). A path gone is skipped.
// Errors: a file whose time cannot be set.
func Touch(root string, paths []string, olderThan time.Time) error {
	now := time.Now()
	for _, p := range paths {
		f := filepath.Join(root, filepath.FromSlash(p))
		st, err := os.Lstat(f)
		if err != nil || !st.Mode().IsRegular() || !olderThan.IsZero() && !st.ModTime().Before(olderThan) {
			continue
		}
		if err := os.Chtimes(f, now, now); err != nil {
			return err
		}
	}
	return nil
}
