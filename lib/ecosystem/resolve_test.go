package ecosystem

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestWithin: a path is within a directory when it is the directory or
// under it, not its parent or a sibling that shares its name's start.
func TestWithin(t *testing.T) {
	for p, want := range map[string]bool{
		"/a/b": true, "/a/b/c": true, "/a/b/c/d": true,
		"/a": false, "/a/bc": false, "/a/c": false, "/": false, "/a/b/../c": false,
	} {
		if got := within("/a/b", p); got != want {
			t.Errorf("within(/a/b, %s) = %v, want %v", p, got, want)
		}
	}
}

// TestHomePaths: every absolute path under the home directory a script
// names, each ended by a shell's delimiter; none without a home.
func TestHomePaths(t *testing.T) {
	script := []byte("#!/usr/bin/env bash\nexec \"/h/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n/h/a;/h/b|/h/c /x/h/d\n")
	got := newResolver(Env{Home: "/h"}).homePaths(script)
	if want := []string{"/h/.pyenv/libexec/pyenv", "/h/a", "/h/b", "/h/c"}; !slices.Equal(got, want) {
		t.Errorf("homePaths = %q, want %q", got, want)
	}
	if got := newResolver(Env{}).homePaths(script); got != nil {
		t.Errorf("no home: %q", got)
	}
}

// TestVenvHome: a virtual environment's pyvenv.cfg makes its base
// interpreter's place readable (its home key alone); without one, nothing.
func TestVenvHome(t *testing.T) {
	e := env(t, map[string]string{".venv/bin/python": "#!/bin/sh\n", "bare/bin/python": "#!/bin/sh\n"},
		map[string]string{".pyenv/versions/3.12/bin/python3": "\x7fELF", "other/bin/python3": "\x7fELF"}, nil, nil)
	cfg := filepath.Join(e.Root, ".venv", "pyvenv.cfg")
	tree(t, e.Root, map[string]string{".venv/pyvenv.cfg": "home = " + e.Home + "/.pyenv/versions/3.12/bin\nversion = 3.12\nexecutable = " + e.Home + "/other/bin/python3\n"})
	r := newResolver(e)
	r.venv(filepath.Join(e.Root, "bare", "bin", "python"))
	if len(r.found) != 0 {
		t.Errorf("no pyvenv.cfg: %q", r.found)
	}
	r.venv(filepath.Join(e.Root, ".venv", "bin", "python"))
	if want := []string{"~/.pyenv"}; !slices.Equal(r.found, want) {
		t.Errorf("%s: found %q, want %q", cfg, r.found, want)
	}
}

// TestLookPathRelative: a relative path with a slash is found from the
// directory given, else from the root; a name on PATH only when
// executable.
func TestLookPathRelative(t *testing.T) {
	e := env(t, map[string]string{"tools/run": "#!/bin/sh\n", "bin/data": "not executable"}, map[string]string{"sub/tools/run": "#!/bin/sh\n"}, []string{"/nonexistent"}, nil)
	r := newResolver(e)
	if got, want := r.lookPath("tools/run", ""), filepath.Join(e.Root, "tools/run"); got != want {
		t.Errorf("from the root: %q, want %q", got, want)
	}
	if got, want := r.lookPath("tools/run", filepath.Join(e.Home, "sub")), filepath.Join(e.Home, "sub/tools/run"); got != want {
		t.Errorf("from a directory: %q, want %q", got, want)
	}
	e = env(t, map[string]string{"bin/data": "not executable", "bin/run": "#!/bin/sh\n"}, nil, []string{"/nonexistent"}, nil)
	vars := map[string]string{"PATH": ":" + filepath.Join(e.Root, "bin")}
	e.Getenv = func(k string) string { return vars[k] }
	r = newResolver(e)
	if got := r.lookPath("data", ""); got != "" {
		t.Errorf("a file on PATH that is not executable: %q", got)
	}
	if got, want := r.lookPath("run", ""), filepath.Join(e.Root, "bin/run"); got != want {
		t.Errorf("on PATH: %q, want %q", got, want)
	}
}

// TestNeedScriptRunByAnother: a script under the home directory run by an
// interpreter that lies outside it needs the script's place alone, and
// says nothing of the interpreter.
func TestNeedScriptRunByAnother(t *testing.T) {
	e := env(t, nil, map[string]string{"tools/bin/tool": "#!/bin/sh\necho hi\n"}, []string{"tools/bin"}, nil)
	r := newResolver(e)
	if got, want := r.need("tool"), "tool resolves to ~/tools/bin/tool"; got != want {
		t.Errorf("need = %q, want %q", got, want)
	}
	if want := []string{"~/tools"}; !slices.Equal(r.roots(), want) {
		t.Errorf("roots %q, want %q", r.roots(), want)
	}
}
