package ecosystem

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestValueAt: the value after a key's colon is a scalar up to the next
// ",", newline or "}", or an array or object to its own closing bracket
// (brackets nested or inside quoted strings, escaped quotes and all),
// past any blanks before it; what runs off the end is taken whole.
func TestValueAt(t *testing.T) {
	for _, c := range []struct {
		name, text string
		at         int
		want       string
	}{
		{"space before", " 'a'", 0, "'a'"},
		{"tab before", "\t'a'", 0, "'a'"},
		{"newline before", "\n'a'", 0, "'a'"},
		{"carriage return before", "\r'a'", 0, "'a'"},
		{"blanks before an array", " \t\r\n  ['a', 'b'], c", 0, "['a', 'b']"},
		{"after a key", "setupFiles: './a.js', x: 1", 11, "'./a.js'"},
		{"at the end", "setupFiles:", 11, ""},
		{"blanks to the end", "setupFiles: \t\r\n", 11, ""},
		{"empty", "", 0, ""},
		{"scalar to a comma", "'a', 'b'", 0, "'a'"},
		{"scalar to a newline", "'a'\n'b'", 0, "'a'"},
		{"scalar to a brace", "'a'} 'b'", 0, "'a'"},
		{"scalar to the end", "'a' 'b'", 0, "'a' 'b'"},
		{"nothing before a comma", "k:, 'b'", 2, ""},
		{"array", "['a', 'b'], c: ['d']", 0, "['a', 'b']"},
		{"object", "{a: 'x', b: 'y'}, c: {d: 'z'}", 0, "{a: 'x', b: 'y'}"},
		{"array after a key", "k: ['a'], m: ['b']", 2, "['a']"},
		{"nested", "[['a', {o: ['x']}], 'b'], c: ['d']", 0, "[['a', {o: ['x']}], 'b']"},
		{"object in an array", "[{a: 'x'}, 'y'] 'z'", 0, "[{a: 'x'}, 'y']"},
		{"brackets in double quotes", `["a]}", 'b'], c`, 0, `["a]}", 'b']`},
		{"brackets in single quotes", `['a]}', 'b'], c`, 0, `['a]}', 'b']`},
		{"brackets in backquotes", "[`a]}`, 'b'], c", 0, "[`a]}`, 'b']"},
		{"opening brackets in quotes", `['[{', 'b'], c`, 0, `['[{', 'b']`},
		{"other quotes inside quotes", `["it's ]", 'b'], c`, 0, `["it's ]", 'b']`},
		{"escaped quote", `['it\'s]', 'b'], c`, 0, `['it\'s]', 'b']`},
		{"escaped double quote", `["a\"]", "b"], c`, 0, `["a\"]", "b"]`},
		{"escaped backslash", `['a\\', 'b'], c`, 0, `['a\\', 'b']`},
		{"unterminated array", "['a', 'b'", 0, "['a', 'b'"},
		{"unterminated nested", "[['a'], 'b'", 0, "[['a'], 'b'"},
		{"unterminated quote", "['a]", 0, "['a]"},
		{"backslash at the end", `['a\`, 0, `['a\`},
	} {
		if got := valueAt(c.text, c.at); got != c.want {
			t.Errorf("%s: valueAt(%q, %d) = %q, want %q", c.name, c.text, c.at, got, c.want)
		}
	}
}

// jsRunnerNamed is the jsRunner named name.
func jsRunnerNamed(t *testing.T, name string) *jsRunner {
	t.Helper()
	for i := range jsRunners {
		if jsRunners[i].name == name {
			return &jsRunners[i]
		}
	}
	t.Fatalf("no runner %s", name)
	return nil
}

// setupCase is a repository, its runner, and the setup files that must be
// protected in it.
type setupCase struct {
	name   string
	runner string
	repo   map[string]string
	want   []string
}

// setupCases are the ways a runner's configuration names the files it
// loads beside the tests.
var setupCases = []setupCase{
	{name: "vitest config naming two setup files",
		runner: "vitest",
		repo: map[string]string{
			"vitest.config.ts": "export default defineConfig({\n\ttest: {\n\t\tsetupFiles: [\n\t\t\t'./test/b.ts',\n\t\t\t\"./test/a.ts\",\n\t\t],\n\t\tglobalSetup: `./test/global.ts`,\n\t\tinclude: ['test/c.ts'],\n\t},\n})\n",
			"test/a.ts":        "", "test/b.ts": "", "test/global.ts": "", "test/c.ts": "",
		},
		want: []string{"test/a.ts", "test/b.ts", "test/global.ts"}},
	{name: "jest config with rootDir, nested reporters and a transform",
		runner: "jest",
		repo: map[string]string{
			"jest.config.js":    "module.exports = {\n  reporters: ['default', ['<rootDir>/tools/reporter.js', {outputDirectory: 'out'}]],\n  testEnvironment: './tools/env.js',\n  transform: {'^.+\\\\.js$': '<rootDir>/tools/transform.js'},\n  setupFilesAfterEnv: ['<rootDir>/tools/setup.js', './tools/setup.js'],\n  testMatch: ['<rootDir>/tools/match.js'],\n}\n",
			"tools/reporter.js": "", "tools/env.js": "", "tools/transform.js": "", "tools/setup.js": "", "tools/match.js": "",
		},
		want: []string{"tools/env.js", "tools/reporter.js", "tools/setup.js", "tools/transform.js"}},
	{name: "jest JSON config with quoted keys",
		runner: "jest",
		repo: map[string]string{
			"jest.config.json": `{"setupFiles": ["a.js", "b.js"], "globalTeardown": "c.js"}`,
			"a.js":             "", "b.js": "", "c.js": "",
		},
		want: []string{"a.js", "b.js", "c.js"}},
	{name: "names outside the repository's own files skipped",
		runner: "jest",
		repo: map[string]string{
			"jest.config.js": "module.exports = {\n  setupFiles: ['../outside.js', '/abs.js', 'node_modules/pkg/setup.js', './setup-*.js', './setup-[1].js', './$x.js', '.', './missing.js', './ok.js'],\n}\n",
			"../outside.js":  "", "abs.js": "", "node_modules/pkg/setup.js": "", "setup-*.js": "", "setup-[1].js": "", "$x.js": "", "ok.js": "",
		},
		want: []string{"ok.js"}},
	{name: "a directory named is no file",
		runner: "jest",
		repo:   map[string]string{"jest.config.js": "module.exports = {setupFiles: ['./dir', './f.js']}\n", "dir/x.js": "", "f.js": ""},
		want:   []string{"f.js"}},
	{name: "package.json's jest key",
		runner: "jest",
		repo: map[string]string{
			"package.json": `{"devDependencies": {"jest": "1"}, "jest": {"setupFiles": ["./a.js", "<rootDir>/b.js"], "reporters": ["default", ["./r.js", {"verbose": true}]], "testMatch": ["./c.js"]}}`,
			"a.js":         "", "b.js": "", "r.js": "", "c.js": "",
		},
		want: []string{"a.js", "b.js", "r.js"}},
	{name: "package.json's mocha key",
		runner: "mocha",
		repo: map[string]string{
			"package.json": `{"devDependencies": {"mocha": "1"}, "mocha": {"require": "./hooks.js", "file": ["./first.js"], "spec": "./spec.js"}}`,
			"hooks.js":     "", "first.js": "", "spec.js": "",
		},
		want: []string{"first.js", "hooks.js"}},
	{name: ".mocharc.yml's require and file lists",
		runner: "mocha",
		repo: map[string]string{
			".mocharc.yml": "require:\n  - ./hooks/a.js\n  - 'hooks/b.js'  # comment\n\nspec:\n  - test/x.spec.js\nfile:\n  - \"test/first.js\"\nui: bdd\n  - test/y.js\n",
			"hooks/a.js":   "", "hooks/b.js": "", "test/x.spec.js": "", "test/first.js": "", "test/y.js": "",
		},
		want: []string{"hooks/a.js", "hooks/b.js", "test/first.js"}},
	{name: ".mocharc.js",
		runner: "mocha",
		repo:   map[string]string{".mocharc.js": "module.exports = {\n  require: ['./h1.js', './h2.js'],\n  spec: ['./s.js'],\n}\n", "h1.js": "", "h2.js": "", "s.js": ""},
		want:   []string{"h1.js", "h2.js"}},
	{name: "no configuration",
		runner: "vitest",
		repo:   map[string]string{"package.json": `{"devDependencies": {"vitest": "1"}}`, "setup.ts": ""},
		want:   nil},
}

// TestJSSetupFiles: every file of the repository that a runner's
// configuration files or package.json key name under a setup, environment,
// reporter, transform or require key is protected, each once, in order;
// names outside the repository (.., absolute, node_modules/), patterns,
// variables and files that do not exist are not.
func TestJSSetupFiles(t *testing.T) {
	for _, c := range setupCases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "repo")
			tree(t, root, c.repo)
			pj, _ := readPackageJSON(root)
			if got := jsSetupFiles(root, jsRunnerNamed(t, c.runner), pj); !slices.Equal(got, c.want) {
				t.Errorf("jsSetupFiles = %q, want %q", got, c.want)
			}
		})
	}
}

// TestJSProjectProtectsEverySetupFile: the project's protected paths hold
// each file a jest.config.js setup key names, not only the first.
func TestJSProjectProtectsEverySetupFile(t *testing.T) {
	e := env(t, map[string]string{
		"package.json":   `{"devDependencies": {"jest": "1"}}`,
		"jest.config.js": "module.exports = { setupFiles: ['./a.js', './b.js'] }\n",
		"a.js":           "", "b.js": "", "node_modules/.bin/jest": "#!/bin/sh\n",
	}, nil, nil, nil)
	pr := jsProject(e)
	want := []string{"**/jest.config.*", "**/babel.config.*", "**/.babelrc", "**/.babelrc.*", "package.json#jest", "package.json#babel", "a.js", "b.js"}
	if pr == nil || !slices.Equal(pr.protected, want) {
		t.Fatalf("protected %v, want %q", pr, want)
	}
}

// TestPickRunner: the runner the test script names among the
// dependencies, else the first known one there, else none.
func TestPickRunner(t *testing.T) {
	for _, c := range []struct {
		name   string
		deps   []string
		script string
		want   string // "" for none
	}{
		{"none", nil, "jest", ""},
		{"other dependencies", []string{"react", "ava"}, "ava", ""},
		{"one", []string{"mocha"}, "", "mocha"},
		{"first known", []string{"mocha", "jest", "vitest"}, "node test.js", "vitest"},
		{"named by the script", []string{"mocha", "jest", "vitest"}, "jest --coverage", "jest"},
		{"named but not a dependency", []string{"mocha"}, "jest", "mocha"},
		{"named only as a word", []string{"jest", "mocha"}, "mochawesome", "jest"},
	} {
		pj := packageJSON{deps: map[string]bool{}, testScript: c.script}
		for _, d := range c.deps {
			pj.deps[d] = true
		}
		got := ""
		if r := pickRunner(pj); r != nil {
			got = r.name
		}
		if got != c.want {
			t.Errorf("%s: pickRunner = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestJSProjectWithoutRunner: a package.json with no known test runner is
// a JavaScript project with no guard, and says what to set.
func TestJSProjectWithoutRunner(t *testing.T) {
	e := env(t, map[string]string{"package.json": `{"dependencies": {"react": "18"}, "scripts": {"test": "ava"}}`}, nil, nil, nil)
	pr := jsProject(e)
	if pr == nil || pr.name != JavaScript || pr.guard != nil || pr.protected != nil {
		t.Fatalf("jsProject = %+v, want a JavaScript project without guard or protected paths", pr)
	}
	if len(pr.hints) != 1 || pr.hints[0] != "no vitest, jest or mocha in package.json's dependencies: set [guard] command to your test runner, reporting by name into $RUNNER_TEST_RESULTS" {
		t.Errorf("hints %q", pr.hints)
	}
}

// TestPackageManager: package.json's packageManager field names the
// package manager, else the first lock file found, else npm.
func TestPackageManager(t *testing.T) {
	for _, c := range []struct {
		name    string
		repo    map[string]string
		field   string
		pm, why string
	}{
		{"field", map[string]string{"yarn.lock": ""}, "pnpm@9.1.0", "pnpm", "packageManager is pnpm@9.1.0"},
		{"field without version", nil, "yarn", "yarn", "packageManager is yarn"},
		{"pnpm lock", map[string]string{"pnpm-lock.yaml": "", "package-lock.json": ""}, "", "pnpm", "pnpm-lock.yaml"},
		{"yarn lock", map[string]string{"yarn.lock": ""}, "", "yarn", "yarn.lock"},
		{"bun lock", map[string]string{"bun.lock": ""}, "", "bun", "bun.lock"},
		{"npm shrinkwrap", map[string]string{"npm-shrinkwrap.json": ""}, "", "npm", "npm-shrinkwrap.json"},
		{"none", nil, "", "npm", "no lock file: npm"},
		{"empty name", nil, "@1.0", "npm", "no lock file: npm"},
	} {
		root := t.TempDir()
		tree(t, root, c.repo)
		if pm, why := packageManager(root, packageJSON{packageManager: c.field}); pm != c.pm || why != c.why {
			t.Errorf("%s: packageManager = %q, %q, want %q, %q", c.name, pm, why, c.pm, c.why)
		}
	}
}

// TestBunTest: a bun project whose test script runs bun test, with no
// other runner, gets bun test's guard reporting JUnit XML and a witness
// running only the node's test files; under another package manager the
// same script is no guard.
func TestBunTest(t *testing.T) {
	script := `"scripts": {"test": "bun test"}`
	bun := jsProject(env(t, map[string]string{"package.json": `{` + script + `}`, "bun.lockb": ""}, nil, nil, nil))
	want := "bun test --reporter=junit --reporter-outfile=${RUNNER_TEST_RESULTS}/bun.xml"
	if bun == nil || Quote(bun.guard) != want || Quote(bun.witness) != want+" ${RUNNER_TEST_FILES}" {
		t.Fatalf("jsProject = %+v, want the guard %s", bun, want)
	}
	npm := jsProject(env(t, map[string]string{"package.json": `{"packageManager": "npm@10", ` + script + `}`}, nil, nil, nil))
	if npm == nil || npm.guard != nil {
		t.Errorf("jsProject under npm = %+v, want no guard", npm)
	}
}

// TestJSProtectedWhy: the reason given for the protected paths says that
// package.json is protected at the runner's keys alone (jest's and Babel's,
// mocha's), or that vite.config.* is protected too (vitest); Babel's
// configuration is named for jest.
func TestJSProtectedWhy(t *testing.T) {
	for runner, want := range map[string]string{
		"jest":   "; package.json is protected at its jest and babel keys alone, so dependencies and scripts stay the agent's",
		"mocha":  "; package.json is protected at mocha's key alone, so dependencies and scripts stay the agent's",
		"vitest": " (vite.config.* too: vitest reads its test settings there); package.json stays the agent's",
	} {
		pr := jsProject(env(t, map[string]string{"package.json": `{"devDependencies": {"` + runner + `": "1"}}`, "node_modules/.bin/" + runner: "#!/bin/sh\n"}, nil, nil, nil))
		if pr == nil {
			t.Fatalf("%s: no JavaScript project", runner)
		}
		if !strings.HasSuffix(pr.protWhy, "can skip tests or rewrite their outcomes"+want) {
			t.Errorf("%s: protected because %q, want it to end %q", runner, pr.protWhy, want)
		}
		// Babel's configuration is protected for jest alone, and said so.
		if strings.Contains(pr.protWhy, "Babel's") != (runner == "jest") {
			t.Errorf("%s: protected because %q: Babel's named for jest alone", runner, pr.protWhy)
		}
	}
}

// TestMocharcBareItems: .mocharc.yml names its files unquoted too, on the
// key's line or in a flow list, with a comment after them: each is
// protected; a module name (ts-node/register) is no file of the
// repository and is not.
func TestMocharcBareItems(t *testing.T) {
	for _, c := range []struct{ rc, want string }{
		{"require: test/setup.js\nspec: test/**/*.spec.js\n", "test/setup.js"},
		{"require: test/setup.js # the hooks\n", "test/setup.js"},
		{"require: [test/setup.js, test/more.js, ts-node/register]\n", "test/more.js test/setup.js"},
		{"file: test/more.js\nrequire: ts-node/register\n", "test/more.js"},
	} {
		root := filepath.Join(t.TempDir(), "repo")
		tree(t, root, map[string]string{".mocharc.yml": c.rc, "test/setup.js": "", "test/more.js": ""})
		pj, _ := readPackageJSON(root)
		if got := strings.Join(jsSetupFiles(root, jsRunnerNamed(t, "mocha"), pj), " "); got != c.want {
			t.Errorf("%q: jsSetupFiles = %q, want %q", c.rc, got, c.want)
		}
	}
}

// TestNestedConfigSetupFiles: a configuration below the root (a monorepo's
// package, protected by **/jest.config.*) names its setup files from its
// own directory, <rootDir> and ./ alike, and one above it inside the
// repository; what lies outside the repository, and a configuration inside
// node_modules, name nothing.
func TestNestedConfigSetupFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	tree(t, root, map[string]string{
		"jest.config.js":            "module.exports = {projects: ['<rootDir>/packages/a']}\n",
		"packages/a/jest.config.js": "module.exports = {setupFiles: ['<rootDir>/setup.js', './env.js', '../shared/hooks.js', '../../../outside.js']}\n",
		"packages/a/setup.js":       "", "packages/a/env.js": "", "packages/shared/hooks.js": "", "setup.js": "",
		"node_modules/x/jest.config.js": "module.exports = {setupFiles: ['../../setup.js']}\n",
	})
	pj, _ := readPackageJSON(root)
	got := jsSetupFiles(root, jsRunnerNamed(t, "jest"), pj)
	if want := []string{"packages/a/env.js", "packages/a/setup.js", "packages/shared/hooks.js"}; !slices.Equal(got, want) {
		t.Errorf("jsSetupFiles = %q, want %q", got, want)
	}
}

// TestPresetSetupFiles: a preset file of the repository a configuration
// names (an Nx workspace's projects name ../../jest.preset.js) is
// protected, and so are the files it names in turn; a preset that is a
// package (ts-jest) names no file of the repository.
func TestPresetSetupFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	tree(t, root, map[string]string{
		"jest.preset.js":        "const nxPreset = require('@nx/jest/preset').default;\nmodule.exports = { ...nxPreset, setupFilesAfterEnv: ['./tools/expect.js'] };\n",
		"apps/a/jest.config.ts": "export default { displayName: 'a', preset: '../../jest.preset.js' };\n",
		"apps/b/jest.config.ts": "export default { preset: 'ts-jest', setupFiles: ['./b.js'] };\n",
		"tools/expect.js":       "", "apps/b/b.js": "", "ts-jest": "",
	})
	pj, _ := readPackageJSON(root)
	got := jsSetupFiles(root, jsRunnerNamed(t, "jest"), pj)
	if want := []string{"apps/b/b.js", "jest.preset.js", "tools/expect.js"}; !slices.Equal(got, want) {
		t.Errorf("jsSetupFiles = %q, want %q", got, want)
	}
}

// TestImportedConfigModules: a module of the repository a runner's own
// configuration imports or requires (a shared base, a directory's index)
// is protected and read for the files it names; what vite.config.*
// imports (the application's build plugins), a package and JSON data
// (package.json, tsconfig.json) are not.
func TestImportedConfigModules(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	tree(t, root, map[string]string{
		"vitest.config.ts": "import { defineConfig, mergeConfig } from 'vitest/config'\nimport shared from './vitest.shared'\nimport './test/side-effect.js'\nexport default mergeConfig(shared, defineConfig({}))\n",
		"vitest.shared.ts": "export default { test: { setupFiles: ['./test/setup.ts'] } }\n",
		"test/setup.ts":    "", "test/side-effect.js": "",
		"packages/a/vitest.config.mts": "const base = require('../../config')\nconst { name } = require('./package.json')\nconst ts = require('../../tsconfig.json')\nmodule.exports = base\n",
		"packages/a/package.json":      "{}", "tsconfig.json": "{}",
		"config/index.js": "module.exports = { test: { globalSetup: './global.js' } }\n", "config/global.js": "",
		"vite.config.ts":  "import plugin from './build/plugin'\nexport default { plugins: [plugin()] }\n",
		"build/plugin.ts": "",
	})
	pj, _ := readPackageJSON(root)
	got := jsSetupFiles(root, jsRunnerNamed(t, "vitest"), pj)
	want := []string{"config/global.js", "config/index.js", "test/setup.ts", "test/side-effect.js", "vitest.shared.ts"}
	if !slices.Equal(got, want) {
		t.Errorf("jsSetupFiles = %q, want %q", got, want)
	}
}
