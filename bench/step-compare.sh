#!/usr/bin/env bash
# shellcheck disable=SC2030,SC2031  # each revision's PATH is set in its own subshell
# Two or more builds of treeloop side by side in one run, so that the
# machine's load falls on them alike: for each revision, its own binaries
# and porcelain and its own repository (FILES files in directories of 50,
# packed; a tree of NODES nodes, 1,000 by default; a no-op agent; the guard `true`, as
# bench/step-bench.sh sets them up), then ROUNDS rounds in which every
# revision runs one runner-step in turn; the step's overhead is its wall
# time less its agent's and guard's (meta.json). Then one more step of
# each under strace (when installed), counting the processes it started
# (the revision's commands, git, the rest); then ROUNDS rounds of the git
# floor of each repository (git status --porcelain, git add -A, git commit
# of one changed file), beside which the overhead is given. Then tree-validate of
# each revision on generated trees of 100, 1,000 and 10,000 nodes, the
# revisions alternating in every round (and ajv-cli on the same schema
# when it is on PATH). Prints one markdown table of medians (ms).
# Usage: bench/step-compare.sh [-n ROUNDS] [-f FILES] [-t NODES] REV [REV...]
#        (defaults: 21 rounds, 1,000 files, 1,000 nodes; REV as git rev-parse takes it)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
rounds=21 files=1000 nodes=1000
while getopts n:f:t: opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    f) files=$OPTARG ;;
    t) nodes=$OPTARG ;;
    *) echo "usage: bench/step-compare.sh [-n ROUNDS] [-f FILES] [-t NODES] REV [REV...]" >&2; exit 80 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: bench/step-compare.sh [-n ROUNDS] [-f FILES] [-t NODES] REV [REV...]" >&2; exit 80; }
src=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/step-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
export RUNNER_SANDBOX=none RUNNER_MAX_ITERATIONS=100000
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/tools/" ./bench/gentree
bench_agent "$work/agent"
export RUNNER_AGENT_BIN=$work/agent
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# build N REV: revision REV's binaries and porcelain into $work/bin-N.
names=()
n=0
for rev in "$@"; do
  n=$((n + 1))
  id=$(git rev-parse --short "$rev^{commit}")
  names+=("$rev ($id)")
  mkdir -p "$work/src-$n"
  git archive "$id" | tar -x -C "$work/src-$n"
  (cd "$work/src-$n" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -ldflags="-s -w" -o "$work/bin-$n/" ./cmd/...)
  install -m 0755 "$work/src-$n/tools/runner-step" "$work/src-$n/tools/runner-loop" "$work/bin-$n/"
  # The helpers both scripts source, in the revisions that have them.
  if [ -e "$work/src-$n/tools/treeloop-sh-setup" ]; then
    install -m 0644 "$work/src-$n/tools/treeloop-sh-setup" "$work/bin-$n/"
  fi
done

# setup N: revision N's repository, initialised by its own binaries.
setup() {
  local repo=$work/repo-$1
  mkdir -p "$repo"
  (
    cd "$repo"
    PATH="$work/bin-$1:$PATH"; export PATH  # this subshell only
    git init -q -b main
    bench_files "$files"
    git add -A && git -c gc.auto=0 commit -qm initial && git gc -q
    runner-init --goal <(printf '# Bench\n\nBench.\n') >/dev/null
    "$work/tools/gentree" -n "$nodes" -passed 0 > .runner/state/tree.json
    sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
    grep -q '^command = \["true"\]$' .runner/state/config.toml || { echo "step-compare: cannot set the guard of revision $1" >&2; exit 6; }
    runner-start --id run-bench >/dev/null
  )
}
for i in $(seq 1 "$n"); do setup "$i"; done

# step N ROUND: one step of revision N; appends its overhead to over-N.
step() {
  local t0 t1 meta inner
  t0=$EPOCHREALTIME
  (cd "$work/repo-$1" && PATH="$work/bin-$1:$PATH" runner-step >/dev/null)
  t1=$EPOCHREALTIME
  meta=$work/repo-$1/.runner/iterations/run-bench/$(printf %04d "$2")/meta.json
  inner=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["agent"]["duration_ms"] + (m.get("guard_run") or {"duration_ms":0})["duration_ms"])' "$meta")
  python3 -c "print(round(($t1 - $t0) * 1000 - $inner, 1))" >> "$work/over-$1"
}
for r in $(seq 1 "$rounds"); do
  for i in $(seq 1 "$n"); do step "$i" "$r"; done
done

# Processes per step: one more step of each revision under strace, every
# program it started (execve that succeeded) counted: the revision's own
# commands (its bin directory), git, and the rest (bash, the agent).
if command -v strace >/dev/null; then
  for i in $(seq 1 "$n"); do
    (cd "$work/repo-$i" && PATH="$work/bin-$i:$PATH" strace -f -qq -e trace=execve -e signal=none -o "$work/exec-$i" runner-step >/dev/null)
    # An execve that overlapped another process's call is split in two
    # lines: "PID execve(PATH, … <unfinished ...>", then "PID <... execve
    # resumed>…) = 0".
    awk '
      /^[0-9]+ +execve\(/ {
        match($0, /execve\("[^"]*"/); path = substr($0, RSTART + 8, RLENGTH - 9)
        if ($0 ~ /<unfinished \.\.\.>$/) pend[$1] = path
        else if ($0 ~ /= 0$/) print path
        next
      }
      /^[0-9]+ +<\.\.\. execve resumed>/ { if ($0 ~ /= 0$/ && ($1 in pend)) print pend[$1]; delete pend[$1] }
    ' "$work/exec-$i" > "$work/progs-$i"
    {
      grep -c "^$work/bin-$i/" "$work/progs-$i" || true
      grep -c '/git$' "$work/progs-$i" || true
      grep -vc -e "^$work/bin-$i/" -e '/git$' "$work/progs-$i" || true
      grep "^$work/bin-$i/" "$work/progs-$i" | sed 's#.*/##' | sort | uniq -c | awk '{printf "%s%s×%s", (NR > 1 ? ", " : ""), $2, $1}'
      echo
    } > "$work/procs-$i"
  done
fi

# The git floor of each revision's repository, the rounds alternating: git
# status --porcelain, git add -A and git commit of one changed file (what
# any step that commits its iteration pays to git).
for r in $(seq 1 "$rounds"); do
  for i in $(seq 1 "$n"); do
    (
      cd "$work/repo-$i"
      echo "$r" > src/d1/touched.txt
      t0=$EPOCHREALTIME
      git status --porcelain >/dev/null; git add -A; git -c gc.auto=0 commit -qm "floor $r"
      t1=$EPOCHREALTIME
      python3 -c "print(round(($t1 - $t0) * 1000, 1))" >> "$work/floor-$i"
    )
  done
done

# tree-validate, the revisions alternating.
for size in 100 1000 10000; do "$work/tools/gentree" -n "$size" > "$work/t$size.json"; done
python3 - "$work" "$n" "$rounds" "$nodes" "$src/schemas/task_tree.v1.schema.json" "${names[@]}" <<'PY'
import os, shutil, statistics, subprocess, sys, time
work, n, rounds, nodes, schema, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:]
def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t) * 1000
sizes = [100, 1000, 10000]
tv = {(i, s): [] for i in range(1, n + 1) for s in sizes}
ajv = shutil.which("ajv")
av = {s: [] for s in sizes}
for _ in range(rounds):
    for s in sizes:
        for i in range(1, n + 1):
            tv[(i, s)].append(timed([f"{work}/bin-{i}/tree-validate", f"{work}/t{s}.json"]))
        if ajv and _ < 3:
            av[s].append(timed([ajv, "validate", "-s", schema, "-d", f"{work}/t{s}.json", "--spec=draft2020", "--strict=false", "-c", "ajv-formats"]))
over = {i: [float(x) for x in open(f"{work}/over-{i}").read().split()] for i in range(1, n + 1)}
floor = {i: [float(x) for x in open(f"{work}/floor-{i}").read().split()] for i in range(1, n + 1)}
print(f"\nmedians of {rounds} rounds, ms, a tree of {nodes:,} nodes; load average now: {open('/proc/loadavg').read().split()[:3]}")
print("| revision | step overhead | git floor | overhead/floor | tree-validate 100 | tree-validate 1,000 | tree-validate 10,000 |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for i in range(1, n + 1):
    o, f = statistics.median(over[i]), statistics.median(floor[i])
    cells = [f"{o:.1f}", f"{f:.1f}", f"{o / f:.2f}x"] + [f"{statistics.median(tv[(i, s)]):.1f}" for s in sizes]
    print(f"| {names[i - 1]} | " + " | ".join(cells) + " |")
if os.path.exists(f"{work}/procs-1"):
    print("\nprocesses one step started (strace -f, execve that succeeded)")
    print("| revision | treeloop | git | other | treeloop commands |")
    print("| --- | ---: | ---: | ---: | --- |")
    for i in range(1, n + 1):
        t, g, other, which = (open(f"{work}/procs-{i}").read().split("\n") + [""] * 4)[:4]
        print(f"| {names[i - 1]} | {t} | {g} | {other} | {which} |")
if ajv:
    print("| ajv-cli (3 runs) | - | " + " | ".join(f"{statistics.median(av[s]):.1f}" if av[s] else "-" for s in sizes) + " |")
PY
