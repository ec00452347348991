package testscripts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// requireEngines is set in CI (.ci/run): a container engine that is
// missing or does not answer fails the scripts that need it instead of
// skipping them.
const requireEngines = "TREELOOP_REQUIRE_DOCKER"

// engineProbe caches, per engine, why it cannot run containers here ("" when
// it can).
var engineProbe sync.Map

// engineCondition answers the condition [engine:NAME] (docker or podman):
// true when NAME answers. Where it does not, the script skips, unless
// $TREELOOP_REQUIRE_DOCKER=1, which makes it an error naming the cause.
func engineCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "engine:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	why, _ := engineProbe.LoadOrStore(name, sync.OnceValue(func() string { return probeEngine(name) }))
	if msg := why.(func() string)(); msg != "" {
		if os.Getenv(requireEngines) == "1" {
			return false, fmt.Errorf("%s=1 and %s", requireEngines, msg)
		}
		return false, nil
	}
	return true, nil
}

// probeEngine says why engine cannot run containers here, "" when it can:
// docker's daemon must answer; podman, a daemonless engine, be installed.
func probeEngine(engine string) string {
	if _, err := exec.LookPath(engine); err != nil {
		return engine + " is not installed"
	}
	if engine != "docker" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, engine, "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return fmt.Sprintf("docker's daemon does not answer: %s", strings.TrimSpace(string(out)))
	}
	return ""
}
