package testscripts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var (
	tomlHeader = regexp.MustCompile(`^\[([A-Za-z0-9_.-]+)\]\s*(?:#.*)?$`)
	tomlKey    = regexp.MustCompile(`^([A-Za-z0-9_-]+)\s*=`)
)

// confset CONFIG SNIPPET sets in the TOML file CONFIG the keys of the TOML
// fragment SNIPPET, each in its table (as a reader pastes a docs/
// configuration into .runner/state/config.toml): a key's line replaces
// the same key's line in that table, or joins the table's head; a table
// CONFIG lacks is added at its end. Values are one line each, as in the
// generated config.toml; comments in SNIPPET are left out.
func confset(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: confset CONFIG SNIPPET")
	}
	conf := strings.Split(strings.TrimRight(ts.ReadFile(args[0]), "\n"), "\n")
	table := ""
	for i, l := range strings.Split(ts.ReadFile(args[1]), "\n") {
		l = strings.TrimSpace(l)
		switch m := tomlHeader.FindStringSubmatch(l); {
		case l == "" || strings.HasPrefix(l, "#"):
		case m != nil:
			table = m[1]
		case tomlKey.MatchString(l):
			if open := strings.Count(l, "[") - strings.Count(l, "]"); open != 0 {
				ts.Fatalf("confset: %s:%d: a value over several lines", args[1], i+1)
			}
			conf = setKey(conf, table, tomlKey.FindStringSubmatch(l)[1], l)
		default:
			ts.Fatalf("confset: %s:%d: not a key, a table or a comment: %s", args[1], i+1, l)
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(conf, "\n")+"\n"), 0o644))
}

// setKey is conf with key's line in table ("" the top level) set to line.
func setKey(conf []string, table, key, line string) []string {
	start, end := -1, len(conf) // the table's lines, past its header
	if table == "" {
		start = 0
	}
	for i, l := range conf {
		m := tomlHeader.FindStringSubmatch(strings.TrimSpace(l))
		switch {
		case m == nil:
		case start >= 0:
			end = i
		case m[1] == table:
			start = i + 1
		}
		if m != nil && start >= 0 && end == i {
			break
		}
	}
	if start < 0 {
		return append(conf, "", "["+table+"]", line)
	}
	out := append([]string{}, conf...)
	for i := start; i < end; i++ {
		if m := tomlKey.FindStringSubmatch(strings.TrimSpace(conf[i])); m != nil && m[1] == key {
			out[i] = line
			return out
		}
	}
	at := start
	if table == "" {
		at = end
	}
	return append(append(out[:at:at], line), conf[at:]...)
}

func TestSetKey(t *testing.T) {
	t.Parallel()
	conf := []string{"# c", "a = 1", "", "[agent]", "# x", "backend = \"command\"", "model = \"\"", "[hooks]", "b = 2"}
	for _, tt := range []struct {
		table, key, line string
		want             string
	}{
		{"agent", "backend", `backend = "codex"`, "# c|a = 1||[agent]|# x|backend = \"codex\"|model = \"\"|[hooks]|b = 2"},
		{"agent", "bin", `bin = "x"`, "# c|a = 1||[agent]|bin = \"x\"|# x|backend = \"command\"|model = \"\"|[hooks]|b = 2"},
		{"", "a", "a = 3", "# c|a = 3||[agent]|# x|backend = \"command\"|model = \"\"|[hooks]|b = 2"},
		{"", "z", "z = 0", "# c|a = 1||z = 0|[agent]|# x|backend = \"command\"|model = \"\"|[hooks]|b = 2"},
		{"hooks", "b", "b = 5", "# c|a = 1||[agent]|# x|backend = \"command\"|model = \"\"|[hooks]|b = 5"},
		{"sandbox", "mode", `mode = "bwrap"`, "# c|a = 1||[agent]|# x|backend = \"command\"|model = \"\"|[hooks]|b = 2||[sandbox]|mode = \"bwrap\""},
	} {
		if got := strings.Join(setKey(conf, tt.table, tt.key, tt.line), "|"); got != tt.want {
			t.Errorf("setKey(%s, %s):\n got %s\nwant %s", tt.table, tt.key, got, tt.want)
		}
	}
}
