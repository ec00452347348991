package ecosystem

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/jsonstrict"
)

// packageJSON is package.json as far as read here.
type packageJSON struct {
	deps           map[string]bool
	testScript     string
	packageManager string
	jest, mocha    any // the "jest" and "mocha" keys' values, nil when absent
}

// readPackageJSON reads the root's package.json; ok is false when there is
// none or it is no JSON object.
func readPackageJSON(root string) (pj packageJSON, ok bool) {
	data := read(root, "package.json")
	if data == nil {
		return pj, false
	}
	v, err := jsonstrict.Decode(data)
	m, isObj := v.(map[string]any)
	if err != nil || !isObj {
		return pj, false
	}
	pj.deps = map[string]bool{}
	for _, k := range []string{"dependencies", "devDependencies", "optionalDependencies"} {
		if d, ok := m[k].(map[string]any); ok {
			for name := range d {
				pj.deps[name] = true
			}
		}
	}
	if s, ok := m["scripts"].(map[string]any); ok {
		pj.testScript, _ = s["test"].(string)
	}
	pj.packageManager, _ = m["packageManager"].(string)
	pj.jest, pj.mocha = m["jest"], m["mocha"]
	return pj, true
}

// jsRunner is one JavaScript test runner: its guard's arguments (after
// its executable), its witness's extra ones, and its configuration files.
type jsRunner struct {
	name    string
	args    []string
	witness []string
	configs []string // globs of its configuration files at any depth
	keys    []string // package.json keys it reads
}

// jsRunners are the runners known here, in the order one is taken when a
// project has more than one and its test script names none.
var jsRunners = []jsRunner{
	{name: "vitest", args: []string{"run", "--no-color", "--reporter=default", "--reporter=junit", "--outputFile.junit=${RUNNER_TEST_RESULTS}/vitest.xml"},
		witness: []string{"${RUNNER_TEST_FILES}"},
		configs: []string{"**/vitest.config.*", "**/vitest.workspace.*", "**/vitest.projects.*", "**/vite.config.*"}},
	{name: "jest", args: []string{"--ci", "--json", "--outputFile=${RUNNER_TEST_RESULTS}/jest.json"},
		witness: []string{"--runTestsByPath", "${RUNNER_TEST_FILES}"},
		// Babel's configuration: babel-jest, jest's default transform,
		// runs its plugins over every test file.
		configs: []string{"**/jest.config.*", "**/babel.config.*", "**/.babelrc", "**/.babelrc.*"}, keys: []string{"jest", "babel"}},
	{name: "mocha", args: []string{"--reporter", "xunit", "--reporter-option", "output=${RUNNER_TEST_RESULTS}/mocha.xml"},
		witness: []string{"${RUNNER_TEST_FILES}"},
		configs: []string{"**/.mocharc.*"}, keys: []string{"mocha"}},
}

// jsProject detects a JavaScript or TypeScript project and its test
// runner's guard, run directly (node_modules/.bin/<runner>), not through
// package.json's scripts, which are the agent's to edit.
func jsProject(e Env) *project {
	pj, ok := readPackageJSON(e.Root)
	if !ok {
		if exists(e.Root, "package.json") {
			return &project{name: JavaScript, signal: "package.json", hints: []string{"package.json cannot be read as JSON: set [guard] command"}}
		}
		return nil
	}
	pm, pmWhy := packageManager(e.Root, pj)
	pr := &project{name: JavaScript, signal: "package.json; " + pmWhy}
	run := pickRunner(pj)
	if run == nil {
		if pm == "bun" && strings.Contains(pj.testScript, "bun test") {
			pr.guard = []string{"bun", "test", "--reporter=junit", "--reporter-outfile=${RUNNER_TEST_RESULTS}/bun.xml"}
			pr.guardWhy = "the test script runs bun test"
			pr.witness = append(slices.Clone(pr.guard), "${RUNNER_TEST_FILES}")
			pr.witWhy = "bun test runs only the node's test files"
			pr.programs = []string{"bun"}
			return pr
		}
		pr.hints = append(pr.hints, "no vitest, jest or mocha in package.json's dependencies: set [guard] command to your test runner, reporting by name into $RUNNER_TEST_RESULTS")
		return pr
	}
	exe := []string{"node_modules/.bin/" + run.name}
	why := run.name + " is in package.json's dependencies; run directly, not through package.json's scripts (the agent's to edit)"
	if exists(e.Root, ".pnp.cjs") {
		exe = []string{"yarn", run.name}
		why = run.name + " is in package.json's dependencies; yarn Plug'n'Play (.pnp.cjs) runs it"
		pr.programs = []string{"yarn"}
	} else if !exists(e.Root, "node_modules") {
		pr.hints = append(pr.hints, "node_modules/ is missing: install the dependencies ("+pm+" install) before runner-start, or the guard cannot start")
	}
	pr.guard = append(exe, run.args...)
	pr.guardWhy = why
	pr.witness = append(slices.Clone(pr.guard), run.witness...)
	pr.witWhy = run.name + " runs only the node's test files"
	pr.programs = append(pr.programs, exe[0], "node")
	pr.protected = append(slices.Clone(run.configs), jsKeys(run)...)
	pr.protected = append(pr.protected, jsSetupFiles(e.Root, run, pj)...)
	pr.protWhy = run.name + "'s configuration and the setup files, environments and reporters it names can skip tests or rewrite their outcomes"
	if run.name == "jest" {
		pr.protWhy = "jest's configuration, Babel's (babel-jest runs its plugins over every test file) and the setup files, environments and reporters jest's names can skip tests or rewrite their outcomes"
	}
	switch {
	case len(run.keys) > 1:
		pr.protWhy += "; package.json is protected at its " + strings.Join(run.keys, " and ") + " keys alone, so dependencies and scripts stay the agent's"
	case len(run.keys) > 0:
		pr.protWhy += "; package.json is protected at " + run.name + "'s key alone, so dependencies and scripts stay the agent's"
	case run.name == "vitest":
		pr.protWhy += " (vite.config.* too: vitest reads its test settings there); package.json stays the agent's"
	}
	return pr
}

// jsKeys are the package.json key entries of a runner.
func jsKeys(run *jsRunner) []string {
	var out []string
	for _, k := range run.keys {
		out = append(out, "package.json#"+k)
	}
	return out
}

// pickRunner is the test runner the project uses: the one its test script
// names, else the first of jsRunners among its dependencies; nil when
// none.
func pickRunner(pj packageJSON) *jsRunner {
	var have []*jsRunner
	for i := range jsRunners {
		if pj.deps[jsRunners[i].name] {
			have = append(have, &jsRunners[i])
		}
	}
	for _, r := range have {
		if regexp.MustCompile(`\b` + r.name + `\b`).MatchString(pj.testScript) {
			return r
		}
	}
	if len(have) > 0 {
		return have[0]
	}
	return nil
}

// packageManager is the project's package manager and why: package.json's
// packageManager field, else its lock file, else npm.
func packageManager(root string, pj packageJSON) (name, why string) {
	if pm, _, _ := strings.Cut(pj.packageManager, "@"); pm != "" {
		return pm, "packageManager is " + pj.packageManager
	}
	for _, l := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"},
		{"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
	} {
		if exists(root, l.file) {
			return l.pm, l.file
		}
	}
	return "npm", "no lock file: npm"
}

// The configuration keys that name files a runner loads beside the tests:
// setup files, environments, reporters, transforms, runners, and mocha's
// require and file.
var (
	setupKey = regexp.MustCompile(`["']?\b(setupFiles|setupFilesAfterEnv|globalSetup|globalTeardown|testEnvironment|environment|reporters|testRunner|runner|snapshotResolver|resolver|testSequencer|transform|require|file|dependencyExtractor|watchPlugins|preset)\b["']?\s*:`)
	jsString = regexp.MustCompile(`["'` + "`" + `]([^"'` + "`" + `\n]+)["'` + "`" + `]`)
)

// jsSetupFiles are the files of the repository the runner's configuration
// (its configuration files, at the root or below it, and its key in
// package.json) names under setupKey's keys: each protected, since a setup
// file or a reporter can rewrite any outcome. A name is taken from the
// directory of the configuration that gives it (jest's <rootDir>, vitest's
// root): a monorepo's packages/a/jest.config.js naming ./setup.js names
// packages/a/setup.js.
//
// A preset of the repository (jest's `preset: '../../jest.preset.js'`, as
// an Nx workspace's projects name theirs) and a module of the repository a
// runner's own configuration imports (vitest.config.ts's `import shared
// from './vitest.shared'`, jest.config.js's `require('./jest.base')`: it
// can set anything the configuration sets) are protected and read as
// configurations too, their names taken from their own directories. What
// vite.config.* imports is the application's build (its plugins), not
// followed.
func jsSetupFiles(root string, run *jsRunner, pj packageJSON) []string {
	var out []named
	configs := jsConfigFiles(root, run.configs)
	for i := 0; i < len(configs); i++ {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(configs[i])))
		if err != nil {
			continue
		}
		dir := path.Dir(configs[i])
		names := configNames(string(data), dir)
		if !strings.HasPrefix(path.Base(configs[i]), "vite.config.") {
			names = append(names, importedModules(root, string(data), dir)...)
		}
		out = append(out, names...)
		for _, n := range names {
			if p := n.inRepo(root); n.follow && p != "" && !slices.Contains(configs, p) {
				configs = append(configs, p)
			}
		}
	}
	for _, v := range []any{pj.jest, pj.mocha} {
		if m, ok := v.(map[string]any); ok {
			for k, val := range m {
				if setupKey.MatchString(k + ":") {
					for _, s := range jsonStrings(val) {
						out = append(out, named{dir: ".", name: s})
					}
				}
			}
		}
	}
	var files []string
	for _, n := range out {
		if p := n.inRepo(root); p != "" {
			files = append(files, p)
		}
	}
	return sortedUnique(files)
}

// named is a name a configuration in directory dir gives (relative to the
// root, "." at it) under one of setupKey's keys; follow when the file it
// names is read as a configuration too (a preset, an imported module).
type named struct {
	dir, name string
	follow    bool
}

// inRepo is the file of the repository n names, relative to the root, ""
// when it names none: an absolute path, a pattern, a variable, a path
// outside the repository or in node_modules, a file that does not exist.
func (n named) inRepo(root string) string {
	if path.IsAbs(n.name) || strings.ContainsAny(n.name, "*?[{$") {
		return ""
	}
	p := path.Join(n.dir, strings.TrimPrefix(n.name, "<rootDir>/"))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "node_modules/") || strings.Contains(p, "/node_modules/") {
		return ""
	}
	if !isFile(root, p) {
		return ""
	}
	return p
}

// relImport matches a relative module specifier a JavaScript or
// TypeScript file imports or requires.
var relImport = regexp.MustCompile(`(?m)(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.\.?/[^"'\n]+)["']`)

// importedModules are the files of the repository that the configuration
// text t, in directory dir, imports by a relative specifier, resolved as
// node and bundlers do (the name as written, with an extension, or a
// directory's index), each marked to be read as a configuration too. A
// JSON file it reads (package.json, tsconfig.json's paths) is data the
// agent may change, as package.json outside the runner's key is.
func importedModules(root, t, dir string) []named {
	var out []named
	for _, m := range relImport.FindAllStringSubmatch(t, -1) {
		if strings.HasSuffix(m[1], ".json") {
			continue // data (package.json, tsconfig.json), the agent's to change
		}
		base := path.Join(dir, m[1])
		for _, suffix := range []string{"", ".ts", ".js", ".mjs", ".cjs", ".mts", ".cts", "/index.ts", "/index.js", "/index.mjs", "/index.cjs"} {
			if n := (named{dir: ".", name: base + suffix, follow: true}); n.inRepo(root) != "" {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// configNames are the names the configuration text t, in directory dir,
// gives under setupKey's keys (quoted, or bare as YAML writes them) and in
// a YAML list under require: or file: (.mocharc.yml).
func configNames(t, dir string) []named {
	var out []named
	for _, loc := range setupKey.FindAllStringSubmatchIndex(t, -1) {
		preset := t[loc[2]:loc[3]] == "preset"
		v := valueAt(t, loc[1])
		for _, s := range jsString.FindAllStringSubmatch(v, -1) {
			out = append(out, named{dir, s[1], preset})
		}
		for _, s := range bareItems(v) {
			out = append(out, named{dir, s, preset})
		}
	}
	for _, s := range yamlList(t) {
		out = append(out, named{dir: dir, name: s})
	}
	return out
}

// maxConfigWalk bounds the entries jsConfigFiles looks at in a repository.
const maxConfigWalk = 200_000

// jsConfigFiles are the files under root (paths relative to it, with
// slashes) whose names match one of globs ("**/jest.config.*": at any
// depth), outside node_modules and .git, in the first maxConfigWalk
// entries of the walk.
func jsConfigFiles(root string, globs []string) []string {
	var out []string
	seen := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if seen++; seen > maxConfigWalk {
			return filepath.SkipAll
		}
		if err != nil {
			return nil // a directory it cannot read: the rest is walked
		}
		if d.IsDir() {
			if p != root && (d.Name() == "node_modules" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			return nil
		}
		for _, g := range globs {
			if ok, _ := path.Match(strings.TrimPrefix(g, "**/"), d.Name()); ok {
				if rel, err := filepath.Rel(root, p); err == nil {
					out = append(out, filepath.ToSlash(rel))
				}
				break
			}
		}
		return nil
	})
	return out
}

// valueAt is the value that starts at t[i:] (after a key's colon): a
// string, or an array or object to its closing bracket.
func valueAt(t string, i int) string {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
		i++
	}
	if i >= len(t) {
		return ""
	}
	open := t[i]
	if open != '[' && open != '{' {
		end := strings.IndexAny(t[i:], ",\n}")
		if end < 0 {
			return t[i:]
		}
		return t[i : i+end]
	}
	depth, quote := 0, byte(0)
	for j := i; j < len(t); j++ {
		c := t[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth--; depth == 0 {
				return t[i : j+1]
			}
		}
	}
	return t[i:]
}

// bareItems are the unquoted items of a value: YAML's plain scalar on the
// key's line (.mocharc.yml's `require: test/setup.js`) or in a flow list
// (`require: [test/a.js, test/b.js]`), a comment after it dropped. In a
// JavaScript configuration these are identifiers and expressions, which
// name no file of the repository and are dropped with the rest.
func bareItems(v string) []string {
	v, _, _ = strings.Cut(v, " #")
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") {
		return nil
	}
	if inner, ok := strings.CutPrefix(v, "["); ok {
		v = strings.TrimSuffix(inner, "]")
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item != "" && !strings.ContainsAny(item[:1], "\"'`[{") {
			out = append(out, item)
		}
	}
	return out
}

// yamlItem is a "- item" line of a YAML list.
var yamlItem = regexp.MustCompile(`^\s+-\s+["']?([^"'\s#]+)`)

// yamlList is the items of the YAML lists under require: and file:.
func yamlList(t string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(t, "\n") {
		switch {
		case regexp.MustCompile(`^(require|file)\s*:\s*$`).MatchString(l):
			in = true
		case in && yamlItem.MatchString(l):
			out = append(out, yamlItem.FindStringSubmatch(l)[1])
		case in && strings.TrimSpace(l) != "":
			in = false
		}
	}
	return out
}

// jsonStrings is every string in a decoded JSON value.
func jsonStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, jsonStrings(x)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, jsonStrings(x)...)
		}
		return out
	}
	return nil
}
