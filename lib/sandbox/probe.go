package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/proc"
)

// probeTimeout bounds each command of a dry run (a CLI's --version can
// take seconds).
const probeTimeout = 30 * time.Second

// Probe is a dry run of a session in the sandbox s, before any attempt is
// spent on it: each of files (bound writable, as a session's output files
// are) must be writable inside, and argv (a CLI's `--version`; none for a
// command of the user's) must run and exit 0. The error, a *ProbeError,
// says which failed, with the command's own words.
func (s *Sandbox) Probe(files, argv []string) error {
	script := `for f; do : > "$f" || { echo "cannot write $f" >&2; exit 1; }; done`
	cmds := [][]string{append([]string{"sh", "-c", script, "probe"}, files...)}
	if len(argv) > 0 {
		cmds = append(cmds, argv)
	}
	for _, c := range cmds {
		wrapped, err := s.Wrap(c)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		cmd := exec.CommandContext(ctx, wrapped[0], wrapped[1:]...)
		cmd.Env = git.Strip(os.Environ()) // a session's, less its RUNNER_* variables
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			pe := &ProbeError{What: "writing the session's output files", Output: out, Err: err}
			if len(argv) > 0 && c[0] == argv[0] {
				pe.What, pe.Argv = "`"+strings.Join(argv, " ")+"`", argv
			}
			return pe
		}
	}
	return nil
}

// ProbeError is a dry run that failed: at What, with the command's
// output and how it ended.
type ProbeError struct {
	What   string   // "`codex --version`", or the output files' check
	Argv   []string // the command that failed; nil for the output files' check
	Output []byte
	Err    error
}

// Error is "a dry run under the sandbox failed at WHAT: CAUSE", the
// cause the lines of the output that say why (proc.Cause), or how the
// command ended when it printed nothing.
func (e *ProbeError) Error() string {
	msg := proc.CauseLine(e.Output)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("a dry run under the sandbox failed at %s: %s", e.What, msg)
}

// ProbeKey names a passed dry run of the configuration cfg for the agent
// executable bin (its resolved path, size and time) in the user's cache
// directory, so runner-check runs it again only when one of them changed;
// "" when it cannot be named (then the dry run always runs).
func ProbeKey(cfg config.Config, bin string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	stamp := ""
	if p, err := exec.LookPath(bin); err == nil {
		if st, err := os.Stat(p); err == nil {
			stamp = fmt.Sprintf("%s\x00%d\x00%d", p, st.Size(), st.ModTime().UnixNano())
		}
	}
	bw, _ := exec.LookPath(Bin)
	sum := sha256.Sum256(fmt.Appendf(nil, "%+v\x00%q\x00%q\x00%s\x00%s", cfg.Sandbox, cfg.Agent.Backend, cfg.Agent.Fallback, stamp, bw))
	return filepath.Join(dir, "treeloop", "sandbox-probe", hex.EncodeToString(sum[:16]))
}
