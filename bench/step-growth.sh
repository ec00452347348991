#!/usr/bin/env bash
# Whether a step's cost grows with the run's length, side by side in one
# run: STEPS no-op steps of runner-step (an agent that says done at once,
# the guard `true`) on a repository of FILES files with a task tree of
# NODES nodes (bench/gentree), packed as bench/step-bench.sh packs it. It
# prints
#   - the median overhead (a step's wall time less its agent's and guard's,
#     meta.json) of the first 20 steps and of the last 20, untraced;
#   - the same side by side, which the machine's load cannot tell apart:
#     20 more steps of the run, alternating with the first 20 steps of a
#     copy of the repository taken before the run's first step;
#   - per command (RUNNER_TRACE=1 on every tenth step, not counted above):
#     its median ms near the start and near the end, so a command whose
#     time grows with the run stands out; and the same side by side, ten
#     traced steps of each copy alternating after the untraced ones;
#   - the processes one step starts (strace -f, execve), by program, at
#     the start and at the end;
#   - the git floor of the same repository (git status --porcelain, git
#     add -A, git commit of one changed file) and the overhead against it;
#   - runner-status and iter-log list at iteration 50 and at iteration
#     5,000 of a synthetic run (one real iteration directory copied).
# Usage: bench/step-growth.sh [STEPS] [FILES] [NODES]   (defaults: 1000 1000 6000)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
steps=${1:-1000}
files=${2:-1000}
nodes=${3:-6000}
work=$(mktemp -d "${TMPDIR:-/tmp}/treeloop-growth.XXXXXX")
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... ./bench/gentree
install -m 0755 tools/runner-step tools/runner-loop "$work/bin/"
install -m 0644 tools/treeloop-sh-setup "$work/bin/" # the helpers both source
export PATH="$work/bin:$PATH" RUNNER_SANDBOX=${RUNNER_SANDBOX:-none}
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
bench_agent "$work/agent"
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=$((steps * 2 + 100))
echo "step growth: $steps steps, $files files, a $nodes-node tree; load average $(cut -d' ' -f1-3 /proc/loadavg)"

repo=$work/repo
mkdir -p "$repo"
cd "$repo"
git init -q -b main
bench_files "$files"
git add -A && git -c gc.auto=0 commit -qm initial && git gc -q
printf '# Node 0\n\nDeliver part 0 of the benchmark goal, with tests.\n' > "$work/goal.md"
runner-init --goal "$work/goal.md" >/dev/null
gentree -n "$nodes" -passed 0 > .runner/state/tree.json
sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
git add -A && git commit -qm 'bench: the tree and the guard'
runner-start --id run-growth --no-baseline >/dev/null
cp -a "$repo" "$work/fresh"

# execs N: one step under strace; its programs, one a line, in $work/exec-N.
execs() {
  strace -f -qq -e trace=execve -e signal=none -o "$work/strace-$1" runner-step >/dev/null
  sed -n 's/^[0-9]* *execve("\([^"]*\)".* = 0$/\1/p' "$work/strace-$1" | xargs -n1 basename > "$work/exec-$1"
}
have_strace=0
command -v strace >/dev/null && have_strace=1
ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
# overhead DIR: one untraced step in DIR; prints its overhead (ms).
overhead() {
  local t0 t1 it meta inner
  t0=$(ms); runner-step -C "$1" > "$work/step.out"; t1=$(ms)
  it=$(sed -n 's/^step: run=.* iter=\([0-9]*\) .*/\1/p' "$work/step.out")
  meta=$1/.runner/iterations/run-growth/$(printf %04d "$it")/meta.json
  inner=$(jq '.agent.duration_ms + (.guard_run.duration_ms // 0)' "$meta")
  echo $((t1 - t0 - inner))
}
: > "$work/over"
: > "$work/trace"
i=0
while [ "$i" -lt "$steps" ]; do
  i=$((i + 1))
  if [ "$i" = 3 ] && [ "$have_strace" = 1 ]; then execs start; fi
  if [ $((i % 10)) = 5 ]; then
    RUNNER_TRACE=1 runner-step >/dev/null 2> "$work/step.err"
    sed "s/^/step=$i /" "$work/step.err" >> "$work/trace"
  fi
  echo "$i $(overhead "$repo")" >> "$work/over"
  [ $((i % 100)) != 0 ] || echo "step growth: $i steps" >&2
done
[ "$have_strace" = 0 ] || execs end
# Side by side: the run's next 20 steps and a fresh run's first 20, in turn.
for i in $(seq 1 20); do
  echo "end $(overhead "$repo")"
  echo "fresh $(overhead "$work/fresh")"
done > "$work/side"
# The same traced (RUNNER_TRACE=1), for the per-command table side by
# side: which command's time the run's length moved.
: > "$work/trace-side"
for i in $(seq 1 10); do
  for copy in end fresh; do
    d=$repo
    [ "$copy" = end ] || d=$work/fresh
    RUNNER_TRACE=1 runner-step -C "$d" >/dev/null 2> "$work/step.err"
    sed "s/^/$copy step=$i /" "$work/step.err" >> "$work/trace-side"
  done
done
for i in $(seq 1 21); do
  echo "$i" > src/d1/touched.txt
  t0=$(ms); git status --porcelain >/dev/null; git add -A; git commit -qm "floor $i"; t1=$(ms)
  echo $((t1 - t0))
done > "$work/floor"

# runner-status and iter-log list at iteration 50 and 5,000, side by side
# (each command alternating between the two): two copies of the
# repository, in each the first iteration's meta.json copied (not its tree
# snapshots: 5,000 of a 6,000-node tree's would fill a disk) and
# run_state.json moved on.
git reset -q --hard
synthetic() {
  local n=$1 dir=$work/status-$1 rd d
  cp -a "$repo" "$dir"
  rd=$dir/.runner/iterations/run-growth
  for d in "$rd"/*/; do
    [ "${d%/}" = "$rd/$(printf %04d 1)" ] || rm -rf "$d"
  done
  for i in $(seq 2 "$n"); do
    d=$rd/$(printf %04d "$i")
    mkdir "$d"
    sed "s/\"iteration\": 1,/\"iteration\": $i,/" "$rd/0001/meta.json" > "$d/meta.json"
  done
  jq --argjson n "$n" '.next_iter = $n + 1 | .last_iter = $n' "$dir/.runner/state/run_state.json" > "$work/rs" && cp "$work/rs" "$dir/.runner/state/run_state.json"
}
synthetic 50
synthetic 5000
for cmd in "runner-status" "iter-log list"; do
  for _ in $(seq 21); do
    for n in 50 5000; do
      # shellcheck disable=SC2086  # the command's words
      t0=${EPOCHREALTIME/./}; (cd "$work/status-$n" && $cmd >/dev/null) || true; t1=${EPOCHREALTIME/./}
      printf '%s\t%s\t%s\n' "$cmd" "$n" $((t1 - t0))
    done
  done
done > "$work/status-raw"
python3 - "$work" <<'PY' > "$work/status"
import collections, statistics, sys
t = collections.defaultdict(list)
for l in open(f"{sys.argv[1]}/status-raw"):
    c, n, us = l.rstrip("\n").split("\t")
    t[(c, int(n))].append(int(us))
for (c, n), v in sorted(t.items(), key=lambda kv: (kv[0][0] != "runner-status", kv[0][1])):
    print(f"{c}\t{n}\t{statistics.median(v) / 1000:.1f}")
PY

python3 - "$work" "$have_strace" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import collections, re, statistics, sys
work, have_strace, load = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
over = [int(l.split()[1]) for l in open(f"{work}/over")]
n = min(20, len(over))
first, last = statistics.median(over[:n]), statistics.median(over[-n:])
floor = statistics.median(int(l) for l in open(f"{work}/floor"))
print(f"\nsteps: {len(over)}; load average at the end {load}")
print(f"overhead: median of steps 1-{n} {first:g} ms, of steps {len(over) - n + 1}-{len(over)} {last:g} ms: {last / first:.2f}x")
side = {"end": [], "fresh": []}
for l in open(f"{work}/side"):
    k, v = l.split()
    side[k].append(int(v))
se, sf = statistics.median(side["end"]), statistics.median(side["fresh"])
print(f"side by side, alternating: a fresh run's steps 1-20 {sf:g} ms, this run's steps {len(over) + 1}-{len(over) + 20} {se:g} ms: {se / sf:.2f}x")
print(f"git floor (status + add + commit): {floor:g} ms; overhead/floor {first / floor:.2f}x (first {n}), {last / floor:.2f}x (last {n})")
steps = collections.defaultdict(lambda: collections.defaultdict(float))
for line in open(f"{work}/trace"):
    m = re.match(r"step=(\d+) trace: (cmd|git)=(\S+) ms=([\d.]+)(?: exit=\d+)?(?: by=(\S+))?", line)
    if m:
        step, kind, name, ms, by = m.groups()
        steps[int(step)][name if kind == "cmd" else f"git {name} (by {by})"] += float(ms)
order = sorted(steps)
k = max(1, min(5, len(order) // 2))
head, tail = order[:k], order[-k:]
names = sorted({c for s in order for c in steps[s]})
print(f"\nper command, median ms of the traced steps {head[0]}-{head[-1]} and {tail[0]}-{tail[-1]}")
print("| command | start ms | end ms | growth |")
print("| --- | --- | --- | --- |")
for c in names:
    a = statistics.median(steps[s].get(c, 0.0) for s in head)
    b = statistics.median(steps[s].get(c, 0.0) for s in tail)
    print(f"| {c} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")
side_steps = {"end": collections.defaultdict(lambda: collections.defaultdict(float)), "fresh": collections.defaultdict(lambda: collections.defaultdict(float))}
for line in open(f"{work}/trace-side"):
    m = re.match(r"(end|fresh) step=(\d+) trace: (cmd|git)=(\S+) ms=([\d.]+)(?: exit=\d+)?(?: by=(\S+))?", line)
    if m:
        copy, step, kind, name, ms, by = m.groups()
        side_steps[copy][int(step)][name if kind == "cmd" else f"git {name} (by {by})"] += float(ms)
names = sorted({c for copy in side_steps.values() for s in copy.values() for c in s})
print(f"\nper command side by side, median ms of 10 traced steps each, alternating: a fresh run's first steps and this run's steps past {len(over) + 20}")
print("| command | fresh run ms | this run ms | growth |")
print("| --- | --- | --- | --- |")
for c in names:
    a = statistics.median(s.get(c, 0.0) for s in side_steps["fresh"].values())
    b = statistics.median(s.get(c, 0.0) for s in side_steps["end"].values())
    print(f"| {c} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")
if have_strace:
    for when in ("start", "end"):
        progs = collections.Counter(open(f"{work}/exec-{when}").read().split())
        tl = sum(v for p, v in progs.items() if p != "git")
        print(f"\nprocesses per step ({when}): {sum(progs.values())} ({progs.get('git', 0)} git, {tl} other): " + ", ".join(f"{p} {v}" for p, v in progs.most_common()))
print("\n| command | iteration | median ms |")
print("| --- | --- | --- |")
for line in open(f"{work}/status"):
    c, it, t = line.rstrip("\n").split("\t")
    print(f"| {c} | {int(it):,} | {t} |")
PY
