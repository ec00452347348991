package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/keyval"
	"github.com/treeloop/treeloop/lib/pathglob"
)

// Keys of files (protected_paths "FILE#KEY", config.ProtectedKey): the
// value at KEY of every file FILE matches must not change (be added,
// removed or modified); the rest of the file may. A change at a protected
// key puts the whole file back as it was, the session's other changes to
// it included: the reason says so.

// KeysOf is the key entries of entries whose file glob matches p, in
// entries' order: the keys protected in p.
func KeysOf(p string, entries []string) []string {
	var out []string
	for _, e := range entries {
		if file, _, ok := config.ProtectedKey(e); ok && pathglob.Match(file, p) {
			out = append(out, e)
		}
	}
	return out
}

// Guarded reports whether p is protected whole (ProtectedBy) or at a key
// (KeysOf).
func Guarded(p string, entries []string) bool {
	if _, _, ok := ProtectedBy(p, entries); ok {
		return true
	}
	return len(KeysOf(p, entries)) > 0
}

// changedKeys is the key entries of keys whose value differs between
// before and after, two versions of the file p (nil: no file).
func changedKeys(p string, keys []string, before, after []byte) []string {
	var out []string
	for _, e := range keys {
		_, k, _ := config.ProtectedKey(e)
		if keyval.Changed(p, k, before, after) {
			out = append(out, e)
		}
	}
	return out
}

// restoredWhole is what the runner did about a change at a protected key.
const restoredWhole = "put the whole file back as it was before the session, its other changes too"

// keyReason words a change at protected keys of p.
func keyReason(who, p string, entries []string, restored string) string {
	keys := make([]string, len(entries))
	for i, e := range entries {
		_, keys[i], _ = config.ProtectedKey(e)
	}
	return fmt.Sprintf("%s changed %s in %s (protected_paths %s); the runner %s", who, strings.Join(keys, ", "), p, strings.Join(entries, ", "), restored)
}

// enforceKeys checks the file p, changed since base and not held, against
// the keys protected in it: when one differs from base (or p is no
// regular file it can read now), p goes back to base's (removed when base
// has none) and the reason is returned.
func enforceKeys(repo *git.Repo, who, base, p string, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	was, found, err := repo.ShowFile(base, p)
	if err != nil {
		return nil, err
	}
	if !found {
		was = nil
	}
	full := filepath.Join(repo.Root(), filepath.FromSlash(p))
	changed := keys
	if st, err := os.Lstat(full); os.IsNotExist(err) {
		changed = changedKeys(p, keys, was, nil)
	} else if err == nil && st.Mode().IsRegular() {
		if now, err := os.ReadFile(full); err == nil {
			changed = changedKeys(p, keys, was, now)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	if found {
		if _, err := repo.Run("checkout", base, "--", p); err != nil {
			return nil, err
		}
		return []string{keyReason(who, p, changed, restoredWhole)}, nil
	}
	if _, err := repo.Run("rm", "-q", "--cached", "--ignore-unmatch", "--", p); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(full); err != nil {
		return nil, err
	}
	return []string{keyReason(who, p, changed, "removed the file, which did not exist before")}, nil
}
