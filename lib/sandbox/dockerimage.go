package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
)

// legacyRoots are the top-level directories a host may keep apart from
// /usr: on a merged-/usr host (Debian 12, Fedora, Arch) they are symlinks
// into /usr; elsewhere real directories the default image shows too.
var legacyRoots = []string{"bin", "lib", "lib32", "lib64", "libx32"}

// hostPaths are the host's directories a session in the default image runs
// with, read-only: its programs and their configuration (Debian's
// alternatives, CA certificates, git's system config, users and groups),
// and on a host without a merged /usr its /bin and /lib directories.
func hostPaths() []string {
	ps := []string{"/usr", "/etc"}
	for _, d := range legacyRoots {
		if st, err := os.Lstat("/" + d); err == nil && st.IsDir() {
			ps = append(ps, "/"+d)
		}
	}
	return ps
}

// Skeleton is the default image's file system, as a tar archive: empty
// directories to mount on (a real /sbin, where the engine's init is
// mounted), /tmp, and /bin, /lib... as the host has them (links into /usr,
// or directories to mount the host's on).
func Skeleton() ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mod := time.Unix(0, 0)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: mod})
	}
	for _, d := range []string{"usr", "etc", "proc", "sys", "dev", "run", "sbin", "var", "home", "root"} {
		if err := dir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := dir("tmp", 0o1777); err != nil {
		return nil, err
	}
	for _, d := range legacyRoots {
		st, err := os.Lstat("/" + d)
		switch {
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink("/" + d)
			if err != nil {
				return nil, err
			}
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: d, Linkname: target, Mode: 0o777, ModTime: mod})
			if err != nil {
				return nil, err
			}
		case st.IsDir():
			if err := dir(d, 0o755); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BuildImage makes the default image (config.DefaultImage) in cfg's
// engine from the Skeleton, replacing an older one, and returns the
// engine's id for it. Errors: the engine is missing or refuses.
func BuildImage(cfg config.Sandbox) (string, error) {
	eng, err := exec.LookPath(cfg.Engine)
	if err != nil {
		return "", fmt.Errorf("%s is not installed: %w", cfg.Engine, err)
	}
	skel, err := Skeleton()
	if err != nil {
		return "", fmt.Errorf("build the skeleton: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	old, _ := exec.CommandContext(ctx, eng, "image", "inspect", "--format", "{{.Id}}", config.DefaultImage).Output()
	cmd := exec.CommandContext(ctx, eng, "import", "--message", "treeloop: the host's /usr and /etc run in it", "-", config.DefaultImage)
	cmd.Stdin = bytes.NewReader(skel)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s import: %s", cfg.Engine, engineMessage(stderr.Bytes(), err))
	}
	id := lastLine(out)
	// The image replaced, now without a name, is removed unless a
	// container still uses it.
	if prev := strings.TrimSpace(string(old)); prev != "" && !strings.HasSuffix(prev, strings.TrimPrefix(id, "sha256:")) {
		exec.CommandContext(ctx, eng, "image", "rm", prev).Run()
	}
	return id, nil
}

// lastLine is the last non-empty line of out.
func lastLine(out []byte) string {
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// CheckEngine reports what keeps mode "docker" from working here: the
// engine missing or not answering, the image missing (with what to do).
// An empty list means a session can be created. For runner-check.
func CheckEngine(cfg config.Sandbox) []string {
	eng, err := exec.LookPath(cfg.Engine)
	if err != nil {
		return []string{fmt.Sprintf("sandbox: %s is not installed (apt-get install docker.io, or podman), or set [sandbox] engine or mode", cfg.Engine)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, eng, "image", "inspect", "--format", "{{.Id}}", cfg.Image).CombinedOutput()
	if err == nil {
		return nil
	}
	msg := engineMessage(out, err)
	low := strings.ToLower(msg)
	switch {
	case !strings.Contains(low, "no such image") && !strings.Contains(low, "image not known"):
		return []string{fmt.Sprintf("sandbox: %s does not answer: %s (start it, or set [sandbox] mode)", cfg.Engine, msg)}
	case cfg.Image == config.DefaultImage:
		return []string{fmt.Sprintf("sandbox: the image %s is not built in %s: run runner-check --build-image", cfg.Image, cfg.Engine)}
	}
	return []string{fmt.Sprintf("sandbox: the image %s is not in %s: build or load it (sessions never pull one), or set [sandbox] image", cfg.Image, cfg.Engine)}
}
