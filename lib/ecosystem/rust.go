package ecosystem

import (
	"regexp"
)

// rustProtected is cargo's test infrastructure: a .cargo/config's
// [target] runner runs the test binaries through any program (one that
// prints "test x ... ok" for every test), and a rust-toolchain file's
// path a toolchain of the agent's.
var rustProtected = []string{".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"}

// cargoWorkspace finds a [workspace] table.
var cargoWorkspace = regexp.MustCompile(`(?m)^\s*\[workspace\]`)

// rustProject detects a cargo project: cargo test reports every test by
// name on its output (libtest's lines), so the guard is plain cargo test.
func rustProject(e Env) *project {
	if !exists(e.Root, "Cargo.toml") {
		return nil
	}
	pr := &project{name: Rust, signal: "Cargo.toml"}
	pr.guard = []string{"cargo", "test", "--no-fail-fast"}
	pr.guardWhy = "Cargo.toml found; libtest's lines name every test, and --no-fail-fast runs every test binary even after one fails"
	if cargoWorkspace.Match(read(e.Root, "Cargo.toml")) {
		pr.guard = append(pr.guard, "--workspace")
		pr.guardWhy += "; --workspace for the [workspace]'s members"
	}
	pr.witWhy = "cargo cannot run one test file alone by its path, so the witness runs the whole suite, on the code before the node's work and after; a witness is a test of tests/*.rs (a unit test inside src/ cannot be laid over the code before the work)"
	pr.programs = []string{"cargo"}
	pr.protected = rustProtected
	pr.protWhy = "a runner in .cargo/config runs the test binaries through any program, and a rust-toolchain file can name a toolchain of the agent's"
	r := newResolver(e)
	if r.lookPath("cargo-nextest", "") != "" || exists(e.Root, ".config/nextest.toml") {
		pr.hints = append(pr.hints, "cargo-nextest is not used: its JUnit report goes under the target directory, not $RUNNER_TEST_RESULTS; cargo test names every test")
	}
	return pr
}
