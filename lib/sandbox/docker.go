package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
)

// Container is [sandbox] mode = "docker" (seed 004's Docker executor,
// DESIGN.md decision 19): each confined command runs in a fresh container
// of the engine (docker or podman, the same command line for both but the
// home directory's owner option), which sees only:
//
//   - the image, its root read-only; with the default image
//     (config.DefaultImage, an empty skeleton) the host's /usr and /etc,
//     read-only;
//   - the repository (or worktree) root at its own path, writable, with
//     .git, the git directories and the runner's files read-only as under
//     bwrap (New);
//   - a private, empty /tmp (TMPDIR=/tmp) and an empty home directory at
//     $HOME, with the readable paths read-only and the writable ones
//     writable, each at its own path;
//   - the command itself, read-only, when nothing above shows it.
//
// It runs as the caller's uid:gid (nothing it writes belongs to root
// unless the caller is root), with every capability dropped and no new
// privileges, in its own PID namespace under the engine's init (what it
// leaves running dies with it), with the host's network or none. The
// environment is passed on by name (values never appear in a command
// line). The container is created first (an engine or image problem is
// a *proc.StartError, before anything runs), then started attached; it is
// removed when it ends, and Release removes it by name on every other path:
// the engine's client may be killed (a timeout, a cancel, a killed runner)
// while the container runs on. Every container carries the repository's
// label, so RemoveLeftovers finds what a killed runner left. Build one with
// Open.
type Container struct {
	sb      *Sandbox
	engine  string // docker | podman
	image   string
	host    bool     // the default image: the host's /usr and /etc shown
	home    string   // the empty home directory, "" when none
	name    string   // the session's container name
	repo    string   // the repository's label value
	dir     string   // the session's directory (a label)
	created []string // names created and not yet removed
}

// Container labels: the repository (a hash of its root) and the session's
// directory.
const (
	LabelRepo    = "org.treeloop.repo"
	LabelSession = "org.treeloop.session"
)

// engineTimeout bounds one engine command other than the session itself
// (create, rm, ps, image inspect): generous, since a busy machine may be
// slow, while a dead daemon must not hold a step forever.
const engineTimeout = 2 * time.Minute

func newContainer(sb *Sandbox, cfg config.Sandbox, s Session) *Container {
	c := &Container{sb: sb, engine: cfg.Engine, image: cfg.Image, host: cfg.Image == config.DefaultImage,
		repo: RepoLabel(sb.root), dir: s.Dir, name: ContainerName(sb.root, s)}
	// The home directory is shown empty (a repository under it is
	// mounted on top), unless it lies inside the repository.
	if home, _ := os.UserHomeDir(); home != "" && home != "/" && !within(sb.root, home) {
		c.home = filepath.Clean(home)
	}
	return c
}

// RepoLabel is the value of LabelRepo for the repository at root: 16 hex
// digits of its path's SHA-256.
func RepoLabel(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:8])
}

// ContainerName is the container of session s in the repository at root:
// treeloop-<run>-<iter>-<role>-<hash>, where run and iter are the last two
// elements of s.Dir (the iteration's directory) and hash tells apart two
// repositories with the same run.
func ContainerName(root string, s Session) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root) + "\x00" + filepath.Clean(s.Dir)))
	parts := []string{"treeloop", nameSafe(filepath.Base(filepath.Dir(s.Dir))), nameSafe(filepath.Base(s.Dir)), nameSafe(s.Role), hex.EncodeToString(sum[:4])}
	return strings.Join(parts, "-")
}

// nameSafe keeps the characters a container name may hold (at most 40).
func nameSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Wrap creates the container that runs argv with the environment env and
// returns the engine's command line that starts it attached (stdin, stdout
// and stderr; signals forwarded). Each call creates a new container
// (<name>, <name>-2, ...). Errors: a *proc.StartError naming the engine
// when it is missing or cannot create the container (its own words,
// one line), or naming argv[0] when it cannot be found.
func (c *Container) Wrap(argv, env []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	eng, err := exec.LookPath(c.engine)
	if err != nil {
		return nil, &proc.StartError{Name: c.engine, Err: fmt.Errorf("%w (install %s, or set [sandbox] mode)", err, c.engine)}
	}
	name := c.name
	if n := len(c.created); n > 0 {
		name = fmt.Sprintf("%s-%d", c.name, n+1)
	}
	args, err := c.CreateArgs(name, argv, env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, eng, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		// A create that failed half-way may still have left the name.
		c.created = append(c.created, name)
		return nil, &proc.StartError{Name: c.engine, Err: fmt.Errorf("create the container: %s", engineMessage(out, err))}
	}
	c.created = append(c.created, name)
	return []string{eng, "start", "--attach", "--interactive", name}, nil
}

// CreateArgs are the engine's arguments (after the engine's name) that
// create the container name for argv with the environment env. Errors:
// argv[0] cannot be found (a *proc.StartError), a path the engine's
// --mount syntax cannot carry.
func (c *Container) CreateArgs(name string, argv, env []string) ([]string, error) {
	exe, bind, err := c.command(argv[0])
	if err != nil {
		return nil, err
	}
	network := "host"
	if c.sb.network == config.NetworkNone {
		network = "none"
	}
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	a := []string{"create", "--name", name,
		"--label", LabelRepo + "=" + c.repo, "--label", LabelSession + "=" + c.dir,
		"--rm", "--interactive", "--init", "--pull", "never", "--log-driver", "none",
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--network", network, "--user", uid + ":" + gid, "--workdir", c.sb.root,
		"--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777",
	}
	if c.home != "" {
		// The one option the engines spell apart: the home directory
		// belongs to the session's user.
		owner := "uid=" + uid + ",gid=" + gid
		if c.engine == config.EnginePodman {
			owner = "U"
		}
		a = append(a, "--tmpfs", c.home+":rw,exec,nosuid,nodev,mode=0700,"+owner)
	}
	ms, err := c.mounts(bind)
	if err != nil {
		return nil, err
	}
	a = append(a, ms...)
	for _, n := range c.envNames(env) {
		a = append(a, "--env", n)
	}
	a = append(a, "--env", "TMPDIR=/tmp", "--entrypoint", exe, c.image)
	return append(a, argv[1:]...), nil
}

// command is the program the container runs for name, and the file to show
// read-only at its path ("" when the container sees it anyway). In the
// default image, and for a path, it is looked up as bwrap does (on PATH,
// a relative path from the repository); another image's own programs are
// found on its PATH. Errors: a *proc.StartError naming it.
func (c *Container) command(name string) (exe, bind string, err error) {
	if !c.host && !strings.Contains(name, "/") {
		return name, "", nil
	}
	if !filepath.IsAbs(name) && strings.Contains(name, "/") {
		name = filepath.Join(c.sb.root, name)
	}
	exe, err = exec.LookPath(name)
	if err != nil {
		return "", "", &proc.StartError{Name: name, Err: err}
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", "", &proc.StartError{Name: name, Err: err}
	}
	if c.visible(exe) {
		return exe, "", nil
	}
	// A bind mount shows the file a symlink resolves to.
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, exe, nil
}

// visible reports whether the container shows the host's file p without a
// mount of its own.
func (c *Container) visible(p string) bool {
	if within(c.sb.root, p) {
		return true
	}
	if c.host && slices.ContainsFunc(hostPaths(), func(d string) bool { return within(d, p) }) {
		return true
	}
	return slices.ContainsFunc(append(slices.Clone(c.sb.readable), c.sb.writable...), func(d string) bool {
		_, err := os.Stat(d)
		return err == nil && within(d, p)
	})
}

// mount is one bind mount of the container.
type mount struct {
	path     string
	readOnly bool
}

// mounts are the --mount arguments, in bwrap's order (New): a later mount
// of the same path replaces an earlier one; the engine mounts a path
// before the paths under it. Missing sources are skipped, as bwrap's
// --ro-bind-try does. Errors: a path with a comma or a newline, which
// the --mount syntax cannot carry.
func (c *Container) mounts(exe string) ([]string, error) {
	var ms []mount
	add := func(ro bool, ps ...string) {
		for _, p := range ps {
			if _, err := os.Stat(p); err == nil {
				ms = append(ms, mount{p, ro})
			}
		}
	}
	if c.host {
		add(true, hostPaths()...)
	}
	add(true, c.sb.readable...)
	add(false, c.sb.writable...)
	if exe != "" {
		add(true, exe)
	}
	add(false, c.sb.root)
	add(true, c.sb.readOnly...)
	add(false, c.sb.readWrite...)
	add(true, c.sb.readOnly2...)
	var a []string
	for i, m := range ms {
		if slices.ContainsFunc(ms[i+1:], func(n mount) bool { return n.path == m.path }) {
			continue
		}
		if strings.ContainsAny(m.path, ",\n\"") {
			return nil, fmt.Errorf("sandbox: %q: a path with a comma, a quote or a newline cannot be mounted into a container: rename it", m.path)
		}
		spec := "type=bind,source=" + m.path + ",target=" + m.path
		if m.readOnly {
			spec += ",readonly"
		}
		a = append(a, "--mount", spec)
	}
	return a, nil
}

// envNames are the names of env's variables the container gets from the
// engine's environment: all but TMPDIR (the private /tmp), and PATH for
// an image of its own (its programs are on its own PATH).
func (c *Container) envNames(env []string) []string {
	var names []string
	for _, kv := range env {
		n, _, ok := strings.Cut(kv, "=")
		if !ok || n == "" || n == "TMPDIR" || n == "PATH" && !c.host || slices.Contains(names, n) {
			continue
		}
		names = append(names, n)
	}
	return names
}

// Release removes every container Wrap created, killing what still runs
// in it. A container already gone (removed when it ended) is not an
// error.
func (c *Container) Release() error {
	var first error
	for _, name := range c.created {
		if err := removeContainers(c.engine, name); err != nil && first == nil {
			first = err
		}
	}
	c.created = nil
	return first
}

// removeContainers force-removes containers by name or id, and returns
// once they are gone: one that ended by itself may be in the engine's own
// removal (--rm) already, which rm refuses to start again.
func removeContainers(engine string, names ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, engine, append([]string{"rm", "--force"}, names...)...).CombinedOutput()
	low := bytes.ToLower(out)
	switch {
	case err == nil:
		return nil
	case bytes.Contains(low, []byte("already in progress")):
	case !bytes.Contains(low, []byte("no such container")):
		return fmt.Errorf("remove the container %s: %s", strings.Join(names, ", "), engineMessage(out, err))
	}
	// Some may be gone, some still being removed: wait for all.
	for {
		names = slices.DeleteFunc(names, func(n string) bool {
			out, err := exec.CommandContext(ctx, engine, "container", "inspect", "--format", "{{.Id}}", n).CombinedOutput()
			return err != nil && bytes.Contains(bytes.ToLower(out), []byte("no such"))
		})
		if len(names) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove the container %s: still there after %s", strings.Join(names, ", "), engineTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// RemoveLeftovers removes every container of cfg's engine that carries
// the label of the repository at root, running or not: sessions run one
// at a time, so before a session starts (and when an interrupted one is
// recovered) any such container is one a killed runner left. It returns
// how many it removed.
func RemoveLeftovers(cfg config.Sandbox, root string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, cfg.Engine, "ps", "--all", "--quiet", "--filter", "label="+LabelRepo+"="+RepoLabel(root)).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("list the repository's containers: %s", engineMessage(out, err))
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return 0, nil
	}
	return len(ids), removeContainers(cfg.Engine, ids...)
}

// engineMessage is the first line of what an engine command printed, else
// its error.
func engineMessage(out []byte, err error) string {
	msg := strings.TrimSpace(string(out))
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		return err.Error()
	}
	return msg
}
