package agent

import (
	"context"
	"os/exec"
	"time"

	"github.com/treeloop/treeloop/lib/passcache"
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

// versionKey names bin's cache entry: its resolved binary's path and
// stamp.
func versionKey(bin string) *passcache.Key { return passcache.New("cli-version").Binary(bin) }

// CachedCLIVersion is the cached version of bin, if its current binary has
// been asked.
func CachedCLIVersion(bin string) (string, bool) {
	v, ok := versionKey(bin).Get()
	return string(v), ok
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
	if v != "" {
		versionKey(bin).Put([]byte(v))
	}
	return v
}
