package git

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/trace"
)

// Hermetic git (DESIGN.md decisions 11 and 21): every git process of the
// runner reads the user's system and global config as it was when the step
// began, never as a session left it. runner-step (tools/runner-step) takes
// the snapshot before anything else and exports it; a command that starts
// a session alone (agent-exec, guard-run) takes it itself (Hermetic). The
// environment then holds:
//
//   - GIT_CONFIG_NOSYSTEM=1 and GIT_CONFIG_GLOBAL=/dev/null: git reads no
//     system or global file;
//   - GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>: the
//     snapshot, the system, global and command-line entries in git's
//     order, so they apply as before (identity, signing, hooksPath);
//   - GIT_NO_REPLACE_OBJECTS=1 (every git process of the runner has it
//     anyway: run), so a replace ref cannot swap an object the runner reads;
//   - TREELOOP_GIT_HERMETIC=1, and the user's own value of every variable
//     above kept as TREELOOP_USER_<name>, which Strip puts back for the
//     agent and the guard: a session sees the user's environment.
const (
	HermeticVar = "TREELOOP_GIT_HERMETIC"
	UserPrefix  = "TREELOOP_USER_"
)

// hermeticName reports whether the hermetic environment sets or clears
// the variable name.
func hermeticName(name string) bool {
	return name == "GIT_CONFIG" || name == "GIT_NO_REPLACE_OBJECTS" || strings.HasPrefix(name, "GIT_CONFIG_")
}

// Entry is one configuration entry of a snapshot.
type Entry struct{ Key, Value string }

// ParseSnapshot reads `git config --list -z --show-scope --includes`:
// "<scope>" NUL "<key>\n<value>" NUL (no "\n<value>" for a key without a
// value, which git reads as true), keeping the system, global and
// command-line entries in order.
func ParseSnapshot(out []byte) []Entry {
	var entries []Entry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		switch string(fields[i]) {
		case "system", "global", "command":
		default:
			continue
		}
		key, value, found := bytes.Cut(fields[i+1], []byte{'\n'})
		v := string(value)
		if !found {
			v = "true"
		}
		entries = append(entries, Entry{string(key), v})
	}
	return entries
}

// HermeticEnv is environ made hermetic with the snapshot (see the
// package's Hermetic git): the user's values of the variables it sets are
// kept under UserPrefix. An environ already hermetic is returned as it is.
func HermeticEnv(environ []string, snapshot []Entry) []string {
	if slices.Contains(environ, HermeticVar+"=1") {
		return environ
	}
	out := make([]string, 0, len(environ)+2*len(snapshot)+5)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, UserPrefix):
			// a stale copy: dropped
		case hermeticName(name):
			out = append(out, UserPrefix+name+"="+value)
		default:
			out = append(out, kv)
		}
	}
	out = append(out, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_NO_REPLACE_OBJECTS=1",
		"GIT_CONFIG_COUNT="+strconv.Itoa(len(snapshot)))
	for i, e := range snapshot {
		n := strconv.Itoa(i)
		out = append(out, "GIT_CONFIG_KEY_"+n+"="+e.Key, "GIT_CONFIG_VALUE_"+n+"="+e.Value)
	}
	return append(out, HermeticVar+"=1")
}

// Hermetic makes this process's environment hermetic (HermeticEnv) with a
// snapshot of the user's git config read now in dir, unless it already is
// (runner-step's). The commands that start a session call it first, before
// the session can change the user's config.
func Hermetic(dir string) error {
	if os.Getenv(HermeticVar) == "1" {
		return nil
	}
	want, err := HermeticEnviron(dir)
	if err != nil {
		return err
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if hermeticName(name) || strings.HasPrefix(name, UserPrefix) {
			os.Unsetenv(name)
		}
	}
	for _, kv := range want {
		name, value, _ := strings.Cut(kv, "=")
		os.Setenv(name, value)
	}
	return nil
}

// HermeticEnviron is this process's environment made hermetic with a
// snapshot of the user's git config read now in dir (as it is, when it
// already is hermetic).
func HermeticEnviron(dir string) ([]string, error) {
	if os.Getenv(HermeticVar) == "1" {
		return os.Environ(), nil
	}
	var out []byte
	var err error
	// Sheltered from a signal to the caller's group, and run again should
	// one reach it before it had a group of its own (runEnv).
	for try := 0; ; try++ {
		cmd := exec.Command("git", "-C", dir, "config", "--list", "-z", "--show-scope", "--includes")
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		proc.ShelterChild(cmd)
		t0 := time.Now()
		out, err = cmd.Output()
		trace.Git("config", time.Since(t0))
		if try == 2 || !proc.Sheltered() || !killedAtStart(err) {
			break
		}
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && len(out) == 0 {
		err = nil // no config at all
	}
	if err != nil {
		return nil, fmt.Errorf("git config --list: snapshot the user's git config: %v", err)
	}
	return HermeticEnv(os.Environ(), ParseSnapshot(out)), nil
}

// userEnv undoes HermeticEnv in env: the variables it set are dropped and
// the user's own values put back.
func userEnv(env []string) []string {
	if !slices.Contains(env, HermeticVar+"=1") {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == HermeticVar || hermeticName(name):
		case strings.HasPrefix(name, UserPrefix):
			out = append(out, strings.TrimPrefix(name, UserPrefix)+"="+value)
		default:
			out = append(out, kv)
		}
	}
	return out
}
