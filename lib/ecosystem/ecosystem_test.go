package ecosystem

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree writes files (path → content; a content starting with "-> " makes
// a symbolic link to the rest, "#!" an executable) under dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(data, "-> "); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(data, "#!") || strings.HasPrefix(data, "\x7fELF") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// env is an Env over a fresh repository and home, with PATH the given
// directories (relative ones under the home) and Run answering from asks
// (argv joined by spaces → output; missing: an error).
func env(t *testing.T, repo, home map[string]string, path []string, asks map[string]string) Env {
	t.Helper()
	base := t.TempDir()
	root, h := filepath.Join(base, "repo"), filepath.Join(base, "home")
	tree(t, root, repo)
	tree(t, h, home)
	os.MkdirAll(root, 0o755)
	os.MkdirAll(h, 0o755)
	var dirs []string
	for _, d := range path {
		if !filepath.IsAbs(d) {
			d = filepath.Join(h, d)
		}
		dirs = append(dirs, d)
	}
	vars := map[string]string{"PATH": strings.Join(dirs, ":")}
	return Env{Root: root, Home: h, Getenv: func(k string) string { return vars[k] }, Run: func(dir string, argv ...string) (string, error) {
		out, ok := asks[strings.Join(argv, " ")]
		if !ok {
			return "", errors.New("exit status 1")
		}
		return strings.ReplaceAll(out, "HOME", h), nil
	}}
}

const pytestImport = "python3 -c import sys; sys.path = [p for p in sys.path if p not in ('', '.')]; import pytest; print(pytest.__file__)"

func choice(p Plan, key string) (Choice, bool) {
	for _, c := range p.Choices {
		if c.Key == key {
			return c, true
		}
	}
	return Choice{}, false
}

// detectCase is a repository, its home and environment, and what Detect
// should choose for it.
type detectCase struct {
	name      string
	repo      map[string]string
	home      map[string]string
	path      []string
	asks      map[string]string
	opts      Options
	eco       string
	guard     string // Quote of the guard, "" for the default
	results   string
	witness   string
	protected []string // beyond the default
	readable  []string
	why       string // in the guard's reason
	hint      string // in a hint
}

// detectCases are the kinds of project Detect knows.
var detectCases = []detectCase{
	{name: "python venv",
		repo: map[string]string{
			"pyproject.toml":   "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q -p myplugin -pother\"\npythonpath = [\"src\"]\n",
			".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/python": "-> /usr/bin/python3",
			"src/myplugin.py": "", "src/other/__init__.py": "", "tests/test_a.py": "",
			"conftest.py": "pytest_plugins = [\n    \"helpers.fixtures\",\n]\n", "helpers/fixtures.py": "",
		},
		eco: Python, guard: ".venv/bin/python -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml", results: "auto",
		witness:   ".venv/bin/python -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml ${RUNNER_TEST_FILES}",
		protected: append(slices.Clone(pythonProtected), "helpers/fixtures.py", "src/myplugin.py", "src/other"),
		why:       "pyproject.toml has [tool.pytest.ini_options]; .venv found",
		hint:      ".venv/bin/python cannot import pytest: install pytest into it"},
	{name: "python pyenv shim",
		repo: map[string]string{"requirements-dev.txt": "pytest==8\n", "tests/test_a.py": "", "noxfile.py": ""},
		home: map[string]string{
			".pyenv/shims/python3":           "#!/usr/bin/env bash\nexec \"HOME/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n",
			".pyenv/libexec/pyenv":           "#!/usr/bin/env bash\n",
			".local/lib/python3.12/pytest/x": "",
		},
		path: []string{".pyenv/shims", "/usr/bin"},
		asks: map[string]string{pytestImport: "HOME/.local/lib/python3.12/site-packages/pytest/__init__.py\n"},
		eco:  Python, guard: "python3 -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml", results: "auto",
		witness:   "python3 -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml ${RUNNER_TEST_FILES}",
		protected: pythonProtected, readable: []string{"~/.local/lib/python3.12", "~/.pyenv"},
		why:  "pytest is named in requirements-dev.txt; no virtual environment here: python3 on PATH",
		hint: "noxfile.py found: the guard runs pytest itself, not in nox's environments"},
	{name: "python without pytest",
		repo: map[string]string{"setup.py": "from setuptools import setup\n"},
		eco:  Python, results: "off", hint: "no pytest configuration, dependency or test_*.py file found"},
	{name: "python uv not installed",
		repo: map[string]string{"pyproject.toml": "[tool.uv]\n[tool.pytest.ini_options]\n", "uv.lock": ""},
		path: []string{"/usr/bin"},
		eco:  Python, guard: "python3 -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml", results: "auto",
		witness:   "python3 -m pytest -p no:cacheprovider --junitxml=${RUNNER_TEST_RESULTS}/pytest.xml ${RUNNER_TEST_FILES}",
		protected: pythonProtected, hint: "uv is this project's manager (uv.lock or [tool.uv]) but is not on PATH"},
	{name: "vitest",
		repo: map[string]string{
			"package.json":     `{"devDependencies": {"vitest": "^3", "jest": "^29"}, "scripts": {"test": "vitest"}}`,
			"vitest.config.ts": "export default { test: { setupFiles: ['./test/setup.ts'], globalSetup: './test/global.ts', include: ['src/**/*.test.ts'] } }\n",
			"test/setup.ts":    "", "test/global.ts": "", "node_modules/.bin/vitest": "-> ../vitest/vitest.mjs",
			"node_modules/vitest/vitest.mjs": "#!/usr/bin/env node\n", "pnpm-lock.yaml": "",
		},
		home: map[string]string{".nvm/versions/node/v20/bin/node": "\x7fELF"},
		path: []string{".nvm/versions/node/v20/bin"},
		eco:  JavaScript, guard: "node_modules/.bin/vitest run --no-color --reporter=default --reporter=junit --outputFile.junit=${RUNNER_TEST_RESULTS}/vitest.xml", results: "auto",
		witness:   "node_modules/.bin/vitest run --no-color --reporter=default --reporter=junit --outputFile.junit=${RUNNER_TEST_RESULTS}/vitest.xml ${RUNNER_TEST_FILES}",
		protected: []string{"**/vitest.config.*", "**/vitest.workspace.*", "**/vitest.projects.*", "**/vite.config.*", "test/global.ts", "test/setup.ts"},
		readable:  []string{"~/.nvm"}, why: "vitest is in package.json's dependencies"},
	{name: "jest in package.json",
		repo: map[string]string{
			"package.json":  `{"devDependencies": {"jest": "^29"}, "jest": {"setupFilesAfterEnv": ["<rootDir>/jest.setup.js"], "testEnvironment": "node"}}`,
			"jest.setup.js": "", "node_modules/.bin/jest": "#!/bin/sh\n",
		},
		eco: JavaScript, guard: "node_modules/.bin/jest --ci --json --outputFile=${RUNNER_TEST_RESULTS}/jest.json", results: "auto",
		witness:   "node_modules/.bin/jest --ci --json --outputFile=${RUNNER_TEST_RESULTS}/jest.json --runTestsByPath ${RUNNER_TEST_FILES}",
		protected: []string{"**/jest.config.*", "**/babel.config.*", "**/.babelrc", "**/.babelrc.*", "package.json#jest", "package.json#babel", "jest.setup.js"}},
	{name: "mocha without node_modules",
		repo: map[string]string{"package.json": `{"devDependencies": {"mocha": "^10"}}`, ".mocharc.yml": "require:\n  - test/hooks.js\nspec: test/**/*.spec.js\n", "test/hooks.js": ""},
		eco:  JavaScript, guard: "node_modules/.bin/mocha --reporter xunit --reporter-option output=${RUNNER_TEST_RESULTS}/mocha.xml", results: "auto",
		witness:   "node_modules/.bin/mocha --reporter xunit --reporter-option output=${RUNNER_TEST_RESULTS}/mocha.xml ${RUNNER_TEST_FILES}",
		protected: []string{"**/.mocharc.*", "package.json#mocha", "test/hooks.js"}, hint: "node_modules/ is missing: install the dependencies (npm install)"},
	// Python comes before JavaScript, but without a test runner of its
	// own: the ecosystem whose guard is found is the one chosen.
	{name: "python without pytest beside jest",
		repo: map[string]string{"setup.py": "from setuptools import setup\n", "package.json": `{"devDependencies": {"jest": "^29"}}`, "node_modules/.bin/jest": "#!/bin/sh\n"},
		eco:  JavaScript, guard: "node_modules/.bin/jest --ci --json --outputFile=${RUNNER_TEST_RESULTS}/jest.json", results: "auto",
		witness:   "node_modules/.bin/jest --ci --json --outputFile=${RUNNER_TEST_RESULTS}/jest.json --runTestsByPath ${RUNNER_TEST_FILES}",
		protected: []string{"**/jest.config.*", "**/babel.config.*", "**/.babelrc", "**/.babelrc.*", "package.json#jest", "package.json#babel"}},
	{name: "rust workspace with rustup",
		repo: map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"a\"]\n"},
		home: map[string]string{".cargo/bin/rustup": "\x7fELF rustup", ".cargo/bin/cargo": "-> rustup", ".rustup/settings.toml": "", ".cargo/credentials.toml": ""},
		path: []string{".cargo/bin"},
		eco:  Rust, guard: "cargo test --no-fail-fast --workspace", results: "auto",
		protected: rustProtected, readable: []string{"~/.cargo/bin", "~/.rustup"}},
	{name: "go with module cache under home",
		repo: map[string]string{"go.mod": "module x\n\ngo 1.22\n\nrequire example.com/y v1.0.0\n", "package.json": `{"devDependencies": {"jest": "1"}}`, "node_modules/.bin/jest": "#!/bin/sh\n"},
		home: map[string]string{"sdk/go1.22/bin/go": "\x7fELF"},
		path: []string{"sdk/go1.22/bin"},
		asks: map[string]string{"go env GOMODCACHE": "HOME/go/pkg/mod\n"},
		eco:  Go, guard: "go test -json ./...", results: "auto", witness: "go test -json ${RUNNER_TEST_DIRS}",
		readable: []string{"~/go/pkg/mod", "~/sdk/go1.22"}, hint: "javascript (package.json; no lock file: npm) is here too"},
	{name: "just ci by name",
		repo: map[string]string{"justfile": "ci: lint\n    go test -json ./...\n", "go.mod": "module x\n"},
		eco:  Go, guard: "just ci", results: "auto", witness: "go test -json ${RUNNER_TEST_DIRS}", why: "justfile has a ci recipe"},
	{name: "just ci not by name",
		repo: map[string]string{"Justfile": "@ci:\n    pytest -q\n", "pytest.ini": "[pytest]\n", ".venv/pyvenv.cfg": "", ".venv/bin/python": "#!/bin/sh\n"},
		eco:  Python, guard: "just ci", results: "off", protected: pythonProtected, why: "Justfile has a ci recipe"},
	{name: "makefile",
		repo:  map[string]string{"Makefile": "build:\n\tcc x.c\ntest: build\n\t./run-tests\n"},
		guard: "make test", results: "off", protected: []string{"Makefile"}, why: "Makefile has a test target"},
	{name: "nothing",
		repo:    map[string]string{"README.md": "hi"},
		results: "off", hint: "set [guard] command"},
	{name: "--guard",
		repo: map[string]string{"go.mod": "module x\n"},
		opts: Options{Guard: []string{"sh", "-c", "go test -json ./... | tee $RUNNER_TEST_RESULTS/go.json"}},
		eco:  Go, guard: "sh -c 'go test -json ./... | tee $RUNNER_TEST_RESULTS/go.json'", results: "auto", witness: "go test -json ${RUNNER_TEST_DIRS}", why: "--guard"},
}

// TestDetect: the guard, results, witness, protected paths and readable
// places chosen for each kind of project, and why.
func TestDetect(t *testing.T) {
	for _, c := range detectCases {
		t.Run(c.name, func(t *testing.T) {
			e := env(t, c.repo, c.home, c.path, c.asks)
			p := Detect(e, c.opts)
			if p.Ecosystem != c.eco {
				t.Errorf("ecosystem %q, want %q", p.Ecosystem, c.eco)
			}
			if got := Quote(p.Guard); got != c.guard {
				t.Errorf("guard %q, want %q", got, c.guard)
			}
			if p.Results != c.results {
				t.Errorf("results %q, want %q", p.Results, c.results)
			}
			if got := Quote(p.Witness); got != c.witness {
				t.Errorf("witness %q, want %q", got, c.witness)
			}
			if !slices.Equal(p.Protected, c.protected) {
				t.Errorf("protected %q, want %q", p.Protected, c.protected)
			}
			if !slices.Equal(p.Readable, c.readable) {
				t.Errorf("readable %q, want %q", p.Readable, c.readable)
			}
			g, _ := choice(p, "guard")
			if !strings.Contains(g.Why, c.why) {
				t.Errorf("the guard's why %q lacks %q", g.Why, c.why)
			}
			if c.hint != "" && !slices.ContainsFunc(p.Hints, func(h string) bool { return strings.Contains(h, c.hint) }) {
				t.Errorf("hints %q lack %q", p.Hints, c.hint)
			}
			if _, ok := choice(p, "results"); !ok && p.Results != "off" {
				t.Error("no results choice")
			}
			// A choice is said only for what was chosen.
			if _, ok := choice(p, "protected_paths"); ok && len(p.Protected) == 0 {
				t.Error("a protected_paths choice with nothing protected")
			}
			if r, ok := choice(p, "readable"); ok != (len(p.Readable) > 0) || ok && (r.Why == "" || strings.HasPrefix(r.Why, ";")) {
				t.Errorf("readable %q, its choice %+v", p.Readable, r)
			}
			if _, ok := choice(p, "witness"); p.Results == "auto" && p.Ecosystem != "" && !ok {
				t.Error("results auto without a witness choice")
			}
		})
	}
}

// TestPlace: the directory the sandbox shows for a program's file under
// the home directory; never the home itself, ~/.config or ~/.cache whole,
// nor ~/.cargo beyond its bin.
func TestPlace(t *testing.T) {
	for rel, want := range map[string]string{
		".pyenv/versions/3.12.1/bin/python3.12":                ".pyenv",
		".nvm/versions/node/v20.1.0/bin/node":                  ".nvm",
		".npm-global/lib/node_modules/@openai/codex/bin/x.js":  ".npm-global",
		"npm/lib/node_modules/x/cli.js":                        "npm",
		".volta/tools/image/node/20/bin/node":                  ".volta",
		".local/bin/uv":                                        ".local/bin",
		".local/share/tool":                                    ".local/share/tool",
		"lib/node_modules/x/cli.js":                            "lib/node_modules/x",
		".local/share/fnm/node-versions/v20/installation/node": ".local/share/fnm",
		".local/share/mise/installs/python/3.12/bin/python":    ".local/share/mise",
		".cargo/bin/cargo":                                     ".cargo/bin",
		".cargo/registry/x":                                    "",
		".config/yarn/global/node_modules/.bin/x":              ".config/yarn/global",
		".ssh/id_rsa":                                          "",
		"tools/node-v20/bin/node":                              "tools/node-v20",
		"bin/tool":                                             "bin",
		"opt/thing/run":                                        "opt/thing",
		"tool":                                                 "",
	} {
		if got := place(rel); got != want {
			t.Errorf("place(%q) = %q, want %q", rel, got, want)
		}
	}
}

// TestAgentUnderNpmPrefix: an agent CLI installed with npm under a prefix
// in the home directory (a link to a script run by node) needs the
// prefix, and node's own place when node lives under the home too.
func TestAgentUnderNpmPrefix(t *testing.T) {
	e := env(t, map[string]string{"README.md": ""}, map[string]string{
		".npm-global/bin/codex":                                    "-> ../lib/node_modules/@openai/codex/bin/codex.js",
		".npm-global/lib/node_modules/@openai/codex/bin/codex.js":  "#!/usr/bin/env node\n",
		".local/share/fnm/node-versions/v20/installation/bin/node": "\x7fELF",
		".local/state/fnm_multishells/1_2/bin":                     "-> ../../../share/fnm/node-versions/v20/installation/bin",
	}, []string{".npm-global/bin", ".local/state/fnm_multishells/1_2/bin"}, nil)
	p := Detect(e, Options{Agents: []string{"codex"}})
	want := []string{"~/.local/share/fnm", "~/.local/state/fnm_multishells", "~/.npm-global"}
	if !slices.Equal(p.Readable, want) {
		t.Errorf("readable %q, want %q", p.Readable, want)
	}
	c, _ := choice(p, "readable")
	if !strings.Contains(c.Why, "codex resolves to ~/.npm-global/bin/codex → ~/.npm-global/lib/node_modules/@openai/codex/bin/codex.js, run by node") {
		t.Errorf("why %q", c.Why)
	}
}

func TestQuote(t *testing.T) {
	got := Quote([]string{"go", "test", "-json", "./...", "${RUNNER_TEST_DIRS}", "a b", "it's", "", "azAZ09", "`", "[", "~"})
	if want := `go test -json ./... ${RUNNER_TEST_DIRS} 'a b' 'it'\''s' '' azAZ09 '` + "`" + `' '[' '~'`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
}

func TestReportsByName(t *testing.T) {
	for text, want := range map[string]bool{
		"ci:\n    go test -json ./...\n":                      true,
		"ci:\n    go test -v -race ./...\n":                   true,
		"ci:\n    go test ./...\n":                            false,
		"ci:\n    cargo test\n":                               true,
		"ci:\n    pytest --junitxml=$RUNNER_TEST_RESULTS/x\n": true,
		"ci:\n    npm test\n":                                 false,
	} {
		if got := reportsByName(text); got != want {
			t.Errorf("reportsByName(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestResultsOffSaysHow: a guard the user wrote that is not seen to report
// tests by name gets results off and the command of the ecosystem's own
// runner to run instead, when there is one; the readable places say which
// program needs each.
func TestResultsOffSaysHow(t *testing.T) {
	e := env(t, map[string]string{"Justfile": "@ci:\n    pytest -q\n", "pytest.ini": "[pytest]\n", ".venv/pyvenv.cfg": "", ".venv/bin/python": "#!/bin/sh\n"}, nil, nil, nil)
	p := Detect(e, Options{})
	c, _ := choice(p, "results")
	if p.Results != "off" || !strings.Contains(c.Why, "have it run .venv/bin/python -m pytest") {
		t.Errorf("results %q: %q", p.Results, c.Why)
	}
	e = env(t, map[string]string{"Makefile": "test:\n\t./run-tests\n"}, nil, nil, nil)
	p = Detect(e, Options{})
	if c, _ := choice(p, "results"); p.Results != "off" || !strings.Contains(c.Why, "have it write JUnit XML") {
		t.Errorf("no ecosystem: results %q: %q", p.Results, c.Why)
	}
	rust := detectCases[slices.IndexFunc(detectCases, func(c detectCase) bool { return c.name == "rust workspace with rustup" })]
	p = Detect(env(t, rust.repo, rust.home, rust.path, rust.asks), Options{})
	if c, _ := choice(p, "readable"); !strings.HasPrefix(c.Why, "cargo resolves to ~/.cargo/bin/cargo") {
		t.Errorf("readable's why %q, want cargo's", c.Why)
	}
}
