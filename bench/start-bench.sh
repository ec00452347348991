#!/usr/bin/env bash
# The start cost of each command a step runs: its --version
# (start, parse, exit: what bench/step-bench.sh's composition floor sums)
# and a typical read-only invocation in a repository with a started run,
# side by side with a Go binary that does nothing (bench/gostart). With a
# git revision BASE, the same commands built from BASE alternate with the
# work tree's, so load hits both alike. Each row: median wall ms of RUNS
# spawns (posix_spawn, waited for), its ratio to gostart, and the median
# minor page faults.
# Then the composition floor (the step's 16 command starts, --version,
# summed from the medians) for each build.
# Usage: bench/start-bench.sh [RUNS] [BASE]   (default 200 runs, no base)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
base=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/new/" ./cmd/... ./bench/gostart ./bench/gentree
builds=(new)
if [ -n "$base" ]; then
  mkdir -p "$work/src"
  git archive "$base" | tar -x -C "$work/src"
  (cd "$work/src" && CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/base/" ./cmd/...)
  builds=(base new)
fi
export PATH="$work/new:$PATH"
# The repositories below choose no sandbox (runner-init would write bwrap
# where it works): this measures the runner itself.
export RUNNER_SANDBOX=none
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

# A repository of 100 files with a started run, a 100-node tree and one
# committed step, so the read-only invocations below do their real work.
repo=$work/repo
mkdir -p "$repo/src"
cd "$repo"
git init -q -b main
for i in $(seq 1 100); do printf 'package src\n\nconst F%d = %d\n' "$i" "$i" > "src/f$i.go"; done
printf 'ci:\n    @true\n' > justfile
git add -A && git -c gc.auto=0 commit -qm initial
runner-init --goal <(printf '# Bench\n\nBench.\n') >/dev/null
gentree -n 100 -passed 0 > .runner/state/tree.json
sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
runner-start --id run-bench >/dev/null 2>&1
cat > "$work/agent" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"status":"done","summary":"no-op","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/agent"
export RUNNER_AGENT_BIN=$work/agent
"$OLDPWD/tools/runner-step" >/dev/null
[ -z "$(git status --porcelain)" ] || { echo "start-bench: the step left changes" >&2; exit 6; }

python3 - "$work" "$runs" "${builds[@]}" <<'PY'
import os, statistics, sys, time
work, runs, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# The step's commands and how many times a step starts each.
step = {"runner-enter": 1, "step-begin": 1, "step-end": 1, "iter-log": 3, "runner-record": 1, "loop-commit": 2, "tree-validate": 1, "tree-select": 1,
        "runner-check": 1, "context-write": 1, "agent-exec": 1, "guard-run": 1, "tree-update": 1}
real = [["tree-validate"], ["tree-select"], ["loop-commit", "check"], ["iter-log", "recover"],
        ["iter-log", "list"], ["runner-check"]]
rows = [("gostart", [f"{work}/new/gostart"])]
for c in step:
    rows += [(f"{c} --version|{b}", [f"{work}/{b}/{c}", "--version"]) for b in builds]
for argv in real:
    rows += [(" ".join(argv) + f"|{b}", [f"{work}/{b}/{argv[0]}"] + argv[1:]) for b in builds]
devnull = os.open(os.devnull, os.O_WRONLY)
wall = {k: [] for k, _ in rows}
flt = {k: [] for k, _ in rows}
for i in range(runs + 3):
    for k, argv in rows:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status, ru = os.wait4(pid, 0)
        dt = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 2):
            sys.exit(f"start-bench: {' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
        if i >= 3:  # warm-up
            wall[k].append(dt * 1000)
            flt[k].append(ru.ru_minflt)
med = {k: statistics.median(v) for k, v in wall.items()}
g = med["gostart"]
print(f"\nstart cost, median of {runs} alternating runs (load {open('/proc/loadavg').read().split()[0]}); builds: {', '.join(builds)}")
print("| command | " + " | ".join(f"{b} ms (x gostart, faults)" for b in builds) + " |")
print("| --- |" + " --- |" * len(builds))
print(f"| gostart | {g:.2f} (1.00x, {statistics.median(flt['gostart']):.0f})" + " |" * len(builds))
for k, _ in rows[1::len(builds)]:
    name = k.split("|")[0]
    cells = [f"{med[name + '|' + b]:.2f} ({med[name + '|' + b] / g:.2f}x, {statistics.median(flt[name + '|' + b]):.0f})" for b in builds]
    print(f"| {name} | " + " | ".join(cells) + " |")
n = sum(step.values())
for b in builds:
    floor = sum(med[f"{c} --version|{b}"] * k for c, k in step.items())
    print(f"composition floor ({b}): {floor:.1f} ms for the step's {n} command starts; Go start floor {g * n:.1f} ms")
PY
