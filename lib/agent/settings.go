package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/passcache"
)

// A CLI that refuses its settings ends the session as a config error
// (refused). runner-check asks before an iteration is allocated, by a dry
// run where the CLI has one that reads what a session would and contacts
// no model (settingsProbes): Codex parses exec's options (`codex exec …
// --help`) and loads its config with the -c overrides (`codex … mcp
// list`); Claude Code checks option values (`claude -p … --help`; an
// unknown option still passes); OpenCode loads its configuration
// (`opencode debug config`); Gemini CLI loads its settings (`gemini …
// --help`; an unknown option still passes). A node CLI takes seconds to
// start, so a passed dry run is cached by the binary, the probe's argv,
// the CLI's environment and its settings files (settingsKey); a change to
// any of them asks again.

// settingsProbes are the dry runs of a backend's session settings
// (Spec.SettingsProbes): argvs after the executable; none for the command
// and replay backends.
func settingsProbes(a config.Agent) [][]string {
	spec, _ := Lookup(a.Backend)
	if spec.SettingsProbes == nil {
		return nil
	}
	return spec.SettingsProbes(a)
}

// modelArgs is flag and the configured model, none without a model.
func modelArgs(a config.Agent, flag string) []string {
	if a.Model == "" {
		return nil
	}
	return []string{flag, a.Model}
}

// settingsFiles are the files a backend's CLI reads its settings from, in
// the user's home and the repository root (Spec.SettingsFiles): their
// stamps are part of the dry run's cache key.
func settingsFiles(backend, root string) []string {
	spec, _ := Lookup(backend)
	if spec.SettingsFiles == nil {
		return nil
	}
	home, _ := os.UserHomeDir()
	return spec.SettingsFiles(home, root)
}

// envOr is the environment variable v, else def.
func envOr(v, def string) string {
	if e := os.Getenv(v); e != "" {
		return e
	}
	return def
}

// settingsEnv are the prefixes of the environment variables the CLIs read
// their settings, endpoints and keys from.
var settingsEnv = []string{"HOME=", "XDG_CONFIG_HOME=", "CODEX_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "OPENCODE_", "GEMINI_", "GOOGLE_"}

// settingsKey names the cache entry of a passed dry run: bin's binary, the
// probe, the CLI's environment and its settings files.
func settingsKey(bin, backend, root string, probes [][]string) *passcache.Key {
	k := passcache.New("cli-settings").Binary(bin)
	for _, p := range probes {
		k.Text(p...)
	}
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		if slices.ContainsFunc(settingsEnv, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			k.Text(kv)
		}
	}
	for _, f := range settingsFiles(backend, root) {
		if f != "" {
			k.File(f)
		}
	}
	return k
}

// CheckSettings dry-runs the session settings of a (its CLI, model,
// extra_args, the CLI's own settings) in root where the CLI allows it,
// within timeout, and returns the CLI's refusal in one line, "" when it
// takes them or has no dry run. A passed dry run is cached (settingsKey).
func CheckSettings(ctx context.Context, a config.Agent, root string, timeout time.Duration) string {
	probes := settingsProbes(a)
	bin := Executable(a)
	if len(probes) == 0 || bin == "" {
		return ""
	}
	key := settingsKey(bin, a.Backend, root, probes)
	if _, passed := key.Get(); passed {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, p := range probes {
		cmd := exec.CommandContext(ctx, bin, p...)
		cmd.Dir = root
		cmd.Stdin = nil
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ctx.Err() != nil {
			return "" // a CLI too slow to answer is not judged here
		}
		if err != nil {
			return fmt.Sprintf("%s refuses its settings (dry run `%s %s`): %s: fix [agent] extra_args or model in .runner/state/config.toml, or the CLI's own settings",
				a.Backend, filepath.Base(bin), strings.Join(p, " "), oneLine(refusalWords(out.String()), 300))
		}
	}
	key.Put(nil)
	return ""
}
