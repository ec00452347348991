package agent

import (
	"os"
	"slices"

	"github.com/treeloop/treeloop/lib/config"
)

// Endpoint is where an agent CLI sends its requests and what it
// authenticates with, as far as the runner can tell from [agent], the
// environment and the CLI's own settings files (runner-check).
type Endpoint struct {
	URL     string   // the API's base URL
	URLFrom string   // what set it: a variable, "[agent] extra_args", a settings file, "the default"
	Keys    []string // the variables any one of which carries the key; none when no key is needed
	KeySet  bool     // one of Keys is set, or a login or a settings file gives a key
	Login   string   // how to log in instead of setting a key ("codex login"); "" when the CLI has no login
}

// EndpointEnv is how an endpoint is looked up: the environment's variables and
// the home directory.
type EndpointEnv struct {
	Getenv func(string) string
	Home   string
}

func (e EndpointEnv) set(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return e.Getenv(n) != "" })
}

func (e EndpointEnv) or(name, def string) (value, from string) {
	if v := e.Getenv(name); v != "" {
		return v, name
	}
	return def, "the default"
}

// EndpointOf is the endpoint of backend a in root; ok is false when the
// backend runs no provider's CLI (command, replay) or the CLI is set up
// in a way the runner does not read (a cloud platform's own credentials,
// a provider it does not know).
func EndpointOf(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	spec, _ := Lookup(a.Backend)
	if spec.Endpoint == nil {
		return Endpoint{}, false
	}
	return spec.Endpoint(a, root, env)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
