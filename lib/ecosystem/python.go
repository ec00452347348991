package ecosystem

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/keyval"
)

// pythonSignals are the files that make a repository a Python project.
var pythonSignals = []string{"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", ".pytest.ini", "tox.ini", "noxfile.py", "requirements.txt", "requirements-dev.txt", "requirements-test.txt", "Pipfile", "uv.lock", "poetry.lock", "pdm.lock", "hatch.toml", "conftest.py"}

// pytestArgs are the arguments every pytest guard takes: no cache of its
// own in the work tree (--lf, --ff read it: a session could steer which
// tests run), and JUnit XML into the results directory.
var pytestArgs = []string{"-m", "pytest", "-p", "no:cacheprovider", "--junitxml=${" + "RUNNER_TEST_RESULTS" + "}/pytest.xml"}

// pythonProtected is pytest's test infrastructure: what can rewrite a
// test's outcome or choose which tests run without being a test. The
// configuration is protected at its key in the files that hold other
// settings too (pyproject.toml, tox.ini, setup.cfg), whole in its own
// files; conftest.py and the customize modules at any depth; pytest's own
// modules at the root, where the guard's `python -m pytest` runs with the
// root first on sys.path, so that a pytest.py or a pytest/ there would be
// imported in place of pytest.
var pythonProtected = []string{
	"**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/sitecustomize.py", "**/usercustomize.py",
	"**/pyproject.toml#tool.pytest", "**/tox.ini#pytest", "**/setup.cfg#tool:pytest",
	"pytest.py", "pytest/**", "_pytest/**", "pluggy/**",
}

// pythonProject detects a Python project and its pytest guard.
func pythonProject(e Env) *project {
	signal := firstOf(e.Root, pythonSignals...)
	if signal == "" {
		return nil
	}
	pr := &project{name: Python, signal: signal}
	cfg := readPytestConfig(e.Root)
	why := pytestWhy(e.Root, cfg)
	if why == "" {
		pr.hints = append(pr.hints, "no pytest configuration, dependency or test_*.py file found: if the project's tests run another way, set [guard] command and [guard] witness")
		return pr
	}
	python, how, readable := pythonRunner(e, pr)
	pr.guard = append(slices.Clone(python), pytestArgs...)
	pr.guardWhy = why + "; " + how
	pr.witness = append(slices.Clone(pr.guard), "${RUNNER_TEST_FILES}")
	pr.witWhy = "pytest runs only the node's test files"
	pr.programs = []string{python[0]}
	if f := firstOf(e.Root, "tox.ini", "noxfile.py"); f != "" {
		pr.hints = append(pr.hints, f+" found: the guard runs pytest itself, not in "+strings.TrimSuffix(strings.TrimSuffix(f, ".ini"), "file.py")+"'s environments (to use them, set [guard] command to run it with RUNNER_TEST_RESULTS passed through and pytest given --junitxml=$RUNNER_TEST_RESULTS/pytest.xml)")
	}
	pr.readable = readable
	pr.protected = append(slices.Clone(pythonProtected), pytestPlugins(e.Root, cfg)...)
	pr.protWhy = "pytest's configuration, conftest.py, the plugins it names and a module at the root named like pytest's own (imported in its place) can deselect tests or rewrite their outcomes; pyproject.toml, tox.ini and setup.cfg are protected at pytest's key alone, so dependencies stay the agent's"
	return pr
}

// pytestConfig is what pytest's configuration files say, as far as read
// here: where it is, its addopts and pythonpath.
type pytestConfig struct {
	file       string   // "pytest.ini", "pyproject.toml", … ("" when none)
	key        string   // the section or table: "[tool.pytest.ini_options]"
	addopts    []string // split as a shell would
	pythonpath []string
}

// readPytestConfig reads pytest's configuration from the root, in
// pytest's order: pytest.ini, .pytest.ini, pyproject.toml's
// [tool.pytest.ini_options] (or [tool.pytest]), tox.ini's [pytest],
// setup.cfg's [tool:pytest].
func readPytestConfig(root string) pytestConfig {
	for _, c := range []struct{ file, key string }{
		{"pytest.ini", "pytest"}, {".pytest.ini", "pytest"},
		{"pyproject.toml", "tool.pytest.ini_options"}, {"pyproject.toml", "tool.pytest"},
		{"tox.ini", "pytest"}, {"setup.cfg", "tool:pytest"},
	} {
		data := read(root, c.file)
		if data == nil {
			continue
		}
		v, ok, err := keyval.Value(c.file, data, c.key)
		if err != nil || !ok {
			continue
		}
		m, _ := v.(map[string]any)
		pc := pytestConfig{file: c.file, key: "[" + c.key + "]"}
		pc.addopts = words(m["addopts"])
		pc.pythonpath = words(m["pythonpath"])
		return pc
	}
	return pytestConfig{}
}

// words is a setting's value as words: a TOML list's strings, or a
// string split as a shell would.
func words(v any) []string {
	switch v := v.(type) {
	case string:
		w, err := config.SplitArgs(v)
		if err != nil {
			return strings.Fields(v)
		}
		return w
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				w, _ := config.SplitArgs(s)
				out = append(out, w...)
			}
		}
		return out
	}
	return nil
}

// pytestMention finds pytest named as a dependency.
var pytestMention = regexp.MustCompile(`(?i)\bpytest\b`)

// pytestWhy is why the project's tests are pytest's, "" when nothing says
// so.
func pytestWhy(root string, cfg pytestConfig) string {
	if cfg.file != "" {
		if cfg.file == "pytest.ini" || cfg.file == ".pytest.ini" {
			return cfg.file + " found"
		}
		return cfg.file + " has " + cfg.key
	}
	if exists(root, "conftest.py") {
		return "conftest.py found"
	}
	for _, f := range []string{"pyproject.toml", "requirements-dev.txt", "requirements-test.txt", "requirements.txt", "Pipfile", "setup.cfg", "setup.py", "tox.ini", "noxfile.py"} {
		if pytestMention.Match(read(root, f)) {
			return "pytest is named in " + f
		}
	}
	if f := findTestFile(root); f != "" {
		return f + " found (pytest runs unittest's tests too)"
	}
	return ""
}

// findTestFile is a test_*.py or *_test.py file at the root or in a
// tests or test directory, "" when none.
func findTestFile(root string) string {
	for _, dir := range []string{".", "tests", "test"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".py") && (strings.HasPrefix(n, "test_") || strings.HasSuffix(n, "_test.py")) {
				return path.Join(dir, n)
			}
		}
	}
	return ""
}

// venvDirs are the project virtual environments looked for, in order.
var venvDirs = []string{".venv", "venv", ".env", "env"}

// pythonRunner is the interpreter argv the guard runs pytest with, why,
// and places to show beyond what resolving it finds: the project's
// virtual environment's (relative, so the witness's scratch runs its link
// to it), else a project manager's (uv, poetry, pdm, hatch) when it is
// installed, else python3 on PATH.
func pythonRunner(e Env, pr *project) (argv []string, why string, readable []string) {
	for _, d := range venvDirs {
		if isFile(e.Root, d+"/pyvenv.cfg") && isFile(e.Root, d+"/bin/python") {
			python := d + "/bin/python"
			return []string{python}, d + " found", importsPytest(e, pr, python, "install pytest into it ("+d+"/bin/pip install pytest, or your manager's add)")
		}
	}
	pyproject := tomlTables(read(e.Root, "pyproject.toml"))
	for _, m := range []struct{ tool, lock, table string }{
		{"uv", "uv.lock", "tool.uv"}, {"poetry", "poetry.lock", "tool.poetry"},
		{"pdm", "pdm.lock", "tool.pdm.dev-dependencies"}, {"hatch", "hatch.toml", "tool.hatch.envs"},
	} {
		if !exists(e.Root, m.lock) && !pyproject[m.table] {
			continue
		}
		r := newResolver(e)
		if r.lookPath(m.tool, "") == "" {
			pr.hints = append(pr.hints, m.tool+" is this project's manager ("+m.lock+" or ["+m.table+"]) but is not on PATH: install it, or make a virtual environment in .venv and run runner-init again")
			continue
		}
		argv = []string{m.tool, "run", "python"}
		if m.tool == "uv" {
			argv = []string{"uv", "run", "--frozen", "python"}
		}
		pr.hints = append(pr.hints, "no .venv here: the guard runs "+m.tool+" run, which makes or reads the environment itself (a .venv in the repository, made once by "+m.tool+", lets runner-init run its python directly, with no "+m.tool+" and no network)")
		if m.tool == "poetry" && e.Run != nil {
			if out, err := e.Run(e.Root, "poetry", "env", "info", "--path"); err == nil {
				if p := strings.TrimSpace(out); filepath.IsAbs(p) {
					if rel, ok := newResolver(e).underHome(p); ok {
						readable = append(readable, "~/"+rel)
					}
				}
			}
		}
		return argv, m.tool + " (" + m.lock + ")", readable
	}
	python := "python3"
	r := newResolver(e)
	if r.lookPath(python, "") == "" {
		python = "python"
	}
	why = "no virtual environment here: " + python + " on PATH"
	return []string{python}, why, importsPytest(e, pr, python, "install pytest for it, or make a virtual environment with pytest in .venv and run runner-init again")
}

// importsPytest asks python (run in the root, as the guard runs it) where
// it imports pytest from: the place to show when that lies under the home
// directory (a pip --user install), none else; when it cannot, a hint
// saying what to do.
func importsPytest(e Env, pr *project, python, todo string) (readable []string) {
	if e.Run == nil {
		return nil
	}
	argv := python
	if strings.Contains(python, "/") && !filepath.IsAbs(python) {
		argv = filepath.Join(e.Root, python)
	}
	out, err := e.Run(e.Root, argv, "-c", "import sys; sys.path = [p for p in sys.path if p not in ('', '.')]; import pytest; print(pytest.__file__)")
	if err != nil {
		pr.hints = append(pr.hints, python+" cannot import pytest: "+todo)
		return nil
	}
	if p := strings.TrimSpace(out); filepath.IsAbs(p) {
		if rel, ok := newResolver(e).underHome(p); ok {
			return []string{"~/" + place(rel)}
		}
	}
	return nil
}

// tomlTables is the dotted names of a TOML document's tables ("tool.uv"),
// none when it cannot be read.
func tomlTables(data []byte) map[string]bool {
	out := map[string]bool{}
	var m map[string]any
	if data == nil || toml.Unmarshal(data, &m) != nil {
		return out
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				out[prefix+k] = true
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", m)
	return out
}

// pytestPluginsVar finds conftest.py's pytest_plugins assignment and
// what follows it, to its closing bracket or the line's end.
var (
	pytestPluginsVar = regexp.MustCompile(`(?m)^pytest_plugins\s*=\s*(\[[^\]]*\]|\([^)]*\)|[^\n]*)`)
	pyString         = regexp.MustCompile(`["']([A-Za-z_][\w.]*)["']`)
)

// pytestPlugins are the files of the plugin modules the configuration
// names ("-p NAME" in addopts) and the conftest.py files at the root and
// in the test directories load (pytest_plugins), found under the root,
// its pythonpath entries and src/: each protected, since a plugin can
// rewrite any outcome. A plugin installed as a package (not in the
// repository) is not the agent's to write.
func pytestPlugins(root string, cfg pytestConfig) []string {
	var names []string
	for i, a := range cfg.addopts {
		switch {
		case a == "-p" && i+1 < len(cfg.addopts):
			names = append(names, cfg.addopts[i+1])
		case strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			names = append(names, strings.TrimPrefix(a[2:], "="))
		}
	}
	for _, c := range []string{"conftest.py", "tests/conftest.py", "test/conftest.py", "src/conftest.py"} {
		if m := pytestPluginsVar.FindSubmatch(read(root, c)); m != nil {
			for _, s := range pyString.FindAllSubmatch(m[1], -1) {
				names = append(names, string(s[1]))
			}
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "no:") {
			continue
		}
		rel := strings.ReplaceAll(n, ".", "/")
		for _, base := range append([]string{".", "src"}, cfg.pythonpath...) {
			for _, cand := range []string{rel + ".py", rel} {
				p := path.Clean(path.Join(base, cand))
				if p == "." || strings.HasPrefix(p, "../") {
					continue
				}
				if exists(root, p) && (strings.HasSuffix(p, ".py") || exists(root, p+"/__init__.py")) {
					out = append(out, p)
				}
			}
		}
	}
	return sortedUnique(out)
}
