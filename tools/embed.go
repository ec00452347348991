// Package tools holds the porcelain's bash scripts, embedded so that the
// commands cmd/runner-step and cmd/runner-loop (lib/porcelain) carry them:
// `go install github.com/treeloop/treeloop/cmd/...@latest` then installs
// the porcelain with the plumbing it composes, no checkout needed. The
// scripts stay the source, read, linted and tested as files here; both
// source treeloop-sh-setup, their shared helpers, which ships with them.
package tools

import _ "embed"

// RunnerStep is tools/runner-step: one iteration.
//
//go:embed runner-step
var RunnerStep string

// RunnerLoop is tools/runner-loop: runner-step until a stop.
//
//go:embed runner-loop
var RunnerLoop string

// ShSetup is tools/treeloop-sh-setup: the helpers both scripts source.
//
//go:embed treeloop-sh-setup
var ShSetup string
