package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/proc"
)

// A CLI's version is provenance (agent.json cli_version), asked of the CLI
// once per binary: `<cli> --version` can take seconds (Gemini CLI takes 4-6
// on an idle machine), so the answer is cached in the user cache directory
// by the binary's resolved path, modification time and size. runner-check
// asks before an iteration is allocated, so a session finds it cached;
// only a session started without it (agent-exec alone) asks itself.

// probeTimeout bounds the question asked at the start of a session.
const probeTimeout = 10 * time.Second

// cliVersion is bin's version for a session: the cached answer, else
// `bin --version` asked within probeTimeout; "" when it cannot tell.
func cliVersion(ctx context.Context, bin string) string {
	if v, ok := CachedCLIVersion(bin); ok {
		return v
	}
	return ProbeCLIVersion(ctx, bin, probeTimeout)
}

// versionKey names bin's cache entry; ok is false when bin cannot be
// found.
func versionKey(bin string) (path string, ok bool) {
	abs, err := exec.LookPath(bin)
	if err != nil {
		return "", false
	}
	if abs, err = filepath.Abs(abs); err != nil {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", false
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", abs, st.ModTime().UnixNano(), st.Size()))
	return filepath.Join(dir, "treeloop", "cli-version", hex.EncodeToString(sum[:16])), true
}

// CachedCLIVersion is the cached version of bin, if its current binary has
// been asked.
func CachedCLIVersion(bin string) (string, bool) {
	path, ok := versionKey(bin)
	if !ok {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// ProbeCLIVersion asks `bin --version` within timeout and caches a
// non-empty answer (one line, at most 100 bytes); "" when it cannot tell.
func ProbeCLIVersion(ctx context.Context, bin string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	proc.ShelterChild(cmd)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	v := oneLine(string(out), 100)
	if path, ok := versionKey(bin); ok && v != "" {
		if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
			_ = fsutil.WriteAtomic(path, []byte(v), 0o644) // a cache: failing to write it loses nothing
		}
	}
	return v
}
