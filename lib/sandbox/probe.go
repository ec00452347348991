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
)

// probeTimeout bounds each command of a dry run (a CLI's --version can
// take seconds).
const probeTimeout = 30 * time.Second

// Probe is a dry run of a session in the sandbox s, before any attempt is
// spent on it: each of files (bound writable, as a session's output files
// are) must be writable inside, and argv (a CLI's `--version`; none for a
// command of the user's) must run and exit 0. The error says which failed,
// with the command's own words.
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
		out, err := exec.CommandContext(ctx, wrapped[0], wrapped[1:]...).CombinedOutput()
		cancel()
		if err != nil {
			msg := strings.TrimSpace(string(out))
			if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
				msg = msg[i+1:]
			}
			if msg == "" {
				msg = err.Error()
			}
			what := "writing the session's output files"
			if len(argv) > 0 && c[0] == argv[0] {
				what = "`" + strings.Join(argv, " ") + "`"
			}
			return fmt.Errorf("a dry run under the sandbox failed at %s: %s", what, msg)
		}
	}
	return nil
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
