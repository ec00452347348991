# treeloop's own recipes. `just ci` is the guard this repository runs on itself.
set shell := ["bash", "-euo", "pipefail", "-c"]

bin := justfile_directory() / "bin"

# Static binaries: no dynamic loader at every start (the step runs a dozen
# short-lived commands).
export CGO_ENABLED := "0"

# Format check, vet, shellcheck, tests (the project's guard).
ci: fmt-check vet lint-shell test

# Fail when gofmt would change a file.
fmt-check:
    @out="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; if [ -n "$out" ]; then echo "gofmt would change:"; echo "$out"; exit 1; fi

vet:
    go vet ./...

# shellcheck the porcelain scripts and hooks (skipped with a note when shellcheck is absent).
lint-shell:
    @if command -v shellcheck >/dev/null; then shellcheck tools/runner-step tools/runner-loop tools/bootstrap hooks/pre-commit; else echo "lint-shell: shellcheck not installed, skipped"; fi

# All tests, fuzz corpora included (replayed as regression tests).
test:
    go test -count=1 ./...

# Build every command into ./bin.
build:
    mkdir -p {{bin}}
    go build -o {{bin}} ./cmd/...

# Install the commands and porcelain scripts into GOBIN (or ~/go/bin).
install:
    go install ./cmd/...
    install -m 0755 tools/runner-step tools/runner-loop "$(go env GOBIN | grep . || echo "$(go env GOPATH)/bin")"

# Run every fuzz target for SECONDS each.
fuzz seconds="30":
    go test -run='^$' -fuzz='^FuzzLoad$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzFastParse$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzTransition$' -fuzztime={{seconds}}s ./lib/tree/
    go test -run='^$' -fuzz='^FuzzParse$' -fuzztime={{seconds}}s ./lib/agentout/
    go test -run='^$' -fuzz='^FuzzParse$' -fuzztime={{seconds}}s ./lib/config/

# Benchmarks: Go micro-benchmarks and the whole-process scripts under bench/.
bench:
    go test -run='^$' -bench=. -benchmem ./lib/...
    bash bench/tree-bench.sh
    bash bench/ui-bench.sh

# Run the demo: the textkit example, the scripted stand-in agent, the real `just ci` guard.
demo: build
    PATH="{{bin}}:{{justfile_directory()}}/tools:$PATH" examples/run-demo.sh

# The web UI of the run in the repository DIR: prints its URL, serves until Ctrl-C.
ui dir=".": build
    {{bin}}/runner-ui -C {{dir}}

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

# One iteration on the repository DIR (commands from `just install` on PATH).
step dir=".":
    runner-step -C {{dir}}

# Loop on the repository DIR until complete, stuck, a limit, a timeout or an interrupt.
loop dir=".":
    runner-loop -C {{dir}}
