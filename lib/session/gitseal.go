package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/seal"
)

// gitSettings holds git's own settings across a session: the repository's config,
// info/ (attributes, exclude) and hooks (or core.hooksPath), and the
// work tree's git.SequencerState (a session may leave none of it: the
// runner's commit goes through git commit when the user has commit hooks,
// git.CommitIndexAs, and would finish a merge the session began). The runner
// commits with the user's git after the session (DESIGN.md decision 11),
// so a hook or a filter the session installed would run in the runner's
// commit, unchecked: a session may change none of them.
type gitSettings struct {
	seals []*seal.Seal
	rels  []string
	// index is git's index file and stamp what it was when sealed
	// (indexStamp): a session that wrote it may have hidden a change
	// from git in it (git.Repo.ResetIndex).
	index, stamp string
}

// indexStamp says which file p is, without reading it whole: its inode,
// size, modification and change times and its last 32 bytes (git's
// checksum ends there); "" when there is none. Git writes the index to a
// lock file and renames it (a new inode); a write in place moves its
// change time, which no session sets back.
func indexStamp(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "?"
	}
	var tail [32]byte
	n, _ := f.ReadAt(tail[:], max(st.Size()-32, 0))
	ino, _ := fsutil.Inode(st)
	ctime, _ := fsutil.ChangeTime(st)
	return fmt.Sprintf("%d %d %d %d %x", ino, st.Size(), st.ModTime().UnixNano(), ctime.UnixNano(), tail[:n])
}

// IndexTouched reports whether git's index is not the file it was when
// the settings were sealed.
func (g *gitSettings) IndexTouched() bool { return indexStamp(g.index) != g.stamp }

// housekeepingOnly reports whether rel is a file under the sealed git
// directories that only git's housekeeping writes and no git command reads
// as a setting: info/refs, which every repack (git gc, git maintenance)
// rewrites for the dumb HTTP transport, and the temporary file it is
// written to first (info/refs_XXXXXX, renamed over it). A repack may be
// running that no session started (the user's own git commit starts one,
// detached, past gc.auto), so neither is a setting a session changed: a
// seal taken while the temporary file stood saw it "deleted" after the
// session, a guard failed for it. (The other files a repack writes, packs
// and objects/info/packs, are under objects/, which is not sealed.)
func housekeepingOnly(rel string) bool {
	if rel == "info/refs" {
		return true
	}
	suffix, ok := strings.CutPrefix(rel, "info/refs_")
	if !ok || len(suffix) != 6 {
		return false
	}
	for _, c := range suffix {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// sealGit seals repo's config, info/ and hooks.
func sealGit(repo *git.Repo) (*gitSettings, error) {
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, err
	}
	common, gitDir, hooks := dirs.Common, dirs.Git, dirs.Hooks
	// refs/replace: the runner's git ignores replace refs, but the user's
	// does not, and would show the run's history with objects of the
	// session's choosing.
	// commondir: in a git directory it moves git's common directory
	// (config, hooks, refs) elsewhere, even in a plain .git.
	keep := map[string]bool{"config": true, "info": true, "hooks": true, "refs/replace": true, "commondir": true}
	if filepath.Clean(gitDir) == filepath.Clean(common) {
		for _, name := range git.SequencerState {
			keep[name] = true
		}
	}
	g := &gitSettings{index: filepath.Join(gitDir, "index")}
	if f := os.Getenv("GIT_INDEX_FILE"); f != "" {
		g.index = f
		if !filepath.IsAbs(f) {
			g.index = filepath.Join(repo.Root(), f)
		}
	}
	g.stamp = indexStamp(g.index)
	s, err := seal.Take(common, func(rel string) bool {
		return (!keep[strings.SplitN(rel, "/", 2)[0]] && !kept(keep, rel)) || housekeepingOnly(rel)
	})
	if err != nil {
		return nil, err
	}
	g.seals, g.rels = append(g.seals, s), append(g.rels, common)
	if filepath.Clean(gitDir) != filepath.Clean(common) {
		// A linked worktree keeps its merge state in its own git directory.
		s, err := seal.Take(gitDir, func(rel string) bool {
			top := strings.SplitN(rel, "/", 2)[0]
			return top != "commondir" && !slices.Contains(git.SequencerState, top)
		})
		if err != nil {
			return nil, err
		}
		g.seals, g.rels = append(g.seals, s), append(g.rels, gitDir)
	}
	if rel, err := filepath.Rel(common, hooks); err != nil || strings.HasPrefix(rel, "..") {
		// core.hooksPath outside the git directory.
		if s, err = seal.Take(hooks, nil); err != nil {
			return nil, err
		}
		g.seals, g.rels = append(g.seals, s), append(g.rels, hooks)
	}
	return g, nil
}

// Restore puts git's settings back as sealed and returns one reason per
// path, naming who.
func (g *gitSettings) Restore(who string) ([]string, error) {
	var reasons []string
	for i, s := range g.seals {
		notes, err := s.Restore()
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			reasons = append(reasons, fmt.Sprintf("%s changed git's settings: %s/%s; the runner put it back", who, filepath.Base(g.rels[i]), n))
		}
	}
	return reasons, nil
}

// kept reports whether rel is one of keep's two-element entries
// ("refs/replace"), lies under one, or holds one (a directory to walk).
func kept(keep map[string]bool, rel string) bool {
	parts := strings.SplitN(rel, "/", 3)
	if len(parts) == 1 {
		return keep[parts[0]+"/replace"]
	}
	return keep[parts[0]+"/"+parts[1]]
}
