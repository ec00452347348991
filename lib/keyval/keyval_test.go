package keyval

import (
	"reflect"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		entry, file, key string
		ok               bool
	}{
		{"pyproject.toml#tool.pytest", "pyproject.toml", "tool.pytest", true},
		{"**/package.json#jest", "**/package.json", "jest", true},
		{"setup.cfg#tool:pytest", "setup.cfg", "tool:pytest", true},
		{"a#b/x.toml#k", "a#b/x.toml", "k", true},
		{"notes#1.md", "notes#1.md", "", false},
		{"justfile", "justfile", "", false},
		{"x.json#", "x.json", "", true},
	} {
		file, key, ok := Split(c.entry)
		if file != c.file || key != c.key || ok != c.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", c.entry, file, key, ok, c.file, c.key, c.ok)
		}
	}
}

func TestParseKey(t *testing.T) {
	for _, c := range []struct {
		format, key string
		want        []string
	}{
		{TOML, "tool.pytest", []string{"tool", "pytest"}},
		{TOML, `tool."a.b" . c`, []string{"tool", "a.b", "c"}},
		{JSON, "jest", []string{"jest"}},
		{INI, "tool:pytest", []string{"tool:pytest"}},
		{INI, "testenv:py3.11", []string{"testenv:py3.11"}},
		{TOML, "", nil},
		{TOML, "a..b", nil},
		{TOML, "a = 1\nb", nil},
		{INI, "a]", nil},
	} {
		got, err := ParseKey(c.format, c.key)
		if !slices.Equal(got, c.want) || (err == nil) != (c.want != nil) {
			t.Errorf("ParseKey(%s, %q) = %q, %v; want %q", c.format, c.key, got, err, c.want)
		}
	}
}

const pyproject = `[project]
name = "slug"
dependencies = []

[tool.pytest.ini_options]
addopts = "-q"
pythonpath = ["."]
`

const packageJSON = `{"name": "x", "devDependencies": {"jest": "29"}, "jest": {"setupFiles": ["./setup.js"]}}`

const setupCfg = `[metadata]
name = slug

[tool:pytest]
addopts = -q
testpaths =
    tests
    more
`

func TestChanged(t *testing.T) {
	for _, c := range []struct {
		name, file, key, before, after string
		want                           bool
	}{
		{"dependency added", "pyproject.toml", "tool.pytest", pyproject, `[project]
name = "slug"
dependencies = ["requests"]

[tool.pytest.ini_options]
addopts = "-q"
pythonpath = ["."]
`, false},
		{"reformatted", "pyproject.toml", "tool.pytest", pyproject, `[project]
name = "slug"
dependencies = []
[tool.pytest]
ini_options = { addopts = '-q', pythonpath = [ "." ] }
`, false},
		{"plugin added", "pyproject.toml", "tool.pytest", pyproject, `[project]
name = "slug"
dependencies = []

[tool.pytest.ini_options]
addopts = "-q -p myplugin"
pythonpath = ["."]
`, true},
		{"table removed", "pyproject.toml", "tool.pytest", pyproject, "[project]\nname = \"slug\"\n", true},
		{"table added", "pyproject.toml", "tool.pytest", "[project]\nname = \"slug\"\n", pyproject, true},
		{"file created", "pyproject.toml", "tool.pytest", "", pyproject, true},
		{"file created without the key", "pyproject.toml", "tool.pytest", "", "[project]\nname = \"x\"\n", false},
		{"broken", "pyproject.toml", "tool.pytest", pyproject, pyproject + "[", true},
		{"json other key", "package.json", "jest", packageJSON, `{"name": "y", "devDependencies": {"jest": "29", "left-pad": "1"}, "jest": {"setupFiles": ["./setup.js"]}}`, false},
		{"json key changed", "package.json", "jest", packageJSON, `{"name": "x", "devDependencies": {"jest": "29"}, "jest": {"setupFiles": ["./setup.js", "./evil.js"]}}`, true},
		{"json key given twice", "package.json", "jest", packageJSON, `{"name": "x", "jest": {"setupFiles": ["./setup.js"]}, "jest": {}}`, true},
		{"json nested", "package.json", "jest.setupFiles", packageJSON, `{"name": "x", "jest": {"setupFiles": ["./setup.js"], "verbose": true}}`, false},
		{"ini other section", "setup.cfg", "tool:pytest", setupCfg, "[metadata]\nname = slug2\n\n[tool:pytest]\naddopts = -q\ntestpaths =\n    tests\n    more\n", false},
		{"ini comment", "setup.cfg", "tool:pytest", setupCfg, setupCfg + "# a comment\n", false},
		{"ini continuation", "setup.cfg", "tool:pytest", setupCfg, "[metadata]\nname = slug\n\n[tool:pytest]\naddopts = -q\ntestpaths =\n    tests\n", true},
		{"ini key added", "setup.cfg", "tool:pytest", setupCfg, setupCfg + "addopts2 = -p evil\n", true},
		{"ini section twice", "setup.cfg", "tool:pytest", setupCfg, setupCfg + "[tool:pytest]\naddopts = -p evil\n", true},
		{"ini key case", "tox.ini", "pytest", "[pytest]\naddopts = -q\n", "[pytest]\nAddopts = -q\n", true},
	} {
		var before, after []byte
		if c.before != "" {
			before = []byte(c.before)
		}
		if c.after != "" {
			after = []byte(c.after)
		}
		if got := Changed(c.file, c.key, before, after); got != c.want {
			t.Errorf("%s: Changed = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestValue(t *testing.T) {
	v, ok, err := Value("pyproject.toml", []byte(pyproject), "tool.pytest.ini_options.addopts")
	if err != nil || !ok || v != "-q" {
		t.Errorf("Value(addopts) = %v, %v, %v", v, ok, err)
	}
	if _, ok, err := Value("pyproject.toml", []byte(pyproject), "project.name.x"); ok || err != nil {
		t.Errorf("Value under a string = %v, %v; want absent", ok, err)
	}
	if _, _, err := Value("x.yaml", []byte("a: 1"), "a"); err == nil {
		t.Error("Value of a YAML file: no error")
	}
}

// TestINI holds parseINI to what pytest's iniconfig reads: a section's
// settings, "=" or ":" between key and value (the first of them),
// continuation lines joined by newlines, comment lines anywhere. A key
// alone, which iniconfig refuses, is read as a setting with no value:
// adding one is a change all the same.
func TestINI(t *testing.T) {
	data := "# top\n[tool:pytest]\naddopts = -q\n  ; a comment inside the value\n  -p no:x\ntestpaths: tests\nflag\n=odd\nurl = http://h:1\n\n[other]\nk =\n"
	v, ok, err := Value("setup.cfg", []byte(data), "tool:pytest")
	if err != nil || !ok {
		t.Fatalf("Value = %v, %v, %v", v, ok, err)
	}
	want := map[string]any{"addopts": "-q\n-p no:x", "testpaths": "tests", "flag": "", "": "odd", "url": "http://h:1"}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("[tool:pytest] = %#v, want %#v", v, want)
	}
	if v, ok, err := Value("setup.cfg", []byte(data), "other"); err != nil || !ok || !reflect.DeepEqual(v, map[string]any{"k": ""}) {
		t.Errorf("[other] = %#v, %v, %v", v, ok, err)
	}
	if _, ok, err := Value("setup.cfg", []byte(data), "absent"); ok || err != nil {
		t.Errorf("[absent] = %v, %v; want absent, no error", ok, err)
	}
}

// TestINIErrors: what iniconfig refuses is an error naming its line
// (Changed then counts the file as changed).
func TestINIErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"[a]\nk = 1\n[a]\n", "line 3: section [a] given twice"},
		{"[a]\n\n# c\nk = 1\nk = 2\n", "line 5: k given twice in its section"},
		{"k = 1\n", "line 1: a setting outside any section"},
		{"[a]\n  more\n", "line 2: a continuation line with no setting before it"},
		{"  more\n", "line 1: a continuation line with no setting before it"},
		{"[a]\nk = 1\n[b\n", "line 3: a section header without ]"},
	} {
		_, _, err := Value("tox.ini", []byte(c.data), "a")
		if err == nil || err.Error() != "INI: "+c.want {
			t.Errorf("Value(%q) error = %v, want INI: %s", c.data, err, c.want)
		}
	}
}

// TestChangedEmptyCreated: an empty file where there was none is not the
// same as no file: an empty package.json is no JSON a reader can take, so
// it counts as a change; an empty pyproject.toml holds no key, so it does
// not.
func TestChangedEmptyCreated(t *testing.T) {
	if !Changed("package.json", "jest", nil, []byte{}) {
		t.Error("an empty package.json created: no change")
	}
	if Changed("pyproject.toml", "tool.pytest", nil, []byte{}) {
		t.Error("an empty pyproject.toml created: a change")
	}
}
