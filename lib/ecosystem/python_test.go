package ecosystem

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pluginCase is a repository and the plugin files pytest's configuration
// and conftest.py files make it load.
type pluginCase struct {
	name string
	repo map[string]string
	want []string
}

// pluginCases are the ways a project names pytest plugins.
var pluginCases = []pluginCase{
	{name: "pytest_plugins list naming two",
		repo: map[string]string{"conftest.py": "pytest_plugins = [\"plugins.a\", 'plugins.b']\n", "plugins/a.py": "", "plugins/b.py": ""},
		want: []string{"plugins/a.py", "plugins/b.py"}},
	{name: "pytest_plugins tuple over lines in tests/",
		repo: map[string]string{"tests/conftest.py": "import x\npytest_plugins = (\n    \"fix.one\",\n    \"fix.two\",\n)\n", "fix/one.py": "", "fix/two/__init__.py": ""},
		want: []string{"fix/one.py", "fix/two"}},
	{name: "pytest_plugins string",
		repo: map[string]string{"test/conftest.py": "pytest_plugins = 'helpers'  # one\n", "src/helpers.py": ""},
		want: []string{"src/helpers.py"}},
	{name: "addopts split as a shell does",
		repo: map[string]string{"pytest.ini": "[pytest]\naddopts = -p 'quoted_plugin' -p\"other_plugin\" -q\n", "quoted_plugin.py": "", "other_plugin.py": ""},
		want: []string{"other_plugin.py", "quoted_plugin.py"}},
	{name: "addopts with an unbalanced quote split at blanks",
		repo: map[string]string{"pytest.ini": "[pytest]\naddopts = -p loose_plugin -k 'unbalanced\n", "loose_plugin.py": ""},
		want: []string{"loose_plugin.py"}},
	{name: "addopts list and pythonpath in pyproject.toml",
		repo: map[string]string{
			"pyproject.toml": "[tool.pytest.ini_options]\naddopts = [\"-p listed\", \"-p=joined\", \"-p\", \"no:cacheprovider\"]\npythonpath = [\"lib\"]\n",
			"lib/listed.py":  "", "lib/joined.py": "",
		},
		want: []string{"lib/joined.py", "lib/listed.py"}},
	{name: "a -p naming nothing",
		repo: map[string]string{"pytest.ini": "[pytest]\naddopts = -q -p\n", "src/__init__.py": "", ".py": ""},
		want: nil},
	{name: "pythonpath string in setup.cfg",
		repo: map[string]string{"setup.cfg": "[tool:pytest]\naddopts = -p plug\npythonpath = a b\n", "b/plug.py": ""},
		want: []string{"b/plug.py"}},
	{name: "installed plugins and packages without __init__.py skipped",
		repo: map[string]string{"conftest.py": "pytest_plugins = ['pytest_cov', 'nspkg']\n", "nspkg/x.py": ""},
		want: nil},
	{name: "pythonpath outside the repository skipped",
		repo: map[string]string{"pytest.ini": "[pytest]\naddopts = -p plug\npythonpath = ../out\n", "../out/plug.py": ""},
		want: nil},
}

// TestPytestPlugins: every plugin module of the repository that addopts'
// -p options or a conftest.py's pytest_plugins name is protected, found
// at the root, under src/ or a pythonpath entry; not only the first a
// setting names.
func TestPytestPlugins(t *testing.T) {
	for _, c := range pluginCases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "repo")
			tree(t, root, c.repo)
			if got := pytestPlugins(root, readPytestConfig(root)); !slices.Equal(got, c.want) {
				t.Errorf("pytestPlugins = %q, want %q", got, c.want)
			}
		})
	}
}

// TestWords: a setting's value as words: a string split as a shell would
// (falling back to blanks when its quotes do not balance), a list's
// strings each split so.
func TestWords(t *testing.T) {
	for _, c := range []struct {
		in   any
		want []string
	}{
		{"-p 'a b' -q", []string{"-p", "a b", "-q"}},
		{"-k 'x", []string{"-k", "'x"}},
		{[]any{"-p a", "-q", 3}, []string{"-p", "a", "-q"}},
		{nil, nil},
	} {
		if got := words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("words(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPytestWhy: the tests are pytest's when its own configuration file
// is found, another file has its section, or, with neither and no mention
// of pytest, a test_*.py or *_test.py file lies at the root or in tests/
// or test/ (pytest runs unittest's); none, or one elsewhere, leaves it
// unknown.
func TestPytestWhy(t *testing.T) {
	for _, c := range []struct {
		name string
		repo map[string]string
		want string
	}{
		{"pytest.ini", map[string]string{"pytest.ini": "[pytest]\n", "tox.ini": "[pytest]\n"}, "pytest.ini found"},
		{".pytest.ini", map[string]string{".pytest.ini": "[pytest]\n"}, ".pytest.ini found"},
		{"pyproject.toml", map[string]string{"pyproject.toml": "[tool.pytest]\n"}, "pyproject.toml has [tool.pytest]"},
		{"tox.ini", map[string]string{"tox.ini": "[tox]\n[pytest]\naddopts = -q\n"}, "tox.ini has [pytest]"},
		{"setup.cfg", map[string]string{"setup.cfg": "[tool:pytest]\n"}, "setup.cfg has [tool:pytest]"},
		{"conftest.py", map[string]string{"conftest.py": "", "test_a.py": ""}, "conftest.py found"},
		{"mentioned", map[string]string{"Pipfile": "[dev-packages]\nPyTest = \"*\"\n", "test_a.py": ""}, "pytest is named in Pipfile"},
		{"at the root", map[string]string{"setup.py": "", "test_a.py": ""}, "test_a.py found (pytest runs unittest's tests too)"},
		{"in tests", map[string]string{"setup.py": "", "tests/test_a.py": "", "tests/helper.py": ""}, "tests/test_a.py found (pytest runs unittest's tests too)"},
		{"suffix in test", map[string]string{"setup.py": "", "test/a_test.py": ""}, "test/a_test.py found (pytest runs unittest's tests too)"},
		{"root before tests", map[string]string{"setup.py": "", "tests/test_b.py": "", "z_test.py": ""}, "z_test.py found (pytest runs unittest's tests too)"},
		{"tests is a file", map[string]string{"setup.py": "", "tests": "", "test/test_c.py": ""}, "test/test_c.py found (pytest runs unittest's tests too)"},
		{"not a Python file", map[string]string{"setup.py": "", "tests/test_a.txt": ""}, ""},
		{"elsewhere", map[string]string{"setup.py": "", "src/test_a.py": ""}, ""},
		{"none", map[string]string{"setup.py": "from setuptools import setup\n"}, ""},
	} {
		root := t.TempDir()
		tree(t, root, c.repo)
		if got := pytestWhy(root, readPytestConfig(root)); got != c.want {
			t.Errorf("%s: pytestWhy = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTomlTables: every table of a TOML document by its dotted name;
// none for a missing or broken document.
func TestTomlTables(t *testing.T) {
	got := tomlTables([]byte("[project]\nname = \"x\"\n[tool.uv]\ndev = true\n[tool.hatch.envs.default]\n"))
	want := []string{"project", "tool", "tool.hatch", "tool.hatch.envs", "tool.hatch.envs.default", "tool.uv"}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
		t.Errorf("tomlTables = %q, want %q", keys, want)
	}
	for _, data := range [][]byte{nil, []byte("[tool.uv\n"), []byte("")} {
		if got := tomlTables(data); len(got) != 0 {
			t.Errorf("tomlTables(%q) = %v, want none", data, got)
		}
	}
}

// TestPythonManagerByTable: a pyproject.toml table of uv, poetry, pdm or
// hatch makes the guard run pytest through that manager when it is on
// PATH, with no lock file needed; a broken pyproject.toml names none.
func TestPythonManagerByTable(t *testing.T) {
	for _, c := range []struct {
		table, tool, guard string
	}{
		{"[tool.uv]", "uv", "uv run --frozen python -m pytest"},
		{"[tool.poetry]\nname = \"x\"", "poetry", "poetry run python -m pytest"},
		{"[tool.pdm.dev-dependencies]", "pdm", "pdm run python -m pytest"},
		{"[tool.hatch.envs.default]", "hatch", "hatch run python -m pytest"},
		{"[tool.uv", "uv", "python -m pytest"},
	} {
		e := env(t, map[string]string{"pyproject.toml": c.table + "\n# pytest\n"},
			map[string]string{"bin/" + c.tool: "#!/bin/sh\n"}, []string{"bin"}, nil)
		pr := pythonProject(e)
		if pr == nil || !strings.HasPrefix(Quote(pr.guard), c.guard+" ") {
			t.Errorf("%s: guard %v, want %q…", c.table, pr, c.guard)
		}
	}
}

// TestPythonTestFileOnly: a Python project whose only sign of pytest is a
// test file gets a pytest guard, saying so.
func TestPythonTestFileOnly(t *testing.T) {
	e := env(t, map[string]string{"requirements.txt": "requests\n", "tests/test_api.py": ""}, nil, nil, nil)
	pr := pythonProject(e)
	if pr == nil || pr.guard == nil || !strings.HasPrefix(pr.guardWhy, "tests/test_api.py found") {
		t.Fatalf("pythonProject = %+v, want a pytest guard for tests/test_api.py", pr)
	}
	if got := filepath.Base(pr.guard[0]); got != "python" {
		t.Errorf("interpreter %q, want python (no python3 on PATH)", got)
	}
}

// TestPoetryEnvironmentReadable: a poetry project's guard runs poetry,
// and the sandbox shows the environment poetry keeps under the home
// directory, as poetry itself reports it.
func TestPoetryEnvironmentReadable(t *testing.T) {
	repo := map[string]string{"pyproject.toml": "[tool.poetry]\nname = \"x\"\n\n[tool.pytest.ini_options]\n"}
	home := map[string]string{"bin/poetry": "#!/bin/sh\n", ".cache/pypoetry/virtualenvs/x-py3.12/bin/python": ""}
	asks := map[string]string{"poetry env info --path": "HOME/.cache/pypoetry/virtualenvs/x-py3.12\n"}
	for _, c := range []struct {
		name string
		asks map[string]string
		want []string
	}{
		{"poetry answers", asks, []string{"~/.cache/pypoetry/virtualenvs/x-py3.12"}},
		{"poetry fails", nil, nil},
	} {
		pr := pythonProject(env(t, repo, home, []string{"bin"}, c.asks))
		if pr == nil || !strings.HasPrefix(Quote(pr.guard), "poetry run python -m pytest ") {
			t.Fatalf("%s: pythonProject = %+v, want a poetry guard", c.name, pr)
		}
		if !slices.Equal(pr.readable, c.want) {
			t.Errorf("%s: readable %q, want %q", c.name, pr.readable, c.want)
		}
	}
}

// TestPoetryWithoutRun: with nothing to ask poetry, a poetry project's
// guard is still poetry's, with no environment shown.
func TestPoetryWithoutRun(t *testing.T) {
	e := env(t, map[string]string{"poetry.lock": "", "pytest.ini": "[pytest]\n"}, map[string]string{"bin/poetry": "#!/bin/sh\n"}, []string{"bin"}, nil)
	e.Run = nil
	pr := pythonProject(e)
	if pr == nil || !strings.HasPrefix(Quote(pr.guard), "poetry run python -m pytest ") || pr.readable != nil {
		t.Errorf("pythonProject = %+v, want a poetry guard and nothing readable", pr)
	}
}

// TestToxHint: a tox.ini or noxfile.py is named in a hint: the guard runs
// pytest itself, not in that tool's environments.
func TestToxHint(t *testing.T) {
	for file, want := range map[string]string{
		"tox.ini":    "tox.ini found: the guard runs pytest itself, not in tox's environments",
		"noxfile.py": "noxfile.py found: the guard runs pytest itself, not in nox's environments",
		"setup.py":   "",
	} {
		pr := pythonProject(env(t, map[string]string{file: "", "pytest.ini": "[pytest]\n"}, nil, nil, nil))
		got := ""
		for _, h := range pr.hints {
			if strings.Contains(h, "the guard runs pytest itself") {
				got = h
			}
		}
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: hints %q, want one starting %q", file, pr.hints, want)
		}
	}
}

// TestImportsPytest: where the interpreter imports pytest from is shown
// when it lies under the home directory; an interpreter that cannot
// import it gets a hint saying what to do; with nothing to ask, neither.
func TestImportsPytest(t *testing.T) {
	ask := "python3 -c import sys; sys.path = [p for p in sys.path if p not in ('', '.')]; import pytest; print(pytest.__file__)"
	for _, c := range []struct {
		name     string
		asks     map[string]string
		noRun    bool
		readable []string
		hint     bool
	}{
		{"under the home", map[string]string{ask: "HOME/.local/lib/python3.12/site-packages/pytest/__init__.py\n"}, false, []string{"~/.local/lib/python3.12"}, false},
		{"outside the home", map[string]string{ask: "/usr/lib/python3/dist-packages/pytest/__init__.py\n"}, false, nil, false},
		{"cannot import", nil, false, nil, true},
		{"nothing to ask", nil, true, nil, false},
	} {
		e := env(t, map[string]string{"pytest.ini": "[pytest]\n"}, nil, nil, c.asks)
		if c.noRun {
			e.Run = nil
		}
		pr := &project{}
		got := importsPytest(e, pr, "python3", "install it")
		if !slices.Equal(got, c.readable) {
			t.Errorf("%s: readable %q, want %q", c.name, got, c.readable)
		}
		if want := []string{"python3 cannot import pytest: install it"}; c.hint != slices.Equal(pr.hints, want) || !c.hint && pr.hints != nil {
			t.Errorf("%s: hints %q, want the hint: %v", c.name, pr.hints, c.hint)
		}
	}
}
