package sandbox

import (
	"fmt"

	"github.com/treeloop/treeloop/lib/config"
)

// Confiner runs commands confined in the [sandbox] mode it was opened for:
// bubblewrap (Sandbox) or a container of a container engine (Container).
type Confiner interface {
	// Wrap returns the command line that runs argv, whose environment
	// will be env ("KEY=value" entries), confined. A command or a
	// program the sandbox needs that cannot be found is a
	// *proc.StartError.
	Wrap(argv, env []string) ([]string, error)
	// Release ends what the confined commands may have left behind (a
	// container whose engine client was killed). Call it once they have
	// ended, on every path, before their work is judged; calling it again
	// does nothing.
	Release() error
}

// Session names the confined command for a container engine: its Role
// ("agent", "guard") and Dir, the directory it belongs to (the
// iteration's), which together name its container.
type Session struct {
	Role string
	Dir  string
}

// Open returns the Confiner of cfg.Mode ("bwrap" or "docker") for a
// command working in root, with writable and readOnly as for New. Errors:
// the mode confines nothing, or as New.
func Open(cfg config.Sandbox, root string, writable, readOnly []string, s Session) (Confiner, error) {
	sb, err := New(cfg, root, writable, readOnly)
	if err != nil {
		return nil, err
	}
	return confiner(sb, cfg, s)
}

// OpenDir is Open for a directory that is no repository (NewDir).
func OpenDir(cfg config.Sandbox, root string, writable, shown []string, s Session) (Confiner, error) {
	return confiner(NewDir(cfg, root, writable, shown), cfg, s)
}

func confiner(sb *Sandbox, cfg config.Sandbox, s Session) (Confiner, error) {
	switch cfg.Mode {
	case config.SandboxBwrap:
		return bwrap{sb}, nil
	case config.SandboxDocker:
		return newContainer(sb, cfg, s), nil
	}
	return nil, fmt.Errorf("sandbox mode %q confines nothing", cfg.Mode)
}

// bwrap is a Sandbox as a Confiner: bwrap passes the environment on as it
// is, and whatever the command leaves dies with it (--die-with-parent, its
// own PID namespace).
type bwrap struct{ *Sandbox }

func (b bwrap) Wrap(argv, _ []string) ([]string, error) { return b.Sandbox.Wrap(argv) }
func (bwrap) Release() error                            { return nil }
