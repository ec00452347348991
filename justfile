# treeloop's own recipes. `just ci` is the guard this repository runs on itself.
set shell := ["bash", "-euo", "pipefail", "-c"]

bin := justfile_directory() / "bin"

# The commit the commands are built from, stamped at link time: --version
# says it even where go build records no VCS information (-buildvcs=false,
# a GOFLAGS default on some machines).
commit := `git rev-parse HEAD 2>/dev/null || true` + `test -z "$(git status --porcelain 2>/dev/null)" || echo -dirty`
# -s -w: no symbol table and no DWARF (panics and go version -m still name
# functions, lines and modules); linking the 26 commands takes less than
# half the CPU time, and the binaries are smaller.
ldflags := "-s -w -X github.com/treeloop/treeloop/lib/cli.commit=" + commit
# -trimpath: the binaries name no directory of the machine that built them
# (a panic names github.com/treeloop/treeloop/lib/…), and a build in another
# copy of the checkout reuses what the build cache holds for this one.
# CGO_ENABLED=0 (on build and install only): static binaries, no dynamic
# loader at every start (the step runs a dozen short-lived commands). It is
# not exported: the demo's loop and its guard get the environment you gave
# just, as the loop on your own project does.

# The project's guard and README's test command (through tools/bootstrap).
# Format check, vet, shellcheck and every test (the ci tier).
ci: fmt-check vet lint-shell test-all

# Fail when gofmt would change a file.
fmt-check:
    @out="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; if [ -n "$out" ]; then echo "gofmt would change:"; echo "$out"; exit 1; fi

vet:
    go vet ./...

# shellcheck the porcelain scripts, hooks and CI scripts; a missing shellcheck fails (CI must not skip it).
lint-shell:
    @command -v shellcheck >/dev/null || { echo "lint-shell: shellcheck is not installed (apt-get install shellcheck)" >&2; exit 1; }
    shellcheck -x tools/runner-step tools/runner-loop tools/treeloop-sh-setup tools/bootstrap tools/install-completions tools/docker-loop tools/test-scratch hooks/pre-commit .ci/run bench/crash-harness.sh bench/soak.sh bench/mutate.sh bench/signal-harness.sh bench/step-growth.sh bench/runner-growth.sh bench/step-compare.sh bench/evidence-bench.sh bench/script-cpu.sh bench/suite-cpu.sh

# go test -short (four packages at once: their tests wait on processes as
# much as they compute): testscripts/tier_test.go names the core scripts, the random
# differential tests run fewer rounds; `just ci` runs everything.
# The inner loop (the short tier): the unit tests and the core scripts.
test:
    tools/test-scratch go test -short -p 4 ./...

# Fuzz corpora are replayed as regression tests. On a busy 2-core machine the
# testscripts package alone takes longer than go test's default 10 minutes,
# so the package timeout is raised; every wait inside a test is for an event.
# Three tests at a time in a package, not one per core: a script waits on
# its processes (fsync, a CLI's start, a server) often enough that a third
# fills the gaps (testscripts alone, two runs each: 437 and 427 s with
# two at a time, 410 and 403 with three, 426 with four).
# go vet runs first, whole; go test's own vet (a few of its checks, again on
# every package) is off: on cold caches 7 s of wall time, 14 of CPU.
# ./testscripts is named first: go test starts the packages' runs in the
# order they are named, and the scripts, most of the suite's time, would
# otherwise wait for every other package's tests to be built and started.
# Every test (the ci tier): every script, the browser tests, the real agent CLIs, the recipes.
test-all: vet
    tools/test-scratch go test -count=1 -timeout 60m -parallel 3 -vet=off ./testscripts ./...

# Where the suite's time goes: runs every test as test-all does, with go test -json, then
# prints the slowest packages and the slowest tests and scripts with their
# share of the time (bench/testprofile); exits as the tests did.
test-profile: vet
    #!/usr/bin/env bash
    set -uo pipefail
    out="${TMPDIR:-/tmp}/treeloop-test-profile.json"
    tools/test-scratch go test -count=1 -timeout 60m -parallel 3 -vet=off -json ./testscripts ./... > "$out"
    rc=$?
    go run ./bench/testprofile "$out"
    exit $rc

# The scripts run one at a time (bench/script-cpu.sh); PATTERN is a
# -test.run pattern under TestScripts/. The suite is CPU-bound on 2 cores,
# so CPU time, not wall time, says where it goes.
# What each testscript costs in CPU seconds, the most first.
script-cpu pattern=".":
    bash bench/script-cpu.sh {{pattern}}

# Needs root and Debian's acct: the real tools the tests drive (Go's toolchain, the agent
# CLIs, chromium, python, cargo) beside treeloop's own commands, git and the shell.
# Where the whole suite's CPU goes, by program.
suite-cpu:
    bash bench/suite-cpu.sh

# A long run: STEPS no-op steps on a 1,000-file repository with a 6,000-node tree
# and git's default settings; prints step failures, false guard failures, the
# growth of the step's overhead, RSS and .runner/ size per step (bench/soak.sh).
soak steps="2000":
    bash bench/soak.sh {{steps}}

# Build every command into ./bin.
build:
    mkdir -p {{bin}}
    CGO_ENABLED=0 go build -trimpath -ldflags '{{ldflags}}' -o {{bin}} ./cmd/...

# Install the commands (runner-step and runner-loop among them: they run
# the scripts of tools/, embedded) into GOBIN (or ~/go/bin), and bash
# completion for each (tools/install-completions).
install:
    CGO_ENABLED=0 go install -trimpath -ldflags '{{ldflags}}' ./cmd/...
    tools/install-completions "$(go env GOBIN | grep . || echo "$(go env GOPATH)/bin")"

# Run every fuzz target for SECONDS each.
fuzz seconds="30":
    go test -run='^$' -fuzz='^FuzzLoad$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzFastParse$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzTransition$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzEncodeMatchesEncodingJSON$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzParse$' -fuzztime={{seconds}}s ./lib/agentout/
    go test -run='^$' -fuzz='^FuzzPlainlyValid$' -fuzztime={{seconds}}s ./lib/agentout/
    go test -run='^$' -fuzz='^FuzzParse$' -fuzztime={{seconds}}s ./lib/config/
    go test -run='^$' -fuzz='^FuzzStripANSI$' -fuzztime={{seconds}}s ./lib/textclean/
    go test -run='^$' -fuzz='^FuzzMatch$' -fuzztime={{seconds}}s ./lib/pathglob/

# Benchmarks: Go micro-benchmarks and the whole-process scripts under bench/.
bench:
    go test -run='^$' -bench=. -benchmem ./lib/...
    bash bench/tree-bench.sh
    bash bench/ui-bench.sh

# gremlins (bench/mutate/go.mod) prints each package's row of bench/mutation.md's
# table and the mutants that lived; exit 1 below 85% efficacy or 70% coverage.
# Slow (a `go test` per mutant), so not part of `ci`.
# Mutation testing of PKG… (default: the packages bench/mutation.md tracks).
[positional-arguments]
mutate *pkgs:
    bash bench/mutate.sh "$@"

# Whether a step's cost grows with the run: STEPS no-op steps on a 1,000-file repository with a
# 6,000-node tree; the overhead of the first 20 against the last 20, processes per step, the git
# floor, runner-status and iter-log list at iteration 50 and 5,000 (bench/step-growth.sh).
step-growth steps="1000":
    bash bench/step-growth.sh {{steps}}

# .runner/'s growth per step on a 6,000-node tree, built from each REV, "." the checkout (bench/runner-growth.sh).
runner-growth steps="5" +revs=".":
    bash bench/runner-growth.sh {{steps}} 6000 {{revs}}

# Builds side by side in one run: each REV's runner-step overhead (1,000 files, 1,000-node
# tree) and tree-validate at 100, 1,000 and 10,000 nodes, alternating (bench/step-compare.sh).
[positional-arguments]
step-compare +revs:
    bash bench/step-compare.sh "$@"

# The textkit example, the scripted stand-in agent, the real `just ci` guard;
# its scratch directories are removed when it ends unless --keep DIR is given.
# Run the demo (`just demo --keep DIR` keeps its scratch directories in DIR).
[positional-arguments]
demo *args: build
    PATH="{{bin}}:{{justfile_directory()}}/tools:$PATH" examples/run-demo.sh "$@"

# The web UI of the run in the repository DIR: prints its URL, serves until Ctrl-C.
ui dir=".": build
    {{bin}}/runner-ui -C {{dir}}

# The UI's server on the run in DIR (seed 000 §15.3's name): the same as `just ui`.
ui-server dir=".": build
    {{bin}}/runner-ui -C {{dir}}

# The page has no build step, so its dev server is the UI's server (seed 000 §15.3).
alias ui-dev := ui-server

# The demo watched in the web UI: prints the URL, runs the demo, serves on until Ctrl-C.
demo-ui: build
    #!/usr/bin/env bash
    set -euo pipefail
    work=$(mktemp -d "${TMPDIR:-/tmp}/treeloop-demo.XXXXXX")
    "{{bin}}/runner-ui" -C "$work" > "$work.url" &
    ui=$!
    trap 'kill "$ui" 2>/dev/null || true; rm -f "$work.url"' EXIT
    until [ -s "$work.url" ]; do kill -0 "$ui" || exit 1; sleep 0.1; done
    url=$(cat "$work.url")
    echo "demo-ui: open $url"
    PATH="{{bin}}:{{justfile_directory()}}/tools:$PATH" examples/run-demo.sh "$work" || echo "demo-ui: the demo failed (exit $?)"
    echo "demo-ui: the loop has ended; $url still shows $work until Ctrl-C"
    wait "$ui"

# tools/docker-loop: the image built from bin/ and debian:trixie, the repository mounted at
# /workspace, your uid:gid, keys, logins and git identity passed on.
# The loop in a container (compose.yaml): runner-loop, or COMMAND, on the repository DIR.
[positional-arguments]
docker-loop dir="." *command: build
    tools/docker-loop "$@"

# The demo inside the compose container (the image built first).
docker-demo: build
    tools/docker-loop --demo

# Where no registry is reachable: debootstrap (as root) into a scratch directory, then import.
# Debian 13 made locally as debian:trixie in ENGINE, the compose image's base.
docker-base engine="docker":
    #!/usr/bin/env bash
    set -euo pipefail
    command -v debootstrap >/dev/null || { echo "docker-base: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
    root=$(mktemp -d "${TMPDIR:-/tmp}/treeloop-base.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >/dev/null
    tar -C "$root" -c . | {{engine}} import - debian:trixie

# One iteration on the repository DIR (commands from `just install` on PATH).
step dir=".":
    runner-step -C {{dir}}

# Loop on the repository DIR until complete, stuck, a limit, a timeout or an interrupt.
loop dir=".":
    runner-loop -C {{dir}}

# Seed 000 §13: every case in eval/cases, or the ones named, offline with their scripted
# stand-in agents; eval-run flags pass through (`just eval go-stack --backend claude --runs 5`).
# Run the eval cases [CASE…] (results in eval/results/).
[positional-arguments]
eval *args: build
    PATH="{{bin}}:{{justfile_directory()}}/tools:$PATH" eval-run "$@"

# Seed 000 §15: runner-ui on eval/workspaces/CASE_latest prints its URL; the eval's output goes
# to eval/results/CASE.eval-with-ui.log; Ctrl-C stops the UI and the eval (--resume ID continues).
# Eval CASE in the background and watch it in runner-ui.
[positional-arguments]
eval-with-ui case *args: build
    #!/usr/bin/env bash
    set -euo pipefail
    export PATH="{{bin}}:{{justfile_directory()}}/tools:$PATH"
    cd "{{justfile_directory()}}"
    mkdir -p eval/results eval/workspaces
    link="eval/workspaces/$1_latest" log="eval/results/$1.eval-with-ui.log"
    rm -f "$link"
    eval-run "$@" > "$log" 2>&1 &
    eval_pid=$!
    trap 'kill -INT "$eval_pid" 2>/dev/null || true; wait "$eval_pid" || true' EXIT
    echo "eval-with-ui: eval of $1 running (pid $eval_pid), output in $log"
    until [ -e "$link/.runner/state/tree.json" ]; do
        if ! kill -0 "$eval_pid" 2>/dev/null; then cat "$log" >&2; exit 1; fi
        sleep 0.2
    done
    runner-ui -C "$link"

# Compare two eval summaries A (before) and B (after): eval run ids or summary files.
[positional-arguments]
eval-report a b *args: build
    PATH="{{bin}}:$PATH" eval-report "$@"
