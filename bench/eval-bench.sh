#!/usr/bin/env bash
# The eval harness's own overhead per run beside the loop's time: RUNS runs
# of a one-iteration case (a no-op command agent, the guard `true`, one
# file_exists check), one at a time, then the shipped cases once each. The
# harness's share of a run (workspace, git, runner-init, config, runner-start,
# artifacts, checks) is meta.json's duration_ms.harness = total - loop.
# Usage: bench/eval-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
src=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/...
export PATH="$work/bin:$src/tools:$PATH"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field NAME FILE...: the integer "NAME" of each meta.json's duration_ms
# (iterations: the top-level count).
field() {
  local k=$1; shift
  for f in "$@"; do
    if [ "$k" = iterations ]; then tr -d '\n ' < "$f" | grep -o '"iterations":[0-9]*' | cut -d: -f2
    else tr -d '\n ' < "$f" | grep -o '"duration_ms":{[^}]*}' | grep -o "\"$k\":[0-9]*" | cut -d: -f2; fi
  done
}
report() {
  local label=$1; shift
  printf '%-28s runs=%-3d total %6s ms  loop %6s ms  harness %5s ms (median; setup %s, capture %s, checks %s)\n' "$label" "$#" \
    "$(field total "$@" | median)" "$(field loop "$@" | median)" "$(field harness "$@" | median)" \
    "$(field setup "$@" | median)" "$(field capture "$@" | median)" "$(field checks "$@" | median)"
}

mkdir -p "$work/p/eval/cases/noop"
cd "$work/p"
printf 'ci:\n    @true\n' > eval/cases/noop/justfile
cat > eval/cases/noop/agent <<'SH'
#!/usr/bin/env bash
cat >/dev/null
touch done.txt
echo '{"status":"done","summary":"done","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x eval/cases/noop/agent
cat > eval/cases/noop.toml <<'TOML'
[case]
id = "noop"
goal = "# No-op\n\nTouch done.txt."
fixture = "noop"
root_next = "execute"
[backends.scripted]
backend = "command"
bin = "noop/agent"
[[checks]]
type = "file_exists"
path = "done.txt"
TOML
eval-run --id bench --runs "$runs" >/dev/null 2>&1
report "noop (1 iteration)" eval/results/noop/bench/scripted/*/meta.json

cd "$src"
eval-run --results "$work/r" --workspaces "$work/w" --id shipped >/dev/null 2>&1
for d in "$work"/r/*/shipped/scripted/1; do
  c=${d#"$work"/r/}; c=${c%%/*}
  report "$c ($(field iterations "$d/meta.json") iterations)" "$d/meta.json"
done
