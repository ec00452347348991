#!/usr/bin/env bash
# Whole-process wall time of the operator's read commands on a large run:
# a 10,000-node tree and 1,000 committed iterations (one real runner-step,
# its iteration directory copied to 0002..1000 with meta.json renumbered,
# run_state.json at iteration 1,000, a run record). Prints the median of
# RUNS runs per command in ms. The target: runner-status within
# 50 ms.
# Usage: bench/status-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... ./bench/gentree
export PATH="$work/bin:$PWD/tools:$PATH"
# The repositories below choose no sandbox (runner-init would write bwrap
# where it works): this measures the runner itself.
export RUNNER_SANDBOX=none
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

repo=$work/repo
mkdir -p "$repo"
cd "$repo"
git init -q -b main
printf 'ci:\n    @true\n' > justfile
git add -A && git commit -qm initial
cat > "$work/agent" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"status":"retry","summary":"a summary of what the session did","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/agent"
runner-init --goal <(printf '# Bench\n\nBench.\n') >/dev/null
"$work/bin/gentree" -n 10000 > .runner/state/tree.json
sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
git add -A && git commit -qm tree
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=100000
runner-start --id run-bench >/dev/null
runner-step >/dev/null
runs_dir=.runner/iterations/run-bench
for i in $(seq 2 1000); do
  d=$runs_dir/$(printf %04d "$i")
  cp -r "$runs_dir/0001" "$d"
  sed -i "s/\"iteration\": 1,/\"iteration\": $i,/" "$d/meta.json"
done
sed -i 's/"next_iter": 2,/"next_iter": 1001,/; s/"last_iter": 1,/"last_iter": 1000,/' .runner/state/run_state.json
[ "$(runner-status --get iteration.last)" = 1000 ] || { echo "status-bench: the fixture is not at iteration 1000" >&2; exit 1; }
[ "$(runner-status --get recent.4.iter)" = 1000 ] || { echo "status-bench: recent iterations are wrong" >&2; exit 1; }

time_us() { # command...: wall times in µs, one a line
  for _ in $(seq "$runs"); do
    s=$(date +%s%N); "$@" >/dev/null || [ $? -le 3 ]; e=$(date +%s%N)
    echo $(( (e - s) / 1000 ))
  done
}
printf '%-36s %10s %10s\n' command "median ms" "min ms"
for cmd in "runner-status" "runner-status --json" "runner-status --get usage.cost_usd" "runner-status --runs" "iter-log list" "iter-log list --json" "iter-log show" "tree-select"; do
  # shellcheck disable=SC2086  # the command's words
  t=$(time_us $cmd)
  printf '%-36s %10s %10s\n' "$cmd" "$(median <<<"$t" | awk '{printf "%.1f", $1/1000}')" "$(sort -n <<<"$t" | head -1 | awk '{printf "%.1f", $1/1000}')"
done
