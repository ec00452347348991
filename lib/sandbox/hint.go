package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/treeloop/treeloop/lib/config"
)

// ProgramPaths are the files a program prog runs from, as a process
// started with PATH finds them: where PATH (or prog's own path, relative
// to dir) finds it, where its symlinks lead, and for a script the
// interpreter of its "#!" line (through /usr/bin/env too) with where that
// leads. A sandbox must show each of them for prog to start (a pyenv
// shim, an npm prefix's link to the CLI's script, a venv's interpreter
// linked to a toolchain under the home). Nil when prog is not found.
func ProgramPaths(dir, prog string) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	exe := lookup(dir, prog)
	if exe == "" {
		return nil
	}
	add(exe)
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return out
	}
	add(real)
	if interp := Interpreter(real); interp != "" {
		if p := lookup(dir, interp); p != "" {
			add(p)
			if r, err := filepath.EvalSymlinks(p); err == nil {
				add(r)
			}
		}
	}
	return out
}

// lookup is where a process started in dir finds prog: a name with a
// slash relative to dir, any other on PATH; "" when not found.
func lookup(dir, prog string) string {
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return ""
		}
		prog = p
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	if _, err := os.Stat(prog); err != nil {
		return ""
	}
	return filepath.Clean(prog)
}

// Interpreter is the program a script's "#!" line runs it with (for
// "#!/usr/bin/env NAME", NAME; env's options are skipped), "" for a file
// that is no script or cannot be read.
func Interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
			return f
		}
	}
	return ""
}

// PathsIn are the absolute paths a program's output names ("file://"
// URLs included, a ":line:column" left off), in order, once each: where
// a failed start looked for what it did not find.
func PathsIn(out []byte) []string {
	var ps []string
	for _, m := range pathRe().FindAllSubmatch(out, -1) {
		if p := filepath.Clean(string(m[1])); p != "/" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

var pathRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s'"‘(\x60=]|file://)(/[A-Za-z0-9._@+%~/-]+)`)
})

// ReadableFor is what [sandbox] readable of cfg must add for a session
// working in root to see paths: for each path under the home directory,
// which the sandbox hides, that neither root nor a readable or writable
// path shows, "~/DIR", the directory of the home that holds it (two
// levels under ~/.local, ~/.config and ~/.cache, three under
// ~/.local/share and ~/.local/state, where other programs' files lie
// beside it). In the order of paths, once each; nil when the sandbox
// confines nothing or hides no home.
func ReadableFor(cfg config.Sandbox, root string, paths []string) []string {
	if !cfg.Confined() {
		return nil
	}
	home, _ := os.UserHomeDir()
	home = filepath.Clean(home)
	if home == "" || home == "/" || within(root, home) {
		return nil
	}
	shown := append(expandHome(cfg.Readable, home), expandHome(cfg.Writable, home)...)
	shown = append(shown, root)
	var out []string
	for _, p := range paths {
		if !within(home, p) || p == home || slices.ContainsFunc(shown, func(s string) bool { return within(s, p) }) {
			continue
		}
		if r := "~/" + homeDir(strings.Split(strings.TrimPrefix(p, home+"/"), "/")); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// homeDir is the directory of the home to show for a path whose parts
// under the home are parts (see ReadableFor).
func homeDir(parts []string) string {
	n := 1
	switch {
	case len(parts) > 2 && parts[0] == ".local" && (parts[1] == "share" || parts[1] == "state"):
		n = 3
	case len(parts) > 1 && (parts[0] == ".local" || parts[0] == ".config" || parts[0] == ".cache"):
		n = 2
	}
	if n >= len(parts) {
		n = max(len(parts)-1, 1)
	}
	return strings.Join(parts[:n], "/")
}

// AddReadable is the advice to add the directories add (ReadableFor) to
// [sandbox] readable of the configuration file conf.
func AddReadable(add []string, conf string) string {
	q := make([]string, len(add))
	for i, a := range add {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf("add %s to [sandbox] readable of %s (the sandbox hides your home directory)", strings.Join(q, ", "), conf)
}
