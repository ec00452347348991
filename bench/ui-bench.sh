#!/usr/bin/env bash
# ui-bench: runner-ui's figures as a whole process. A repository with a
# 10,000-node tree (bench/gentree) and 1,000 finished iterations of one
# run; runner-ui serves it with one event stream open. Prints the time of
# /api/tree (unchanged, and rewritten before each request) and
# /api/iterations (median of 20, curl's time_total), the
# server's peak and current RSS after the requests, and its CPU time over
# 10 s of idling with the stream open.
# Usage: bench/ui-bench.sh [NODES] [ITERATIONS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
nodes=${1:-10000}
iters=${2:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/ui-bench.XXXXXX")
trap 'kill "$ui" "$sse" 2>/dev/null || true; rm -rf "$work"' EXIT
ui=""; sse=""
(cd "$src" && CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/runner-ui ./bench/gentree)
repo=$work/repo
mkdir -p "$repo/.runner/state"
"$work/bin/gentree" -n "$nodes" > "$repo/.runner/state/tree.json"
printf '{"run_id": "run-big", "next_iter": %d, "last_status": null, "last_summary": null, "last_guard": null, "last_iter": null, "last_node": null}\n' "$((iters + 1))" > "$repo/.runner/state/run_state.json"
for i in $(seq 1 "$iters"); do
  d=$(printf '%s/.runner/iterations/run-big/%04d' "$repo" "$i")
  mkdir -p "$d"
  printf '{"version": 1, "run_id": "run-big", "iteration": %d, "node_id": "n000001", "node_path": "root/n000001", "mode": "execute", "status": "done", "result": "passed", "guard": "pass", "agent_error": false, "reasons": [], "started_at": "2026-01-02T03:04:05Z", "ended_at": "2026-01-02T03:05:05Z", "duration_ms": 60000, "agent": {"backend": "claude", "usage": {"input_tokens": %d, "output_tokens": 200, "cached_tokens": 0, "cost_usd": 0.01}}}\n' "$i" "$((1000 + i))" > "$d/meta.json"
  head -c 20000 /dev/zero | tr '\0' 'g' | fold -w 99 > "$d/guard.log"
done
echo "ui-bench: $(du -sh "$repo/.runner/state/tree.json" | cut -f1) tree of $nodes nodes, $iters iterations"

"$work/bin/runner-ui" -C "$repo" > "$work/url" 2>/dev/null &
ui=$!
until [ -s "$work/url" ]; do sleep 0.05; done
url=$(cat "$work/url")
curl -sN "${url}events" > /dev/null &
sse=$!

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() {
  for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' "$1"; done | awk '{printf "%.1f\n", $1 * 1000}' | median
}
echo "api/tree:        median $(timeit "${url}api/tree") ms (unchanged: from memory)"
tree=$repo/.runner/state/tree.json
for _ in $(seq 20); do
  cp "$tree" "$tree.new" && mv "$tree.new" "$tree"
  curl -s -o /dev/null -w '%{time_total}\n' "${url}api/tree"
done | awk '{printf "%.1f\n", $1 * 1000}' | median | sed 's/^/api\/tree:        median /; s/$/ ms (rewritten before each request)/' 
echo "api/iterations:  median $(timeit "${url}api/iterations") ms"
echo "api/iterations/run-big/500/guard.log?tail=120: median $(timeit "${url}api/iterations/run-big/500/guard.log?tail=120") ms"
grep -E '^Vm(HWM|RSS)' "/proc/$ui/status" | awk '{printf "%s %.1f MiB\n", $1, $2 / 1024}'
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$ui/stat"; }
c0=$(cpu)
sleep 10
c1=$(cpu)
echo "idle CPU over 10 s with a stream open: $(( (c1 - c0) * 1000 / ticks )) ms"
