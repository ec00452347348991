package testscripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEHostileAgents holds docs/threat-model.md's "What an agent cannot do" to
// the hostile suite: the number of cheats it states is the number the
// suite runs, every cheat the table names is one the suite runs, and
// every testscript it names exists.
func TestREADMEHostileAgents(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "docs", "threat-model.md"))
	if err != nil {
		t.Fatal(err)
	}
	suite, err := os.ReadFile(filepath.Join(root, "testscripts", "loop-hostile-agents.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	cheats := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^env HOSTILE=(\S+)$`).FindAllStringSubmatch(string(suite), -1) {
		if m[1] != "none" {
			cheats[m[1]] = true
		}
	}
	i := strings.Index(string(readme), "\n## What an agent cannot do\n")
	j := strings.Index(string(readme), "\n## The sandbox\n")
	if i < 0 || j < i {
		t.Fatal("docs/threat-model.md has no section \"What an agent cannot do\" before \"The sandbox\"")
	}
	section := string(readme[i:j])
	m := regexp.MustCompile(`runs (\d+) scripted cheats`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the section does not say how many cheats the suite runs")
	}
	if n, _ := strconv.Atoi(m[1]); n != len(cheats) {
		t.Errorf("docs/threat-model.md says %d cheats, loop-hostile-agents.txtar runs %d", n, len(cheats))
	}
	for _, row := range regexp.MustCompile("hostile ((?:`[^`]+`(?:, )?)+)").FindAllStringSubmatch(section, -1) {
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(row[1], -1) {
			n := name[1]
			if strings.HasSuffix(n, "*") {
				found := false
				for c := range cheats {
					found = found || strings.HasPrefix(c, strings.TrimSuffix(n, "*"))
				}
				if !found {
					t.Errorf("docs/threat-model.md names hostile %s: no such cheat", n)
				}
			} else if !cheats[n] {
				t.Errorf("docs/threat-model.md names hostile %s: no such cheat in loop-hostile-agents.txtar", n)
			}
		}
	}
	for _, s := range regexp.MustCompile("`((?:loop|guard-run|tree-validate|runner-step)-[a-z-]+)`").FindAllStringSubmatch(section, -1) {
		if _, err := os.Stat(filepath.Join(root, "testscripts", s[1]+".txtar")); err != nil {
			t.Errorf("docs/threat-model.md names the testscript %s: %v", s[1], err)
		}
	}
}
