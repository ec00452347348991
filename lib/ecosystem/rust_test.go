package ecosystem

import (
	"slices"
	"strings"
	"testing"
)

// TestRustNextestHint: a project set up for cargo-nextest (a
// .config/nextest.toml, or cargo-nextest on PATH) is told its guard is
// cargo test; one with neither is told nothing about it.
func TestRustNextestHint(t *testing.T) {
	for _, c := range []struct {
		name string
		repo map[string]string
		home map[string]string
		hint bool
	}{
		{"nextest.toml, no cargo-nextest", map[string]string{".config/nextest.toml": "[profile.ci]\n"}, nil, true},
		{"cargo-nextest on PATH, no nextest.toml", nil, map[string]string{"bin/cargo-nextest": "#!/bin/sh\n"}, true},
		{"both", map[string]string{".config/nextest.toml": ""}, map[string]string{"bin/cargo-nextest": "#!/bin/sh\n"}, true},
		{"neither", nil, map[string]string{"bin/cargo": "#!/bin/sh\n"}, false},
	} {
		repo := map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}
		for k, v := range c.repo {
			repo[k] = v
		}
		pr := rustProject(env(t, repo, c.home, []string{"bin"}, nil))
		if pr == nil || Quote(pr.guard) != "cargo test --no-fail-fast" {
			t.Fatalf("%s: rustProject = %+v, want the guard cargo test --no-fail-fast", c.name, pr)
		}
		got := slices.ContainsFunc(pr.hints, func(h string) bool { return strings.HasPrefix(h, "cargo-nextest is not used") })
		if got != c.hint {
			t.Errorf("%s: hints %q, want the cargo-nextest hint: %v", c.name, pr.hints, c.hint)
		}
	}
}
