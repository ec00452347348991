package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
)

// testInfra is protected test infrastructure as runner-init writes it for
// a Python and a JavaScript project.
var testInfra = []string{"**/conftest.py", "**/pyproject.toml#tool.pytest", "package.json#jest", "setup.cfg#tool:pytest"}

const (
	pyproject = "[project]\nname = \"slug\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"
	pkgJSON   = "{\n  \"name\": \"x\",\n  \"jest\": {\"setupFiles\": [\"./setup.js\"]}\n}\n"
	setupCfg  = "[metadata]\nname = slug\n\n[tool:pytest]\naddopts = -q\n"
)

// infraRepo is a repository on runner/r with a Python project's and a
// JavaScript project's test configuration, committed.
func infraRepo(t *testing.T) (string, *git.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	for p, data := range map[string]string{
		"pyproject.toml": pyproject, "sub/pyproject.toml": pyproject, "package.json": pkgJSON, "setup.cfg": setupCfg,
		"conftest.py": "", "tests/deep/conftest.py": "", "tests/test_a.py": "def test_a(): pass\n",
	} {
		writeFile(t, filepath.Join(dir, p), data)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, repo, gitIn(t, dir, "rev-parse", "HEAD")
}

func TestProtectedByAnyDepth(t *testing.T) {
	for p, want := range map[string]bool{
		"conftest.py": true, "tests/deep/conftest.py": true, "tests/test_a.py": false,
		"pyproject.toml":  false, // a key entry protects a key, not the file
		"conftest.py.bak": false,
	} {
		if _, _, ok := ProtectedBy(p, testInfra); ok != want {
			t.Errorf("ProtectedBy(%q) = %v, want %v", p, ok, want)
		}
	}
	if got := KeysOf("sub/pyproject.toml", testInfra); !slices.Equal(got, []string{"**/pyproject.toml#tool.pytest"}) {
		t.Errorf("KeysOf(sub/pyproject.toml) = %q", got)
	}
	if got := KeysOf("sub/package.json", testInfra); got != nil {
		t.Errorf("KeysOf(sub/package.json) = %q, want none (package.json#jest is the root's)", got)
	}
	if Scope(testInfra) != nil {
		t.Error("Scope of **/conftest.py is not the whole tree")
	}
	if got := Scope([]string{"package.json#jest", "cfg/setup.cfg#tool:pytest"}); !slices.Contains(got, "package.json") || !slices.Contains(got, "cfg/setup.cfg") {
		t.Errorf("Scope of key entries = %q, want their files", got)
	}
}

// TestEnforceKeys: a session that changes a protected key, or a
// conftest.py at any depth, has the file put back (the whole file, its
// other changes too) with a reason; one that changes the rest of the
// same files (a dependency) keeps its change. With the bytes held before
// the session and without (a session that ended unchecked), and for a
// file the session created.
func TestEnforceKeys(t *testing.T) {
	type change struct{ path, data string }
	for _, c := range []struct {
		name    string
		changes []change
		reasons []string
		kept    []string // paths whose change stays
	}{
		{"dependency", []change{{"pyproject.toml", "[project]\nname = \"slug\"\ndependencies = [\"requests\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"}}, nil, []string{"pyproject.toml"}},
		{"plugin", []change{{"pyproject.toml", "[project]\nname = \"slug\"\ndependencies = [\"requests\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q -p myplugin\"\n"}},
			[]string{"the agent changed tool.pytest in pyproject.toml (protected_paths **/pyproject.toml#tool.pytest); the runner put the whole file back as it was before the session, its other changes too"}, nil},
		{"deep pyproject", []change{{"sub/pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"--deselect x\"\n"}},
			[]string{"the agent changed tool.pytest in sub/pyproject.toml (protected_paths **/pyproject.toml#tool.pytest); the runner put the whole file back as it was before the session, its other changes too"}, nil},
		{"jest", []change{{"package.json", "{\"name\": \"x\", \"jest\": {\"setupFiles\": [\"./evil.js\"]}}\n"}},
			[]string{"the agent changed jest in package.json (protected_paths package.json#jest); the runner put the whole file back as it was before the session, its other changes too"}, nil},
		{"scripts", []change{{"package.json", "{\"name\": \"x\", \"scripts\": {\"test\": \"true\"}, \"jest\": {\"setupFiles\": [\"./setup.js\"]}}\n"}}, nil, []string{"package.json"}},
		{"setup.cfg", []change{{"setup.cfg", "[metadata]\nname = slug\n\n[tool:pytest]\naddopts = -q --deselect x\n"}},
			[]string{"the agent changed tool:pytest in setup.cfg (protected_paths setup.cfg#tool:pytest); the runner put the whole file back as it was before the session, its other changes too"}, nil},
		{"conftest", []change{{"tests/deep/conftest.py", "import evil\n"}},
			[]string{"the agent changed the protected path tests/deep/conftest.py (protected_paths **/conftest.py); the runner restored it"}, nil},
		{"new conftest", []change{{"tests/new/conftest.py", "import evil\n"}},
			[]string{"the agent changed the protected path tests/new/conftest.py (protected_paths **/conftest.py); the runner restored it"}, nil},
		{"new pyproject", []change{{"tests/pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-p evil\"\n"}},
			[]string{"the agent changed tool.pytest in tests/pyproject.toml (protected_paths **/pyproject.toml#tool.pytest); the runner removed the file, which did not exist before"}, nil},
	} {
		for _, holding := range []bool{true, false} {
			name := c.name + map[bool]string{true: "/held", false: "/unheld"}[holding]
			t.Run(name, func(t *testing.T) {
				dir, repo, base := infraRepo(t)
				var held *Held
				if holding {
					var err error
					if held, err = Hold(repo, testInfra); err != nil {
						t.Fatal(err)
					}
				}
				for _, ch := range c.changes {
					writeFile(t, filepath.Join(dir, ch.path), ch.data)
				}
				reasons, err := Enforce(repo, "the agent", "runner/r", base, testInfra, time.Time{}, held)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(reasons, c.reasons) {
					t.Fatalf("reasons %q, want %q", reasons, c.reasons)
				}
				for _, ch := range c.changes {
					data, err := os.ReadFile(filepath.Join(dir, ch.path))
					kept := err == nil && string(data) == ch.data
					if kept != slices.Contains(c.kept, ch.path) {
						t.Errorf("%s: the session's change kept: %v, want %v", ch.path, kept, !kept)
					}
				}
			})
		}
	}
}
