#!/usr/bin/env bash
# How much .runner/ grows per step: STEPS no-op steps of runner-step (an
# agent that says done at once, the guard `true`) on a repository of 100
# files with a NODES-node tree (bench/gentree), for each REV given (a
# commit or branch of this repository, built from `git archive`; "." is
# the checkout as it is). For each it prints the median growth of
# .runner/ per step (bytes on disk by `du -sb`, apparent sizes), the
# same less the session's own logs (executor.log, events.jsonl,
# guard.log, output.json, results/, witness/), the median size of each
# file of an iteration directory, and the median growth of .git/ beside
# it. What an iteration keeps should grow with the change, not with the
# tree.
# Usage: bench/runner-growth.sh [STEPS] [NODES] [REV...]   (defaults: 5 6000 .)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
steps=${1:-5}
nodes=${2:-6000}
shift 2 || shift $#
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(.)
src=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/treeloop-runner-growth.XXXXXX")
trap 'rm -rf "$work"' EXIT
export RUNNER_SANDBOX=${RUNNER_SANDBOX:-none}
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print 0}'; }
bench_agent "$work/agent"
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=$((steps + 10))
session_logs='executor.log events.jsonl guard.log output.json results witness'

# build REV DIR: the commands of REV in DIR/bin.
build() {
  local rev=$1 out=$2 tree=$src
  if [ "$rev" != . ]; then
    tree=$out/src
    mkdir -p "$tree"
    git -C "$src" archive "$rev" | tar -x -C "$tree"
  fi
  (cd "$tree" && CGO_ENABLED=0 go build -ldflags="-s -w" -o "$out/bin/" ./cmd/... ./bench/gentree)
  install -m 0755 "$tree/tools/runner-step" "$tree/tools/runner-loop" "$out/bin/"
  # The helpers both scripts source, in the revisions that have them.
  if [ -e "$tree/tools/treeloop-sh-setup" ]; then
    install -m 0644 "$tree/tools/treeloop-sh-setup" "$out/bin/"
  fi
}

# measure REV: STEPS steps with REV's commands; prints the figures.
measure() {
  local rev=$1 out repo d i r0 r1 g0 g1 logs
  out=$work/$(echo "$rev" | tr -c 'A-Za-z0-9\n' _)
  mkdir -p "$out"
  build "$rev" "$out"
  repo=$out/repo
  mkdir -p "$repo"
  (
    export PATH="$out/bin:$PATH"
    cd "$repo"
    git init -q -b main
    bench_files 100
    git add -A && git -c gc.auto=0 commit -qm initial
    printf '# Node 0\n\nDeliver part 0 of the benchmark goal, with tests.\n' > "$work/goal.md"
    runner-init --goal "$work/goal.md" >/dev/null 2>"$out/init.err"
    gentree -n "$nodes" -passed 0 > .runner/state/tree.json
    sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
    git add -A && git commit -qm 'bench: the tree and the guard'
    runner-start --id run-growth --no-baseline >/dev/null 2>>"$out/init.err"
    : > "$out/growth"
    for i in $(seq 1 "$steps"); do
      r0=$(du -sb .runner | cut -f1); g0=$(du -sb .git | cut -f1)
      runner-step > "$out/step.out" || { cat "$out/step.out" >&2; exit 1; }
      r1=$(du -sb .runner | cut -f1); g1=$(du -sb .git | cut -f1)
      d=.runner/iterations/run-growth/$(printf %04d "$i")
      logs=0
      for f in $session_logs; do
        [ ! -e "$d/$f" ] || logs=$((logs + $(du -sb "$d/$f" | cut -f1)))
      done
      echo "$((r1 - r0)) $((r1 - r0 - logs)) $((g1 - g0))" >> "$out/growth"
      (cd "$d" && find . -type f -printf '%P %s\n') >> "$out/files"
    done
  )
  printf '%s: .runner/ %s B/step, less the session logs %s B/step; .git/ %s B/step\n' "$rev" \
    "$(cut -d' ' -f1 "$out/growth" | median)" "$(cut -d' ' -f2 "$out/growth" | median)" "$(cut -d' ' -f3 "$out/growth" | median)"
  cut -d' ' -f1 "$out/files" | sort -u | while read -r f; do
    printf '  %-24s %s B\n' "$f" "$(awk -v f="$f" '$1 == f {print $2}' "$out/files" | median)"
  done
}

echo "runner growth: $steps steps, a $nodes-node tree; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for rev in "${revs[@]}"; do
  measure "$rev"
done
