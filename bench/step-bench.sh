#!/usr/bin/env bash
# Runner overhead per iteration: everything runner-step does except the
# agent and the guard, measured with a 1,000-node tree, a no-op agent and
# the guard `true`, on a repository of 1,000 files and on one of 50,000
# files (FILES), side by side with the bare git floor of the same repository
# in the same run (git status --porcelain, git add -A, git commit of one
# changed file), and the composition floor: the step's own commands
# started with --version and doing nothing; beside it the Go start floor
# (as many starts of a Go binary that does nothing) and the time the step
# spends in fsync (strace, one more step), which DESIGN.md's atomic
# writes (temp file, fsync, rename, fsync dir) ask for. The overhead is
# timed on untraced steps; between them, as many steps run with
# RUNNER_TRACE=1 for the per-command table: the median over those steps of
# each command's wall time (from its launch, lib/trace) and of the git
# processes each one started.
# Then agent-exec's peak RSS when the agent prints 1 GiB, and the size of
# its capped log.
# Usage: bench/step-bench.sh [ITERATIONS] [FILES...]   (defaults: 21 1000 50000)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
iters=${1:-21}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 50000)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... ./bench/gentree ./bench/gostart
export PATH="$work/bin:$PWD/tools:$PATH"
# No sandbox unless RUNNER_SANDBOX=bwrap (runner-init would write bwrap where
# it works): the overhead of the runner itself, comparable across builds.
export RUNNER_SANDBOX=${RUNNER_SANDBOX:-none}
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
bench_agent "$work/agent"
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=100000
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# setup FILES: a repository of FILES small Go files in directories of 50,
# packed, initialised for a run with a 1,000-node tree.
setup() {
  local files=$1 repo=$work/repo-$1
  mkdir -p "$repo"
  cd "$repo"
  git init -q -b main
  bench_files "$files"
  # Packed, as a real repository of that size is: the initial commit's
  # loose objects would otherwise start git gc --auto in the background,
  # and it would run during the measured steps.
  git add -A && git -c gc.auto=0 commit -qm initial && git gc -q
  runner-init --goal <(printf '# Bench\n\nBench.\n') >/dev/null
  gentree -n 1000 -passed 0 > .runner/state/tree.json
  sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
  runner-start --id run-bench >/dev/null
}

# measure FILES: ITERATIONS steps, then ITERATIONS floors; writes
# $work/result-FILES (overhead, step, floor medians) and the traces.
measure() {
  local files=$1 i t0 t1 meta inner
  local over=() total=() floor=()
  : > "$work/trace-$files"
  # Steps alternate: one traced (RUNNER_TRACE=1, for the per-command
  # table), one timed as a user runs it, untraced (the trace's own cost,
  # a few ms of bash wrappers, stays out of the overhead).
  for i in $(seq 1 "$iters"); do
    RUNNER_TRACE=1 runner-step >/dev/null 2>"$work/step.err"
    sed "s/^/step=$i /" "$work/step.err" >> "$work/trace-$files"
    t0=$(ms); runner-step >/dev/null; t1=$(ms)
    meta=.runner/iterations/run-bench/$(printf %04d "$((2 * i))")/meta.json
    inner=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["agent"]["duration_ms"] + (m["guard_run"] or {"duration_ms":0})["duration_ms"])' "$meta")
    total+=($((t1 - t0))); over+=($((t1 - t0 - inner)))
  done
  for i in $(seq 1 "$iters"); do
    echo "$i" > src/d1/touched.txt
    t0=$(ms); git status --porcelain >/dev/null; git add -A; git commit -qm "floor $i"; t1=$(ms)
    floor+=($((t1 - t0)))
  done
  # The composition floor: the step's own commands (as its last trace
  # names them, each cmd= line to its binary), each started from bash and
  # exiting at once (--version): what any step composed of them pays before
  # doing anything (DESIGN "One step, composed").
  local bins=() name b
  while read -r name; do
    for b in "$work"/bin/*; do
      case $name in "$(basename "$b")"|"$(basename "$b")"-*) bins+=("$b"); break ;; esac
    done
  done < <(grep -v ' in=[^ ]*$' "$work/trace-$files" | sed -n "s/^step=$iters trace: cmd=\([^ ]*\) .*/\1/p")
  local procs=() gostart=()
  for i in $(seq 1 "$iters"); do
    t0=$(ms); for b in "${bins[@]}"; do "$b" --version >/dev/null; done; t1=$(ms)
    procs+=($((t1 - t0)))
    t0=$(ms); for b in "${bins[@]}"; do "$work/bin/gostart"; done; t1=$(ms)
    gostart+=($((t1 - t0)))
  done
  echo "${#bins[@]}" > "$work/procs-$files"
  # fsync: one more step under strace, each fsync's time (-T) summed.
  local fsync="- -"
  if command -v strace >/dev/null; then
    git reset -q --hard
    strace -f -T -e trace=fsync,fdatasync -o "$work/fsync-$files" runner-step >/dev/null 2>&1 || true
    fsync=$(grep -o '<[0-9.]*>$' "$work/fsync-$files" | tr -d '<>' | awk '{s += $1; n++} END {printf "%d %.1f", n, s * 1000}')
  fi
  printf '%s %s %s %s %s %s\n' "$(printf '%s\n' "${over[@]}" | median)" "$(printf '%s\n' "${total[@]}" | median)" "$(printf '%s\n' "${floor[@]}" | median)" "$(printf '%s\n' "${procs[@]}" | median)" "$(printf '%s\n' "${gostart[@]}" | median)" "$fsync" > "$work/result-$files"
}

for files in "${sizes[@]}"; do
  setup "$files"
  measure "$files"
done
echo "load average after the steps: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$iters" "${sizes[@]}" <<'PY'
import re, statistics, sys
work, iters, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
res = {s: open(f"{work}/result-{s}").read().split() for s in sizes}
print(f"\nrunner overhead per iteration (median of {iters} steps; 1,000-node tree, no-op agent, guard true)")
print("| files | overhead ms | whole step ms | git floor ms | overhead/floor | composition floor ms | (git + composition floor)/git floor | Go start floor ms | fsync ms (calls) | (git + Go start + fsync)/git floor | (git + composition + fsync)/git floor |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for s in sizes:
    o, t, f, p, g = (float(x) for x in res[s][:5])
    n_sync, t_sync = res[s][5:7]
    least = f"{(f + g + float(t_sync)) / f:.2f}x" if t_sync != "-" else "-"
    composed = f"{(f + p + float(t_sync)) / f:.2f}x" if t_sync != "-" else "-"
    print(f"| {int(s):,} | {o:g} | {t:g} | {f:g} | {o/f:.2f}x | {p:g} | {(f+p)/f:.2f}x | {g:g} | {t_sync} ({n_sync}) | {least} | {composed} |")
n = open(f"{work}/procs-{sizes[0]}").read().strip()
print(f"(composition floor: the step's {n} commands started from bash with --version, no work; Go start floor: {n} starts of a Go binary that does nothing; fsync: the time one step spends in fsync (strace -T), which DESIGN.md's atomic writes ask for. The last two columns are the least overhead/floor a step of {n} Go commands that keeps those writes could reach: started as the least Go binary starts, and as these commands start)")
# Per command: the median over steps of the sum of its lines in one step;
# git lines are grouped by the command that ran them.
rows, per = [], {}
for s in sizes:
    steps = {}
    for line in open(f"{work}/trace-{s}"):
        m = re.match(r"step=(\d+) trace: (cmd|git)=(\S+) ms=([\d.]+)(?: exit=\d+)?(?: by=(\S+))?(?: in=(\S+))?", line)
        if not m:
            continue
        step, kind, name, ms, by, inside = m.groups()
        key = name if kind == "cmd" else f"  git {name} (by {by})"
        if inside:
            key = f"{name} (in {inside})"
        d = steps.setdefault(step, {})
        c = d.setdefault(key, [0.0, 0])
        c[0] += float(ms); c[1] += 1
    per[s] = steps
    for d in steps.values():
        for k in d:
            if k not in rows:
                rows.append(k)
print(f"\nper command, median ms per step (count per step); git lines under the command that ran them")
print("| command | " + " | ".join(f"{int(s):,} files" for s in sizes) + " |")
print("| --- |" + " --- |" * len(sizes))
for k in rows:
    cells = []
    for s in sizes:
        vals = [d[k][0] if k in d else 0.0 for d in per[s].values()]
        cnts = [d[k][1] if k in d else 0 for d in per[s].values()]
        cells.append(f"{statistics.median(vals):.1f} ({statistics.median(cnts):g})")
    print(f"| {k} | " + " | ".join(cells) + " |")
for s in sizes:
    procs = [sum(c[1] for k, c in d.items() if not k.startswith("  git") and " (in " not in k) for d in per[s].values()]
    gits = [sum(c[1] for k, c in d.items() if k.startswith("  git")) for d in per[s].values()]
    print(f"{int(s):,} files: {statistics.median(procs):g} treeloop processes and {statistics.median(gits):g} git processes per step")
# The step's own git: every git process its commands ran, summed per
# traced step (those that run side by side too), against the git floor;
# with the composition floor and fsync, what a step that runs these git
# processes could reach at least.
for s in sizes:
    o, t, f, p, g = (float(x) for x in res[s][:5])
    t_sync = res[s][6]
    gm = statistics.median([sum(c[0] for k, c in d.items() if k.startswith("  git")) for d in per[s].values()])
    composed = f", with the composition floor and fsync {(gm + p + float(t_sync)) / f:.2f}x" if t_sync != "-" else ""
    print(f"{int(s):,} files: the step's git processes take {gm:.0f} ms (median of the traced steps, summed), {gm / f:.2f}x the git floor{composed}; the overhead is {o / f:.2f}x")
PY

# agent-exec with an agent that prints 1 GiB (in the last repository).
cat > "$work/loud" <<'SH'
#!/bin/sh
cat >/dev/null
head -c 1073741824 /dev/zero | tr '\0' 'x'
echo '{"status":"done","summary":"loud","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/loud"
git reset -q --hard
n=$(python3 -c 'import json; print(json.load(open(".runner/state/run_state.json"))["next_iter"])')
sel=$(tree-select | tr ' ' '\n' | sed -n 's/^id=//p')
iter-log begin --selected "$sel" >/dev/null
dir=.runner/iterations/run-bench/$(printf %04d "$n")
context-write --iter "$dir" >/dev/null
RUNNER_AGENT_BIN=$work/loud /usr/bin/time -f '%M' -o "$work/rss" agent-exec --iter "$dir" >/dev/null
echo "agent-exec, agent printing 1 GiB: peak RSS $(( $(cat "$work/rss") / 1024 )) MiB; executor.log $(wc -c < "$dir/executor.log") bytes (cap $(sed -n 's/^executor_output_limit_bytes = //p' .runner/state/config.toml))"
