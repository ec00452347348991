package runcheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/passcache"
)

// justValueFlags are just's options that take a value: a guard's argv may
// carry them before the recipe, and the probe passes them on.
var justValueFlags = map[string]bool{
	"-f": true, "--justfile": true, "-d": true, "--working-directory": true,
	"--dotenv-filename": true, "--dotenv-path": true, "-E": true,
	"--shell": true, "--shell-arg": true, "--color": true,
}

// justKey names the cache entry of a guard just accepted: just's binary,
// the guard's argv and the stamps of the justfiles just may read (named
// justfile in any case, or .justfile, in root and its parents, and any
// file the argv names). just from npm is a node wrapper that takes about
// a second to start, and runner-check runs before every step: a passed
// probe is asked again only when one of these changes.
func justKey(root string, argv []string) *passcache.Key {
	k := passcache.New("just-guard").Binary(argv[0]).Text(root).Text(argv...)
	for _, a := range argv[1:] {
		if a = strings.TrimPrefix(a, "--justfile="); !filepath.IsAbs(a) {
			a = filepath.Join(root, a)
		}
		k.File(a)
	}
	for d := root; ; d = filepath.Dir(d) {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if n := strings.ToLower(e.Name()); n == "justfile" || n == ".justfile" {
				k.File(filepath.Join(d, e.Name()))
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return k
}

// justProbeTimeout bounds the probe of a just guard (it only parses).
const justProbeTimeout = 30 * time.Second

// checkJust: a guard that runs just needs a justfile just can read with
// the recipe the guard names, else the first iteration's guard fails for
// the runner's setup, not the agent's work. It asks just itself
// (`just --show RECIPE`, which parses and runs nothing), in root, with the
// guard's own options. A guard whose options it does not know, or that
// names a recipe with arguments or a module path, has only its justfile
// checked.
func checkJust(root string, argv []string) []string {
	if len(argv) == 0 || filepath.Base(argv[0]) != "just" {
		return nil
	}
	opts, pos, ok := justArgs(argv[1:])
	if !ok {
		return nil
	}
	key := justKey(root, argv)
	if _, passed := key.Get(); passed {
		return nil
	}
	probe, recipe := append(append([]string{}, opts...), "--summary"), ""
	if len(pos) == 1 && !strings.Contains(pos[0], "::") {
		probe, recipe = append(append([]string{}, opts...), "--show", pos[0]), pos[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), justProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], probe...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || ctx.Err() != nil {
		if err == nil {
			key.Put(nil)
		}
		return nil
	}
	guard := strings.Join(argv, " ")
	why := strings.TrimSpace(strings.SplitN(stderr.String(), "\n", 2)[0])
	why = strings.TrimPrefix(why, "error: ")
	fix := fmt.Sprintf("or set [guard] command in %s", layout.Config)
	switch {
	case strings.Contains(why, "no justfile found"):
		return []string{fmt.Sprintf("the guard runs `%s`, but just finds no justfile in %s: add a justfile whose recipe runs your checks, %s", guard, root, fix)}
	case recipe != "" && strings.Contains(why, "does not contain recipe"):
		return []string{fmt.Sprintf("the guard runs `%s`, but the justfile has no recipe %s: add it (the checks a node must pass), %s", guard, recipe, fix)}
	case why == "":
		why = "it exits non-zero"
	}
	return []string{fmt.Sprintf("the guard runs `%s`, but just cannot read the justfile: %s: fix the justfile, %s", guard, why, fix)}
}

// justArgs splits a just guard's arguments into the options the probe
// passes on and the positional ones (the recipe and its arguments); ok is
// false for an option it does not know.
func justArgs(args []string) (opts, pos []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case len(pos) > 0:
			pos = append(pos, a)
		case justValueFlags[a] && i+1 < len(args):
			opts = append(opts, a, args[i+1])
			i++
		case a == "--set" && i+2 < len(args):
			opts = append(opts, args[i:i+3]...)
			i += 2
		case strings.HasPrefix(a, "-") && hasValue && justValueFlags[name]:
			opts = append(opts, a)
		case strings.HasPrefix(a, "-"):
			return nil, nil, false
		default:
			pos = append(pos, a)
		}
	}
	return opts, pos, true
}
