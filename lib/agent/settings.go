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

func codexProbes(a config.Agent) [][]string {
	options := append(append(append([]string{"exec"}, modelArgs(a, "-m")...), a.ExtraArgs...), "--help")
	return [][]string{options, append(codexGlobalArgs(a.ExtraArgs), "mcp", "list")}
}

func claudeProbes(a config.Agent) [][]string {
	return [][]string{append(append(append([]string{"-p"}, modelArgs(a, "--model")...), a.ExtraArgs...), "--help")}
}

func opencodeProbes(config.Agent) [][]string { return [][]string{{"debug", "config"}} }

func geminiProbes(a config.Agent) [][]string {
	return [][]string{append(append(modelArgs(a, "-m"), a.ExtraArgs...), "--help")}
}

// codexGlobalArgs are the options of extra that Codex takes before any
// subcommand: its config overrides and profile.
func codexGlobalArgs(extra []string) []string {
	var out []string
	for i := 0; i < len(extra); i++ {
		a := extra[i]
		switch {
		case (a == "-c" || a == "--config" || a == "-p" || a == "--profile") && i+1 < len(extra):
			out = append(out, a, extra[i+1])
			i++
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "--profile="):
			out = append(out, a)
		}
	}
	return out
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

func codexSettingsFiles(home, root string) []string {
	return []string{filepath.Join(envOr("CODEX_HOME", filepath.Join(home, ".codex")), "config.toml"), filepath.Join(root, ".codex", "config.toml")}
}

func claudeSettingsFiles(home, root string) []string {
	dir := envOr("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	return []string{filepath.Join(dir, "settings.json"), filepath.Join(home, ".claude.json"), filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".claude", "settings.local.json")}
}

func opencodeSettingsFiles(home, root string) []string {
	xdg := envOr("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return []string{filepath.Join(xdg, "opencode", "opencode.json"), filepath.Join(xdg, "opencode", "opencode.jsonc"), os.Getenv("OPENCODE_CONFIG"),
		filepath.Join(root, "opencode.json"), filepath.Join(root, "opencode.jsonc"), filepath.Join(root, ".opencode", "opencode.json"), filepath.Join(root, ".opencode", "opencode.jsonc")}
}

func geminiSettingsFiles(home, root string) []string {
	return []string{filepath.Join(home, ".gemini", "settings.json"), filepath.Join(root, ".gemini", "settings.json"), "/etc/gemini-cli/settings.json"}
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
