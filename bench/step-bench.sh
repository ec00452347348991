#!/usr/bin/env bash
# Runner overhead per iteration: everything runner-step does except the
# agent and the guard, measured on a repository of 1,000 files with a
# 1,000-node tree, a no-op agent and the guard `true`; beside it the bare
# git floor in the same repository (git status --porcelain, git add -A,
# git commit of one changed file). Then agent-exec's peak RSS when the agent
# prints 1 GiB, and the size of its capped log.
# Usage: bench/step-bench.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/... ./bench/gentree
export PATH="$work/bin:$PWD/tools:$PATH"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

repo=$work/repo
mkdir -p "$repo"
cd "$repo"
git init -q -b main
for d in $(seq 1 20); do
  mkdir -p "src/d$d"
  for f in $(seq 1 50); do printf 'package d%d\n\n// F%d is file %d.\nconst F%d = %d\n' "$d" "$f" "$f" "$f" "$f" > "src/d$d/f$f.go"; done
done
printf 'ci:\n    @true\n' > justfile
git add -A && git commit -qm initial
cat > "$work/agent" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"status":"done","summary":"no-op","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/agent"
runner-init --goal <(printf '# Bench\n\nBench.\n') >/dev/null
"$work/bin/gentree" -n 1000 > .runner/state/tree.json
sed -i 's/^command = \["just", "ci"\]$/command = ["true"]/' .runner/state/config.toml
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=100000
runner-start --id run-bench >/dev/null

over=(); total=()
for i in $(seq 1 "$iters"); do
  t0=$(ms); runner-step >/dev/null; t1=$(ms)
  meta=.runner/iterations/run-bench/$(printf %04d "$i")/meta.json
  inner=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["agent"]["duration_ms"] + (m["guard_run"] or {"duration_ms":0})["duration_ms"])' "$meta")
  total+=($((t1 - t0))); over+=($((t1 - t0 - inner)))
done
floor=()
for i in $(seq 1 "$iters"); do
  echo "$i" > src/d1/touched.txt
  t0=$(ms); git status --porcelain >/dev/null; git add -A; git commit -qm "floor $i"; t1=$(ms)
  floor+=($((t1 - t0)))
done
o=$(printf '%s\n' "${over[@]}" | median); t=$(printf '%s\n' "${total[@]}" | median); f=$(printf '%s\n' "${floor[@]}" | median)
echo "runner overhead per iteration (median of $iters, 1,000 files, 1,000-node tree): ${o} ms (whole step ${t} ms)"
echo "bare git floor (status + add + commit), same repository: ${f} ms; overhead/floor = $(python3 -c "print('%.2f' % ($o/$f))")x"

# agent-exec with an agent that prints 1 GiB.
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
