package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The environment variables ApplyEnv reads (DESIGN.md decision 13).
const (
	EnvAgent                = "RUNNER_AGENT"                  // agent.backend
	EnvAgentBin             = "RUNNER_AGENT_BIN"              // agent.bin
	EnvAgentModel           = "RUNNER_AGENT_MODEL"            // agent.model
	EnvAgentExtraArgs       = "RUNNER_AGENT_EXTRA_ARGS"       // agent.extra_args, split by SplitArgs
	EnvAgentCassette        = "RUNNER_AGENT_CASSETTE"         // agent.cassette
	EnvAgentPermissionMode  = "RUNNER_AGENT_PERMISSION_MODE"  // agent.permission_mode
	EnvMaxIterations        = "RUNNER_MAX_ITERATIONS"         // max_iterations
	EnvIterationTimeoutSecs = "RUNNER_ITERATION_TIMEOUT_SECS" // iteration_timeout_secs
)

// ApplyEnv returns c with the environment overrides read through lookupEnv
// (os.LookupEnv in production) applied. A variable that is set overrides its
// key; set to "", RUNNER_AGENT_BIN and RUNNER_AGENT_MODEL select the backend's
// defaults and RUNNER_AGENT_EXTRA_ARGS clears agent.extra_args, while an empty
// RUNNER_AGENT, RUNNER_AGENT_PERMISSION_MODE, RUNNER_MAX_ITERATIONS or
// RUNNER_ITERATION_TIMEOUT_SECS counts as unset. A bad value is an Errors whose messages name the variable; all
// variables are checked. c itself is not modified.
func (c Config) ApplyEnv(lookupEnv func(string) (string, bool)) (Config, error) {
	var es Errors
	bad := func(name, format string, args ...any) {
		es = append(es, &Error{Key: name, Msg: name + ": " + fmt.Sprintf(format, args...)})
	}
	// Fresh slices, so the caller's Config never shares them.
	c.ProtectedPaths = slices.Clone(c.ProtectedPaths)
	c.Guard.Command = slices.Clone(c.Guard.Command)
	c.Guard.Ratchet = slices.Clone(c.Guard.Ratchet)
	c.Guard.Witness = slices.Clone(c.Guard.Witness)
	c.Guard.TestFiles = slices.Clone(c.Guard.TestFiles)
	c.Guard.SuiteNodes = slices.Clone(c.Guard.SuiteNodes)
	c.Sandbox.Writable = slices.Clone(c.Sandbox.Writable)
	c.Setup.Commands = slices.Clone(c.Setup.Commands)
	c.Agent.Fallback = slices.Clone(c.Agent.Fallback)
	c.Sandbox.Readable = slices.Clone(c.Sandbox.Readable)
	c.Agent.ExtraArgs = slices.Clone(c.Agent.ExtraArgs)
	c.Agent.Prices = maps.Clone(c.Agent.Prices)

	if v, ok := lookupEnv(EnvAgent); ok && v != "" {
		if slices.Contains(Backends, v) {
			c.Agent.Backend = v
		} else {
			bad(EnvAgent, "must be one of %s, got %q", strings.Join(Backends, ", "), v)
		}
	}
	if v, ok := lookupEnv(EnvAgentBin); ok {
		c.Agent.Bin = v
	}
	if v, ok := lookupEnv(EnvAgentModel); ok {
		c.Agent.Model = v
	}
	if v, ok := lookupEnv(EnvAgentCassette); ok {
		c.Agent.Cassette = v
	}
	if v, ok := lookupEnv(EnvAgentPermissionMode); ok && v != "" {
		if slices.Contains(PermissionModes, v) {
			c.Agent.PermissionMode = v
		} else {
			bad(EnvAgentPermissionMode, "must be one of %s, got %q", strings.Join(PermissionModes, ", "), v)
		}
	}
	if v, ok := lookupEnv(EnvAgentExtraArgs); ok {
		args, err := SplitArgs(v)
		if err != nil {
			bad(EnvAgentExtraArgs, "%v", err)
		} else {
			c.Agent.ExtraArgs = args
		}
	}
	envInt := func(name string, dst *int, lo, hi int) {
		v, ok := lookupEnv(name)
		if !ok || v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			bad(name, "not an integer: %q", v)
		case n < lo:
			bad(name, "must be at least %d, got %d", lo, n)
		case n > hi:
			bad(name, "must be at most %d, got %d", hi, n)
		default:
			*dst = n
		}
	}
	envInt(EnvMaxIterations, &c.MaxIterations, 1, maxIterations)
	envInt(EnvIterationTimeoutSecs, &c.IterationTimeoutSecs, 1, maxSecs)
	if len(es) > 0 {
		return Config{}, es
	}
	return c, nil
}
