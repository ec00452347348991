package testscripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/vocab"
)

// The docs document what exists: every command in cmd/ has a row in the
// commands table of docs/commands.md, and every RUNNER_* override the
// configuration reads is listed in docs/configuration.md.
func TestReadmeMatchesCommands(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	confDoc, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if !strings.Contains(string(readme), "| `"+c.Name()+"` |") {
			t.Errorf("docs/commands.md's commands table has no row for %s", c.Name())
		}
	}
	env, err := os.ReadFile(filepath.Join(root, "lib", "config", "env.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range regexp.MustCompile(`"(RUNNER_[A-Z_]+)"`).FindAllStringSubmatch(string(env), -1) {
		if !strings.Contains(string(confDoc), "`"+v[1]+"`") {
			t.Errorf("docs/configuration.md does not list the override %s", v[1])
		}
	}
}

// The exit table of docs/commands.md says what runner-step's own header
// says for each code it exits with, word for word, and lists every one of
// them.
func TestReadmeExitTableMatchesRunnerStep(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	step, err := os.ReadFile(filepath.Join(root, "tools", "runner-step"))
	if err != nil {
		t.Fatal(err)
	}
	// The header's "# Exit: 0 …, 1 …" list, its continuation lines joined.
	var exit strings.Builder
	in := false
	for _, l := range strings.Split(string(step), "\n") {
		switch {
		case strings.HasPrefix(l, "# Exit: "):
			in = true
			exit.WriteString(strings.TrimPrefix(l, "# Exit: "))
		case in && strings.HasPrefix(l, "#       "):
			exit.WriteString(" " + strings.TrimSpace(strings.TrimPrefix(l, "#")))
		default:
			in = false
		}
	}
	want := map[string]string{}
	depth, start := 0, 0
	text := strings.TrimSuffix(exit.String(), ".")
	for i, r := range text + "," {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				item := strings.TrimSpace(text[start:i])
				code, desc, _ := strings.Cut(item, " ")
				want[strings.ReplaceAll(code, "/", " / ")] = desc
				start = i + 1
			}
		}
	}
	if len(want) < 10 {
		t.Fatalf("runner-step's Exit: header lists %d codes: %v", len(want), want)
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| ([0-9][0-9 /]*) \\| [^|]+ \\| ([^|]+) \\|$").FindAllStringSubmatch(string(readme), -1) {
		got[strings.TrimSpace(m[1])] = strings.TrimSpace(m[2])
	}
	for code, desc := range want {
		if got[code] != desc {
			t.Errorf("docs/commands.md's exit table, code %s, runner-step column: %q, runner-step says %q", code, got[code], desc)
		}
	}
}

// The table of the outcome fields' words in docs/concepts.md is
// lib/vocab's, generated: UPDATE_README=1 rewrites it.
func TestReadmeWords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(repoRoot(), "docs", "concepts.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- words: generated from lib/vocab (go test ./testscripts -run TestReadmeWords) -->\n", "<!-- /words -->"
	i, j := strings.Index(string(data), open), strings.Index(string(data), end)
	if i < 0 || j < i {
		t.Fatalf("docs/concepts.md has no %q … %q section", open, end)
	}
	want := vocab.Markdown()
	if got := string(data[i+len(open) : j]); got != want {
		if os.Getenv("UPDATE_README") == "1" || os.Getenv("UPDATE_DOCS") == "1" {
			out := string(data[:i+len(open)]) + want + string(data[j:])
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/concepts.md's words table differs from lib/vocab's (UPDATE_README=1 go test ./testscripts -run TestReadmeWords):\n%s", want)
	}
}
