#!/usr/bin/env bash
# A long run: STEPS no-op steps of runner-loop (a no-op agent that says
# done, the guard `true`) on a repository of FILES files with a task tree
# of NODES nodes (bench/gentree -passed 0: every leaf open, so every step
# passes one more), with git's default settings: nothing packed at the
# start, so the loose objects pass gc.auto during the run and git's
# housekeeping runs between steps, as on a user's repository.
# It prints
#   - step failures: iterations that did not end done with guard=pass, and
#     a loop that did not end at --max-steps;
#   - false guard failures: guard=fail with a guard that cannot fail;
#   - the growth of the step's overhead: each step's wall time (between the
#     loop's commit lines) less its agent's and guard's time (meta.json),
#     the median of the last 20 against the median of the first 20; and
#     the same for the CPU time the loop's processes used per step, which
#     a busy machine inflates less than the wall time;
#   - the growth side by side: SOAK_SIDE_STEPS (20) steps of runner-step
#     in the soaked repository and as many in its twin (a copy taken as the
#     run started), alternately, each step's overhead as above: the state's
#     own growth, which a drift of the machine over the run (other load,
#     CPU clock, caches) does not move, as it moves the first 20 against
#     the last 20;
#   - the RSS of the long-lived process (runner-loop's shell, sampled every
#     second) and the peak RSS of any process the loop started;
#   - the size of .runner/ and .git/ per step.
# Exit 1 when a step failed or a guard failed falsely.
# Usage: bench/soak.sh [STEPS] [FILES] [NODES]   (defaults: 2000 1000 6000)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
steps=${1:-2000}
files=${2:-1000}
nodes=${3:-6000}
work=$(mktemp -d "${TMPDIR:-/tmp}/treeloop-soak.XXXXXX")
sampler=""
cleanup() {
  [ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... ./bench/gentree
install -m 0755 tools/runner-step tools/runner-loop "$work/bin/"
install -m 0644 tools/treeloop-sh-setup "$work/bin/" # the helpers both source
# Git's defaults: no system or user configuration, a fresh HOME.
mkdir -p "$work/home"
export PATH="$work/bin:$PATH" HOME="$work/home" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=soak GIT_AUTHOR_EMAIL=soak@example.com GIT_COMMITTER_NAME=soak GIT_COMMITTER_EMAIL=soak@example.com
bench_agent "$work/agent"
side=${SOAK_SIDE_STEPS:-20}
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=$((steps + side + 10))
# The sandbox a user gets (runner-init's auto: bwrap where it works), unless
# RUNNER_SANDBOX chooses one.
export RUNNER_SANDBOX=${RUNNER_SANDBOX:-auto}
echo "soak: $steps steps, $files files, a $nodes-node tree, git's default settings, sandbox $RUNNER_SANDBOX; load average $(cut -d' ' -f1-3 /proc/loadavg)"

repo=$work/repo
mkdir -p "$repo"
cd "$repo"
git init -q -b main
bench_files "$files"
git add -A
git commit -qm initial
# The goal is gentree's root, so runner-start takes the tree as it is.
printf '# Node 0\n\nDeliver part 0 of the benchmark goal, with tests.\n' > "$work/goal.md"
runner-init --goal "$work/goal.md" >/dev/null
echo "soak: $(grep '^mode = ' .runner/state/config.toml | head -1)"
gentree -n "$nodes" -passed 0 > .runner/state/tree.json
sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
git add -A
git commit -qm 'soak: the tree and the guard'
runner-start --id run-soak --no-baseline >/dev/null
# The twin: a copy of the repository as the run starts. After the loop,
# steps alternate between the soaked repository and the twin: the growth
# side by side, which the machine's drift over a long run (other load,
# its clock, its caches) moves alike in both.
cp -a "$repo" "$work/twin"
runner_start=$(du -sb .runner | cut -f1)
git_start=$(du -sb .git | cut -f1)

# The loop, its lines time-stamped as they come (a line every 100 steps
# on stderr); its shell's RSS sampled.
mkfifo "$work/lines"
# Each line gets the wall clock and the CPU time (ticks) of runner-loop's
# waited-for children so far.
n=0
lp=""
while IFS= read -r line; do
  [ -n "$lp" ] || lp=$(cat "$work/loop.pid" 2>/dev/null || true)
  cpu=0
  [ -z "$lp" ] || cpu=$(awk '{print $16 + $17}' "/proc/$lp/stat" 2>/dev/null || echo 0)
  printf '%s %s %s\n' "$EPOCHREALTIME" "$cpu" "$line"
  case $line in "loop: run="*) n=$((n + 1)); [ $((n % 100)) -ne 0 ] || echo "soak: $n steps" >&2 ;; esac
done < "$work/lines" > "$work/loop.out" &
reader=$!
start=$EPOCHREALTIME
/usr/bin/time -f '%M' -o "$work/peak-rss" runner-loop --max-steps "$steps" > "$work/lines" 2> "$work/loop.err" &
timer=$!
loop_pid=""
until [ -n "$loop_pid" ] || ! kill -0 "$timer" 2>/dev/null; do
  loop_pid=$(pgrep -P "$timer" || true)
  [ -n "$loop_pid" ] || sleep 0.05
done
echo "$loop_pid" > "$work/loop.pid"
(
  while kill -0 "$loop_pid" 2>/dev/null; do
    awk '/^VmRSS:/ {print $2}' "/proc/$loop_pid/status" 2>/dev/null || true
    sleep 1
  done
) > "$work/loop-rss" &
sampler=$!
wait "$timer" || true
wait "$reader" || true
wait "$sampler" 2>/dev/null || true
sampler=""
runner_end=$(du -sb .runner | cut -f1)
git_end=$(du -sb .git | cut -f1)
packs=$(find .git/objects/pack -name '*.pack' | wc -l)
loose=$(git count-objects | cut -d' ' -f1)
# SIDE steps in each, alternately: a line "soaked|twin MS ITER" per step.
: > "$work/side"
for _ in $(seq "$side"); do
  for which in soaked twin; do
    dir=$repo
    [ "$which" = soaked ] || dir=$work/twin
    s=$EPOCHREALTIME
    (cd "$dir" && runner-step > "$work/side-out" 2>> "$work/side-err") || true
    e=$EPOCHREALTIME
    iter=$(sed -n 's/^step: begin .* iter=\([0-9]*\) .*/\1/p' "$work/side-out")
    echo "$which $s $e ${iter:-0}" >> "$work/side"
  done
done

python3 - "$work" "$steps" "$start" "$runner_start" "$runner_end" "$git_start" "$git_end" "$packs" "$loose" "$(getconf CLK_TCK)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import json, os, re, statistics, sys
work, steps, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
runner_start, runner_end, git_start, git_end, packs, loose, tck = map(int, sys.argv[4:11])
load = sys.argv[11]
lines = [l.rstrip("\n").split(" ", 2) for l in open(f"{work}/loop.out")]
commits, cpus, last = [], [], ""
for t, cpu, l in lines:
    m = re.match(r"loop: run=\S+ iter=(\d+) node=\S+ status=(\S+) guard=(\S+)$", l)
    if m:
        commits.append((float(t), int(m.group(1)), m.group(2), m.group(3)))
        cpus.append(int(float(cpu)))
    last = l
if not commits:
    # Nothing to measure: say why the loop stopped.
    err = open(f"{work}/loop.err").read().splitlines()
    print(f"steps committed: 0 of {steps}; the loop's last line: {last}")
    print("the loop's stderr ends with:\n  " + "\n  ".join(err[-5:]))
    sys.exit(1)
failed = [c for c in commits if (c[2], c[3]) != ("done", "pass")]
false_guard = [c for c in commits if c[3] == "fail"]
ended_right = last == f"loop: limit reason=max-steps steps={steps}"
over, prev = [], start
for t, it, _, _ in commits:
    meta = json.load(open(f"{work}/repo/.runner/iterations/run-soak/{it:04d}/meta.json"))
    inner = (meta.get("agent") or {}).get("duration_ms", 0) + (meta.get("guard_run") or {}).get("duration_ms", 0)
    over.append((t - prev) * 1000 - inner)
    prev = t
n = min(20, len(over))
first, lastn = statistics.median(over[:n]), statistics.median(over[-n:])
cpu_step = [(b - a) * 1000 / tck for a, b in zip(cpus, cpus[1:])] or [0]
m = min(20, len(cpu_step))
cfirst, clast = statistics.median(cpu_step[:m]), statistics.median(cpu_step[-m:])
rss = [int(x) for x in open(f"{work}/loop-rss").read().split()] or [0]
peak = int(open(f"{work}/peak-rss").read().split()[-1])
done = len(commits)
print(f"steps committed: {done} of {steps}; the loop's last line: {last}")
print(f"step failures: {len(failed) + (0 if ended_right else 1)}" + ("" if ended_right else " (the loop did not end at --max-steps)"))
for c in failed[:5]:
    print(f"  iter {c[1]}: status={c[2]} guard={c[3]}")
print(f"false guard failures: {len(false_guard)}")
print(f"step overhead (wall): median of the first {n} {first:.0f} ms, of the last {n} {lastn:.0f} ms: growth {100 * (lastn - first) / first:+.0f}% (load average at the end {load})")
print(f"step CPU time (the loop's processes): median of the first {m} {cfirst:.0f} ms, of the last {m} {clast:.0f} ms: growth {100 * (clast - cfirst) / max(cfirst, 1):+.0f}%")
print(f"runner-loop RSS: {rss[0] / 1024:.1f} MiB at the start, {rss[-1] / 1024:.1f} MiB at the end, at most {max(rss) / 1024:.1f} MiB; peak RSS of any process of the loop: {peak / 1024:.1f} MiB")
per = max(done, 1)
print(f".runner/: {runner_start:,} bytes at the start, {runner_end:,} at the end: {(runner_end - runner_start) / per:,.0f} bytes per step")
# Side by side: each step's overhead as above, in the soaked repository
# and in the twin, alternately.
side = {"soaked": [], "twin": []}
for l in open(f"{work}/side"):
    which, s, e, it = l.split()
    d = f"{work}/repo" if which == "soaked" else f"{work}/twin"
    try:
        meta = json.load(open(f"{d}/.runner/iterations/run-soak/{int(it):04d}/meta.json"))
    except (OSError, ValueError):
        side.setdefault("failed", []).append(which)
        continue
    inner = (meta.get("agent") or {}).get("duration_ms", 0) + (meta.get("guard_run") or {}).get("duration_ms", 0)
    side[which].append((float(e) - float(s)) * 1000 - inner)
if side["soaked"] and side["twin"]:
    a, b = statistics.median(side["twin"]), statistics.median(side["soaked"])
    print(f"step overhead side by side ({len(side['soaked'])} steps each, alternately): the twin (the repository as the run started) {a:.0f} ms, the soaked repository {b:.0f} ms: growth {100 * (b - a) / a:+.0f}%")
if side.get("failed"):
    print(f"side-by-side steps that left no meta.json: {len(side['failed'])}")
print(f".git/: {git_start:,} bytes at the start, {git_end:,} at the end: {(git_end - git_start) / per:,.0f} bytes per step ({packs} packs, {loose} loose objects left)")
sys.exit(1 if failed or false_guard or not ended_right or side.get("failed") else 0)
PY
