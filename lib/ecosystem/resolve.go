package ecosystem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// resolver finds the programs a session starts as a process in the
// repository would (on PATH, a relative path from the root), follows them
// through symbolic links, scripts' interpreters ("#!/usr/bin/env node")
// and version managers' shims (a pyenv or asdf shim is a script that runs
// the manager, which runs the real interpreter), and collects the places
// under the home directory they live in: what the sandbox, which hides
// the home, must show for them to start.
type resolver struct {
	e     Env
	seen  map[string]bool
	found []string // "~/…" paths
}

func newResolver(e Env) *resolver { return &resolver{e: e, seen: map[string]bool{}} }

// maxDepth bounds how far one program is followed.
const maxDepth = 8

// need resolves the program prog and returns why it needs what it needs
// ("python3 resolves to ~/.pyenv/shims/python3"), "" when it lives
// nowhere under the home directory (or is not found).
func (r *resolver) need(prog string) string {
	before := len(r.found)
	chain := r.follow(prog, "", 0)
	if len(r.found) == before || len(chain) == 0 {
		return ""
	}
	return prog + " resolves to " + strings.Join(chain, " → ")
}

// follow resolves prog (dir: the directory a relative path is from, the
// root when "") and returns the files it went through, as shown to a
// person.
func (r *resolver) follow(prog, dir string, depth int) []string {
	if depth > maxDepth {
		return nil
	}
	p := r.lookPath(prog, dir)
	if p == "" || r.seen[p] {
		return nil
	}
	r.seen[p] = true
	chain := []string{r.show(p)}
	r.place(p)
	// Each link on the way, then the file it ends at.
	cur := p
	for range maxDepth {
		target, err := os.Readlink(cur)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(cur), target)
		}
		cur = filepath.Clean(target)
		r.place(cur)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return chain
	}
	if real != p {
		chain = append(chain, r.show(real))
		r.place(real)
	}
	r.venv(real, p)
	head := readHead(real)
	if !bytes.HasPrefix(head, []byte("#!")) {
		return chain
	}
	// A script: what its "#!" line runs, and the files under the home
	// directory it names (a shim's manager).
	var named []string
	for _, q := range r.homePaths(head) {
		r.place(q)
		if st, err := os.Stat(q); err == nil && st.Mode().IsRegular() && !slices.Contains(named, r.show(q)) {
			named = append(named, r.show(q))
		}
	}
	last := len(chain) - 1
	if len(named) > 0 {
		chain[last] += ", a script naming " + strings.Join(named, ", ")
	}
	if interp := interpreter(head); interp != "" {
		before := len(r.found)
		if sub := r.follow(interp, filepath.Dir(real), depth+1); len(r.found) > before {
			chain[last] += ", run by " + interp + " (" + strings.Join(sub, " → ") + ")"
		}
	}
	return chain
}

// lookPath finds prog: an absolute path as it is, a relative one with a
// slash from dir (else the root), a name on PATH. "" when not found.
func (r *resolver) lookPath(prog, dir string) string {
	if prog == "" {
		return ""
	}
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			if dir == "" {
				dir = r.e.Root
			}
			prog = filepath.Join(dir, prog)
		}
		if st, err := os.Stat(prog); err == nil && !st.IsDir() {
			return filepath.Clean(prog)
		}
		return ""
	}
	for _, d := range filepath.SplitList(r.e.Getenv("PATH")) {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(r.e.Root, d)
		}
		c := filepath.Join(d, prog)
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// venv notes a Python virtual environment's base interpreter: a
// pyvenv.cfg beside the bin directory of the interpreter names it
// ("home = ~/.pyenv/versions/3.12.1/bin").
func (r *resolver) venv(paths ...string) {
	for _, p := range paths {
		cfg := filepath.Join(filepath.Dir(filepath.Dir(p)), "pyvenv.cfg")
		data, err := os.ReadFile(cfg)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "=")
			if ok && strings.TrimSpace(k) == "home" {
				r.place(strings.TrimSpace(v))
			}
		}
	}
}

// readHead is the first 64 KiB of the file at p.
func readHead(p string) []byte {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	return buf[:n]
}

// interpreter is the program a script's "#!" line runs ("node" for
// "#!/usr/bin/env node", "/bin/sh" for "#!/bin/sh"), "" for no script.
func interpreter(head []byte) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return ""
	}
	if filepath.Base(f[0]) != "env" {
		return f[0]
	}
	for _, a := range f[1:] {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		return a
	}
	return ""
}

// homePaths are the absolute paths under the home directory a script
// names (a pyenv shim's `exec "/home/u/.pyenv/libexec/pyenv"`): the home's
// path where a path begins (not inside another, /mnt/backup/home/u/x).
func (r *resolver) homePaths(script []byte) []string {
	if r.e.Home == "" {
		return nil
	}
	re := regexp.MustCompile(`(?:^|[^\w./~-])(` + regexp.QuoteMeta(r.e.Home) + `/[^\s"'$;:|&()<>` + "`" + `]+)`)
	var out []string
	for _, m := range re.FindAllSubmatch(script, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// place records the place under the home directory that holds p (place),
// with what the manager there reads beside it.
func (r *resolver) place(p string) {
	rel, ok := r.underHome(p)
	if !ok {
		return
	}
	root := place(rel)
	if root == "" {
		return
	}
	r.add("~/" + root)
	home := r.e.Home
	switch root {
	case ".asdf":
		r.addIf(home, ".tool-versions", ".asdfrc")
	case ".local/share/mise":
		r.addIf(home, ".config/mise", ".tool-versions")
	case ".cargo/bin":
		// A rustup proxy (cargo, rustc) runs the toolchain in ~/.rustup.
		rustup := filepath.Join(home, ".cargo", "bin", "rustup")
		if a, err := os.Stat(p); err == nil {
			if b, err := os.Stat(rustup); err == nil && os.SameFile(a, b) {
				r.addIf(home, ".rustup")
			}
		}
	}
}

// addIf adds each of rels under home that exists.
func (r *resolver) addIf(home string, rels ...string) {
	for _, rel := range rels {
		if exists(home, rel) {
			r.add("~/" + rel)
		}
	}
}

// add records a "~/…" path.
func (r *resolver) add(p string) {
	if !slices.Contains(r.found, p) {
		r.found = append(r.found, p)
	}
}

// underHome is p relative to the home directory, when it lies there and
// not in the repository (which the sandbox shows anyway).
func (r *resolver) underHome(p string) (string, bool) {
	if r.e.Home == "" || r.e.Home == "/" {
		return "", false
	}
	if within(r.e.Root, p) {
		return "", false
	}
	rel, err := filepath.Rel(r.e.Home, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// within reports whether p is dir or under it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// show is p as a person reads it: "~/…" under the home directory,
// relative in the repository.
func (r *resolver) show(p string) string {
	if within(r.e.Root, p) {
		if rel, err := filepath.Rel(r.e.Root, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	if rel, ok := r.underHome(p); ok {
		return "~/" + rel
	}
	return p
}

// roots are the recorded paths, sorted, without one that lies under
// another.
func (r *resolver) roots() []string {
	all := sortedUnique(r.found)
	var out []string
	for _, p := range all {
		if !slices.ContainsFunc(out, func(q string) bool { return strings.HasPrefix(p, q+"/") }) {
			out = append(out, p)
		}
	}
	return out
}

// place is the directory under the home directory (rel: a path relative
// to it) that holds a program's installation, as the sandbox should show
// it: a version manager's or tool's own directory (~/.pyenv, ~/.nvm,
// ~/.volta, ~/.asdf, ~/.npm-global), one of ~/.local's (~/.local/bin,
// ~/.local/share/pipx), ~/.cargo/bin (never the rest of ~/.cargo, which
// holds registry credentials), an npm prefix (the part before
// lib/node_modules), an installation's directory above its bin, else the
// file's directory. Never the whole home, ~/.config or ~/.cache.
func place(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 {
		return "" // a file right in the home directory
	}
	switch parts[0] {
	case ".local", ".config", ".cache":
		if len(parts) >= 3 && parts[1] != "bin" {
			return strings.Join(parts[:3], "/")
		}
		if parts[1] == "bin" {
			return parts[0] + "/bin"
		}
		return ""
	case ".cargo":
		if parts[1] == "bin" {
			return ".cargo/bin"
		}
		return ""
	case ".ssh", ".gnupg", ".aws", ".docker", ".kube", ".netrc", ".npmrc", ".pypirc":
		return ""
	}
	if strings.HasPrefix(parts[0], ".") {
		return parts[0]
	}
	if i := slices.Index(parts, "node_modules"); i > 1 && parts[i-1] == "lib" {
		return strings.Join(parts[:i-1], "/")
	}
	if i := slices.Index(parts, "bin"); i > 0 {
		return strings.Join(parts[:i], "/")
	}
	if parts[0] == "bin" {
		return "bin"
	}
	return strings.Join(parts[:len(parts)-1], "/")
}
